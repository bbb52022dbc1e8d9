"""Versions that descend from a version and keep every one of its ids: continued training on a
new corpus (`extend`) and user tokens appended (`add_tokens`), with the check that the base's
ids are kept (`ids_preserved`) and the count of lines of a check text whose encoding changed.

    base (name@N, K ids)  --extend corpus --add 5000-->  new (K + 5000 ids; ids 0..K-1 as before)

What "keeps every id" means, checked before anything is written: every base token has the same
id, bytes and kind in the new version (a special stays special at its id, unless the user asked
`renumber_specials`, which moves only the specials, after the new tokens), and the base's merges
are the new version's first merges, at the same ranks. The algorithm modules learn the new
tokens (`Algorithm.extend`, `Algorithm.add_tokens`); this module counts the corpus, refuses
what cannot be done in one line, and records where the version came from (its lineage).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from typing import Any, Optional, Union

from .. import algorithms
from ..data import FinishedVersion, Lineage, MergeRow, StoredVersion, TokenizerData, TokenRow, VersionInfo, finish
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError
from . import counting_local
from .corpus import Corpus, expand

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def extend(
    base: StoredVersion,
    corpus: Corpus,
    add: int,
    *,
    renumber_specials: bool = False,
    keep_text: Optional[PathLike] = None,
    check_text: Optional[PathLike] = None,
    threads: int = 0,
    memory_limit: Optional[int] = None,
    progress: Optional[algorithms.Progress] = None,
    objective: Optional[str] = None,
) -> FinishedVersion:
    """`base` + exactly `add` tokens learned from `inputs`, ready to record; refuses (nothing
    learned is kept) when the corpus supports fewer, saying how many it supports. With
    `keep_text`, no token is learned that would change how that text encodes (checked after:
    its changed lines, 0, are recorded); `check_text` only counts them. `objective` ranks the
    new merges of an algorithm that has several (WordPiece); it is recorded in the lineage."""
    if add < 1:
        raise InputError(f"--add must be at least 1, not {add}")
    if not corpus.inputs:
        raise InputError("give the new corpus: one or more files, folders or - for standard input")
    t0 = time.perf_counter()
    ref = base.info.ref
    base_data = base.data()
    algo = algorithms.of(base.info.algorithm, base.info.config)
    config = algo.model.parse_config(base_data.config)
    if algo.extender is None:
        raise InputError(
            f"{algo.model.title} versions cannot be extended by training; add tokens with `tokreg add-tokens`"
        )
    extender = algo.extender
    if objective is not None and objective not in extender.objectives:
        raise InputError(
            f"--objective {objective!r}: "
            + (
                f"{algo.model.title} extension ranks by one of {', '.join(extender.objectives)}"
                if extender.objectives
                else f"{algo.model.title} versions extend with their one ranking; leave --objective out"
            )
        )
    spec = extender.counting(config)
    counted = counting_local.count_sources(
        corpus.sources(), spec, threads=threads, memory_limit=memory_limit, progress=progress
    )
    where = ", ".join(str(os.fspath(i)) if isinstance(i, (str, os.PathLike)) else "<texts>" for i in corpus.inputs)
    if len(counted.counts) == 0:
        raise InputError(f"{where}: no text to learn from; nothing was written")
    keep: list[bytes] = []
    if keep_text is not None:
        pieces = counting_local.count_sources(expand([keep_text]), spec, threads=threads, memory_limit=memory_limit)
        keep = [piece for piece, _ in pieces.counts.items()]
    data = extender.extend(
        base_data, counted.counts, add, keep=keep, threads=threads, progress=progress, objective=objective
    )
    added = len(data.tokens) - len(base_data.tokens)
    if added < add:
        raise InputError(
            f"{where} supports only {added:,} new tokens for {ref} (asked --add {add:,}); nothing was written"
            + (f"; rerun with --add {added}" if added else "")
        )
    if renumber_specials:
        data = renumber(data, base_data)
    kept, why = ids_preserved(base_data, data)
    ordinary, why_ordinary = ids_preserved(base_data, data, specials=False)
    if not ordinary or (not kept and not renumber_specials):
        raise InputError(
            f"extending {ref} would move its ids ({why_ordinary or why}); nothing was written; please report this"
        )
    details: dict[str, Any] = {
        "added": added,
        "first_new_id": max(t.id for t in base_data.tokens) + 1,
        "ids_preserved": kept,
        "specials_renumbered": renumber_specials,
        "corpus": {
            "fingerprint": counted.corpus["fingerprint"],
            "files": counted.corpus["files"],
            "bytes": sum(f["size"] for f in counted.corpus["files"]),
            "distinct_pieces": len(counted.counts),
        },
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if objective is not None:
        details["objective"] = objective
    if keep_text is not None:
        details["keep_text"] = changed_lines(base_data, data, keep_text)
        if details["keep_text"]["changed_lines"]:
            raise InputError(
                f"extending {ref} changed {details['keep_text']['changed_lines']} lines of the kept text "
                f"{os.fspath(keep_text)!r}; nothing was written; please report this"
            )
    if check_text is not None:
        details["check_text"] = changed_lines(base_data, data, check_text)
    return _derived(data, base, "extended", details)


def base_objective(info: VersionInfo, run: Optional[dict[str, Any]], line: Lineage) -> Optional[str]:
    """What ranks the merges that extend a version, when the user names no --objective: for an
    algorithm with several (WordPiece), the one its own merges were ranked by: a trained
    version's recorded objective (a run recorded before objectives existed ranked by `ratio`),
    an extended version's recorded one (`ratio` before it was recorded: the only ranking
    extension had), and for any other version (imported, tokens added) the default objective.
    None for algorithms with one ranking."""
    algo = algorithms.of(info.algorithm, info.config)
    if algo.extender is None or not algo.extender.objectives:
        return None
    # WordPiece's training module only for an algorithm with objectives (lean imports).
    from ..algorithms.wordpiece.training import DEFAULT_OBJECTIVE, LEGACY_OBJECTIVE

    if run is not None:
        return str((run.get("config") or {}).get("objective", LEGACY_OBJECTIVE))
    if line.derivation == "extended":
        return str((line.details or {}).get("objective", LEGACY_OBJECTIVE))
    return DEFAULT_OBJECTIVE


def add_tokens(
    base: StoredVersion,
    tokens: Sequence[str],
    *,
    special: bool = False,
    check_text: Optional[PathLike] = None,
) -> FinishedVersion:
    """`base` + `tokens`, as special tokens (matched by the special-token rule in front of
    every encoder) or as ordinary tokens of the algorithm, with ids after the base's."""
    ref = base.info.ref
    if not tokens:
        raise InputError("give at least one token to add")
    if len(set(tokens)) != len(tokens):
        raise InputError("a token is given twice; give each once")
    base_data = base.data()
    algo = algorithms.of(base.info.algorithm, base.info.config)
    existing = {t.bytes: t.id for t in base_data.tokens}
    for t in tokens:
        if not t:
            raise InputError("an added token must not be empty")
        if t.encode("utf-8") in existing:
            raise InputError(f"{t!r} is already token {existing[t.encode('utf-8')]} of {ref}; nothing was written")
    if special:
        first = max(t.id for t in base_data.tokens) + 1
        rows = list(base_data.tokens) + [
            TokenRow(id=first + i, bytes=t.encode("utf-8"), kind=algo.model.special_kind) for i, t in enumerate(tokens)
        ]
        data = TokenizerData(
            algorithm=base_data.algorithm,
            config=dict(base_data.config),
            tokens=rows,
            merges=list(base_data.merges),
        )
    elif algo.extender is None:
        raise InputError(
            f"{algo.model.title} versions take added tokens as special tokens only; add them with --special"
        )
    else:
        data = algo.extender.add_tokens(base_data, tokens)
    kept, why = ids_preserved(base_data, data)
    if not kept:
        raise InputError(f"adding tokens to {ref} would move its ids ({why}); nothing was written; please report this")
    new_ids = {t.id for t in data.tokens} - {t.id for t in base_data.tokens}
    by_id = {t.id: t for t in data.tokens}
    details: dict[str, Any] = {
        "added": len(new_ids),
        "tokens": [by_id[i].bytes.decode("utf-8", "replace") for i in sorted(new_ids)],
        "special": special,
        "first_new_id": max(t.id for t in base_data.tokens) + 1,
        "ids_preserved": True,
    }
    if check_text is not None:
        details["check_text"] = changed_lines(base_data, data, check_text)
    return _derived(data, base, "added_tokens", details)


