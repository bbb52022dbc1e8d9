"""A bare BERT `vocab.txt` as a WordPiece version (formats/wordpiece_vocab.py reads the file).
The file holds no normalizer settings: they come from the importer's options."""

from __future__ import annotations

from collections.abc import Sequence

from ...data import TokenizerData, TokenRow
from ...errors import InputError
from ...formats import wordpiece_vocab
from ..interfaces import VocabTxtCodec
from ..options import TrainOptions
from .model import token_kind
from .training import WordPieceOptions


class WordPieceVocabTxt(VocabTxtCodec):
    def read(self, raw: bytes, where: str, options: TrainOptions, specials: Sequence[str] = ()) -> TokenizerData:
        """A bare BERT `vocab.txt` with the normalizer settings in `options`. Tokens that BERT
        reserves (`[UNK]`, `[CLS]`, `[SEP]`, `[PAD]`, `[MASK]`) and `specials` are marked special."""
        assert isinstance(options, WordPieceOptions)
        vocab = wordpiece_vocab.parse(raw, where)
        if options.unk_token not in vocab:
            raise InputError(
                f"{where}: the unknown token {options.unk_token!r} is not in the vocabulary; name it with --unk-token"
            )
        special = set(wordpiece_vocab.BERT_SPECIALS) | set(specials) | {options.unk_token}
        prefix = options.continuing_prefix
        tokens = [
            TokenRow(id=i, bytes=t.encode("utf-8"), kind=token_kind(t, prefix, special)) for i, t in enumerate(vocab)
        ]
        return TokenizerData(
            algorithm="wordpiece", config=options.config().to_json(), tokens=tokens, source="import:wordpiece"
        )
