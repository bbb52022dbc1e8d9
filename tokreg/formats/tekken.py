"""Mistral's tekken files (`tekken.json`): a tiktoken-style rank map with its split pattern and
special tokens in one JSON document, as mistral-common's `Tekkenizer` reads it.

The format, as this module reads it (mistral-common's `tokens/tokenizers/tekken.py`):

    {"config": {"pattern": REGEX, "default_vocab_size": V, "default_num_special_tokens": S,
                "num_vocab_tokens": N, "version": "v7", ...},
     "vocab": [{"rank": 0, "token_bytes": BASE64, "token_str": "..."|null}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...],
     ...}   (image / audio settings, which do not change text encoding, are ignored)

Ids: the special tokens take ids 0..S-1 (those the file lists, then `<SPECIAL_k>` fillers up to
S); the vocabulary is cut to its first V - S entries, entry k (rank k, entry k of the list, the
first 256 the single bytes) getting id S + k. Text is encoded by tiktoken's rule over those
ranks with the file's pattern; special tokens are never read from the text. A file without
`special_tokens` (versions up to v7) uses mistral-common's fixed list of 20 control tokens.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any

from ..errors import InputError
from . import strict_json

#: The special tokens of tekken files that do not list theirs (mistral-common, versions <= v7).
OLD_SPECIALS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)


@dataclass(frozen=True)
class Tekken:
    pattern: str
    #: token bytes -> id (the rank shifted past the special tokens)
    ranks: dict[bytes, int]
    #: special token text -> id
    specials: dict[str, int]
    version: str


def _int(v: Any, what: str, where: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InputError(f"{where}: {what} must be a non-negative integer, not {v!r:.40}")
    return v


def read(raw: bytes, where: str) -> Tekken:
    doc = strict_json.loads(raw, where, "tekken JSON file")
    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict) or not isinstance(doc.get("vocab"), list):
        raise InputError(f"{where}: not a tekken file (it needs a 'config' object and a 'vocab' list)")
    cfg = doc["config"]
    pattern = cfg.get("pattern")
    if not isinstance(pattern, str) or not pattern:
        raise InputError(f"{where}: config.pattern must be the split regex")
    n_special = _int(cfg.get("default_num_special_tokens"), "config.default_num_special_tokens", where)
    vocab_size = _int(cfg.get("default_vocab_size"), "config.default_vocab_size", where)
    version = str(cfg.get("version", ""))
    listed = doc.get("special_tokens")
    if listed is None:
        names = list(OLD_SPECIALS)
    elif isinstance(listed, list):
        names = []
        for k, t in enumerate(listed):
            if not isinstance(t, dict) or not isinstance(t.get("token_str"), str) or t.get("rank") != k:
                raise InputError(f"{where}: special_tokens[{k}] must be {{'rank': {k}, 'token_str': ...}}")
            names.append(t["token_str"])
    else:
        raise InputError(f"{where}: special_tokens must be a list")
    if len(set(names)) != len(names):
        raise InputError(f"{where}: a special token is listed twice")
    if len(names) > n_special:
        raise InputError(f"{where}: {len(names)} special tokens listed, but default_num_special_tokens is {n_special}")
    names += [f"<SPECIAL_{k}>" for k in range(len(names), n_special)]
    if len(set(names)) != n_special:
        raise InputError(f"{where}: a listed special token collides with a <SPECIAL_k> filler")
    inner = vocab_size - n_special
    if inner < 256 or inner > len(doc["vocab"]):
        raise InputError(
            f"{where}: default_vocab_size {vocab_size} minus {n_special} special tokens must be from 256 to the "
            f"{len(doc['vocab'])} vocabulary entries"
        )
    ranks: dict[bytes, int] = {}
    for k, entry in enumerate(doc["vocab"][:inner]):
        if not isinstance(entry, dict) or entry.get("rank") != k or not isinstance(entry.get("token_bytes"), str):
            raise InputError(f"{where}: vocab[{k}] must be {{'rank': {k}, 'token_bytes': BASE64, ...}}")
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except (binascii.Error, ValueError):
            raise InputError(f"{where}: vocab[{k}].token_bytes is not base64") from None
        if k < 256 and token != bytes([k]):
            raise InputError(f"{where}: vocab[{k}] must be the single byte {k}")
        if not token or token in ranks:
            raise InputError(f"{where}: vocab[{k}] is empty or repeats an earlier token")
        ranks[token] = n_special + k
    return Tekken(pattern, ranks, {s: i for i, s in enumerate(names)}, version)