def _derived(data: TokenizerData, base: StoredVersion, derivation: str, details: dict[str, Any]) -> FinishedVersion:
    """`data` finished as a version descending from `base`: its source and lineage set."""
    lineage = {
        "parent_ref": base.info.ref,
        "parent_hash": base.info.content_hash,
        "derivation": derivation,
        "details": details,
    }
    return finish(dataclasses.replace(data, source=derivation, lineage=lineage))


def renumber(data: TokenizerData, base: TokenizerData) -> TokenizerData:
    """The special tokens moved after every other token (as a fresh training run lays them
    out); the ordinary tokens that were after them move down into their place. Only when asked:
    it changes the specials' ids, which a model trained on the base has learned."""
    specials = [t for t in data.tokens if t.kind == "special"]
    ordinary = [t for t in data.tokens if t.kind != "special"]
    base_ordinary = {t.id for t in base.tokens if t.kind != "special"}
    free = sorted({t.id for t in data.tokens} - base_ordinary)
    movable = [t for t in ordinary if t.id not in base_ordinary]
    remap: dict[int, int] = {t.id: t.id for t in ordinary if t.id in base_ordinary}
    for t, new_id in zip(movable + specials, free):
        remap[t.id] = new_id
    tokens = sorted(
        (TokenRow(id=remap[t.id], bytes=t.bytes, kind=t.kind, count=t.count, score=t.score) for t in data.tokens),
        key=lambda t: t.id,
    )
    merges = [
        MergeRow(
            rank=m.rank,
            left=remap[m.left],
            right=remap[m.right],
            result=remap[m.result],
            count=m.count,
            score=m.score,
            left_count=m.left_count,
            right_count=m.right_count,
        )
        for m in data.merges
    ]
    return TokenizerData(algorithm=data.algorithm, config=data.config, tokens=tokens, merges=merges, rounds=data.rounds)


