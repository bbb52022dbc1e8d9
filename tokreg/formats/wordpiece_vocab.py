"""A bare WordPiece vocabulary (BERT's `vocab.txt`): one token per line, id = line number.

The file holds no normalizer settings, so an import names them (algorithms/wordpiece/vocab_txt.py).
"""

from __future__ import annotations

from ..errors import InputError

#: The bracketed tokens BERT reserves; an import marks them special.
BERT_SPECIALS = ("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]")


def parse(raw: bytes, source: str) -> list[str]:
    """The tokens of a vocab.txt in id order; refuses blank lines, whitespace inside a token and
    repeated tokens, naming the line."""
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as e:
        raise InputError(f"{source} is not UTF-8 at byte {e.start}; is this a vocab.txt?") from None
    if lines and lines[-1] == "":
        lines.pop()
    vocab = [line.rstrip("\r") for line in lines]
    if not vocab:
        raise InputError(f"{source}: the vocabulary is empty")
    seen: dict[str, int] = {}
    for i, tok in enumerate(vocab):
        if not tok or any(c.isspace() for c in tok):
            raise InputError(f"{source}: line {i + 1} is not a token ({tok!r}); a vocab.txt has one token per line")
        if tok in seen:
            raise InputError(f"{source}: token {tok!r} appears on lines {seen[tok] + 1} and {i + 1}")
        seen[tok] = i
    return vocab
