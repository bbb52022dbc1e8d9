"""A bare WordPiece vocabulary (BERT's `vocab.txt`): one token per line, id = line number.

The file holds no normalizer settings, so the import names them (`--lowercase` for uncased
models). Tokens in brackets that BERT reserves (`[UNK]`, `[CLS]`, `[SEP]`, `[PAD]`, `[MASK]`) and
any given with --special are marked special.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import InputError
from ..files import read_input
from ..result import TokenizerData, TokenRow
from ..trainers.wordpiece import WordPieceOptions, encoding_config, token_kind

BERT_SPECIALS = ("[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]")


def read(path: str | os.PathLike[str], opts: WordPieceOptions, specials: Sequence[str] = ()) -> TokenizerData:
    source = str(path)
    try:
        lines = read_input(path, "give the vocab.txt file").decode("utf-8").split("\n")
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
            raise InputError(
                f"{source}: line {i + 1} is not a token ({tok!r}); a vocab.txt has one token per line"
            )
        if tok in seen:
            raise InputError(f"{source}: token {tok!r} appears on lines {seen[tok] + 1} and {i + 1}")
        seen[tok] = i
    if opts.unk_token not in seen:
        raise InputError(
            f"{source}: the unknown token {opts.unk_token!r} is not in the vocabulary; name it with "
            "--unk-token"
        )
    special = set(BERT_SPECIALS) | set(specials) | {opts.unk_token}
    prefix = opts.continuing_prefix
    tokens = [TokenRow(id=i, bytes=t.encode("utf-8"), kind=token_kind(t, prefix, special)) for i, t in enumerate(vocab)]
    return TokenizerData(
        algorithm="wordpiece", config=encoding_config(opts), tokens=tokens, source="import:wordpiece"
    )