def ids_preserved(base: TokenizerData, new: TokenizerData, *, specials: bool = True) -> tuple[bool, str]:
    """Whether `new` keeps every id of `base`: same bytes and kind at every base id (specials
    only when `specials`), and the base's merges as its first merges, at the same ranks.
    Returns (yes/no, the first difference found, for people)."""
    by_id = {t.id: t for t in new.tokens}
    for t in base.tokens:
        if t.kind in ("special", "control") and not specials:
            continue
        n = by_id.get(t.id)
        if n is None:
            return False, f"id {t.id} is gone"
        if n.bytes != t.bytes or n.kind != t.kind:
            return False, f"id {t.id} is {n.bytes!r:.40} ({n.kind}), was {t.bytes!r:.40} ({t.kind})"
    if len(new.merges) < len(base.merges):
        return False, f"{len(base.merges) - len(new.merges)} of the base's merges are gone"
    for m, o in zip(base.merges, new.merges):
        if (m.left, m.right, m.result) != (o.left, o.right, o.result):
            return False, f"merge {m.rank} is {o.left}+{o.right}->{o.result}, was {m.left}+{m.right}->{m.result}"
    return True, ""


def changed_lines(base: TokenizerData, new: TokenizerData, path: PathLike) -> dict[str, Any]:
    """How many lines of the text at `path` encode differently with `new` than with `base`
    (each line on its own, without its line end), and the first few of them by number."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(f"cannot read the check text {os.fspath(path)!r}: {e.strerror}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"the check text {os.fspath(path)!r} is not UTF-8 (byte {e.start})") from None
    a = Tokenizer.from_data(base, "base").encode_ordinary_batch(lines)
    b = Tokenizer.from_data(new, "new").encode_ordinary_batch(lines)
    changed = [i + 1 for i, (x, y) in enumerate(zip(a, b)) if x != y]
    return {
        "name": os.path.basename(os.fspath(path)),
        "lines": len(lines),
        "changed_lines": len(changed),
        "first_changed": changed[:5],
    }
