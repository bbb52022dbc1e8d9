"""`tokreg drop-residues`: a byte-level BPE version without its residues (issue 28, item 3c).

A residue (LiteToken, arXiv 2602.04706; tokreg/evaluation/residues.py) is a token that BPE's
merge loop forms on a text but seldom emits: F1 / (F1 + F2) below `below` (0.1), among the
tokens formed at least `min_seen` (10) times. The derived version (residue_free_model.py) takes
them out of the vocabulary the way PickyBPE removes a token (Chizhov et al., arXiv 2409.04599):
where the parent would emit one, it emits the token's parents instead.

What "keeps every other id where the algorithm allows it" means here: in BPE a residue is a
step of the merge loop towards longer tokens, so it cannot leave the merge table without
changing how those longer tokens are reached. It stays in the merge loop and only stops being
emitted. Then every other token keeps its id, and every text whose parent segmentation emits
no residue encodes to the same ids (the lineage records how many lines of the text changed).
The removed ids become holes (kind `removed`) rather than being renumbered away: renumbering
would move every id above the first hole, so a model or a dataset made with the parent would no
longer match; with holes, its embedding rows for the kept tokens stay where they are.

    >>> reg.drop_residues("gpt-mini@1", "gpt-mini", "held.txt")   # -> gpt-mini@2, lineage:
    ...  dropped residues from gpt-mini@1 (-594 tokens, ids kept)
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from ..algorithms import model_of, template
from ..algorithms.bpe.residue_free_model import ResidueFreeConfig
from ..data import FinishedVersion, StoredVersion, TokenizerData, finish
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from ..evaluation import residues
from ..evaluation.evaluate import Text

DERIVATION = "dropped_residues"


def require_byte_bpe(stored: StoredVersion, applies: str) -> None:
    """InputError unless `stored` is a byte-level BPE version; `applies` says what applies to them."""
    info = stored.info
    model = model_of(info.algorithm, info.config)
    if model.name != "byte_bpe":
        raise InputError(f"{info.ref} is {getattr(model, 'title', model.name)}; {applies}; nothing was written")


def drop_residues(stored: StoredVersion, text: Text, *, below: float, min_seen: int) -> FinishedVersion:
    """`stored` without the residues measured on `text`, as a version descending from it."""
    info = stored.info
    require_byte_bpe(
        stored,
        "dropping residues applies to byte-level BPE versions (trained or imported from .tiktoken/tokenizer.json)",
    )
    residues.check(below, min_seen)
    parent = Tokenizer.from_data(stored.data(), info.ref)
    rows = residues.measure(parent, text)
    gone = sorted(i for i, f, m in rows if f + m >= min_seen and f < below * (f + m))
    if not gone:
        raise InputError(f"{info.ref} has no residues on {text.name} (F1/(F1+F2) < {below}); nothing was written")
    drop = set(gone)
    data = stored.data()
    tokens = [dataclasses.replace(t, kind="removed", count=None) if t.id in drop else t for t in data.tokens]
    cfg = model_of(info.algorithm, info.config).parse_config(info.config)
    config = ResidueFreeConfig(cfg.pattern, tuple(gone), cfg.keep_gaps).to_json()
    config.update({k: v for k, v in info.config.items() if k in template.KEYS})
    new = dataclasses.replace(data, config=config, tokens=tokens, source=DERIVATION)
    lines = text.text.splitlines()
    before = parent.encode_ordinary_batch(lines)
    after = Tokenizer.from_data(new, "derived").encode_ordinary_batch(lines)
    changed = sum(a != b for a, b in zip(before, after))
    details: dict[str, Any] = {
        "removed": len(gone),
        "below": below,
        "min_seen": min_seen,
        "text": {"name": os.path.basename(text.name), "bytes": text.bytes, "lines": len(lines)},
        "ids_preserved": True,
        "holes": len(gone),
        "check_text": {"name": os.path.basename(text.name), "lines": len(lines), "changed_lines": changed},
    }
    return descendant(new, stored, details)


def descendant(new: TokenizerData, parent: StoredVersion, details: dict[str, Any]) -> FinishedVersion:
    """`new` finished as a version that dropped residues from `parent`, `details` in its lineage."""
    info = parent.info
    lineage = {"parent_ref": info.ref, "parent_hash": info.content_hash, "derivation": DERIVATION, "details": details}
    return finish(dataclasses.replace(new, lineage=lineage))
