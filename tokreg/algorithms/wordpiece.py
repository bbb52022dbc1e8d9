"""WordPiece (BERT): BERT normalization and pre-tokenization, merges chosen by
count(ab) / (count(a) * count(b)) in training, and greedy longest-match-first encoding per word
over a trie (`_core.Encoder.wordpiece`), the unknown token for a word that cannot be covered.
Lossy: normalization, whitespace and punctuation splitting, the unknown token.

Ids: special tokens first (the unknown token, then --special in order), then the alphabet
(first characters, and `##`-prefixed continuation characters, sorted by UTF-8 bytes), then merge
results in the order learned. Ties: higher score, then higher pair count, then the smaller left
token's bytes, then the smaller right token's bytes. Every merge records its score and the
three counts behind it.

Config (hashed): {"normalizer": {clean_text, handle_chinese_chars, strip_accents, lowercase,
unicode_form}, "pre_tokenizer": "bert", "continuing_prefix", "unk_token",
"max_input_chars_per_word"}.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .. import _core
from ..data import MergeRow, TokenizerData, TokenRow
from ..errors import InputError
from ..formats import hf_json, wordpiece_vocab
from . import template
from .base import Algorithm, exact_keys
from .training import Progress, TrainOptions, flag

FORMS = ("none", "nfc", "nfkc", "nfd", "nfkd")
_HF_FORMS = {"NFC": "nfc", "NFKC": "nfkc", "NFD": "nfd", "NFKD": "nfkd"}


@dataclass(frozen=True)
class BertNormalizerConfig:
    clean_text: bool = True  # drop control characters, map whitespace to spaces
    handle_chinese_chars: bool = True  # isolate each CJK character as a word
    strip_accents: Optional[bool] = None  # None: strip exactly when lowercasing (BERT's rule)
    lowercase: bool = False
    unicode_form: Optional[str] = None  # applied before the BERT steps: nfc | nfkc | nfd | nfkd

    def to_json(self) -> dict[str, Any]:
        return {
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
            "unicode_form": self.unicode_form,
        }


@dataclass(frozen=True)
class WordPieceConfig:
    normalizer: BertNormalizerConfig
    continuing_prefix: str
    unk_token: str
    max_input_chars_per_word: int

    def to_json(self) -> dict[str, Any]:
        return {
            "normalizer": self.normalizer.to_json(),
            "pre_tokenizer": "bert",
            "continuing_prefix": self.continuing_prefix,
            "unk_token": self.unk_token,
            "max_input_chars_per_word": self.max_input_chars_per_word,
        }


@dataclass(frozen=True)
class WordPieceOptions(TrainOptions):
    """Options of a WordPiece training run (`--algo wordpiece`)."""

    run_name = "wordpiece"

    vocab_size: int
    lowercase: bool = flag(False, help="Lowercase the text (uncased BERT).")
    strip_accents: Optional[bool] = flag(
        None, name="--strip-accents/--keep-accents", help="Remove accents [default: when --lowercase, as BERT does]."
    )
    unicode_normalization: str = flag(
        "none", name="--normalization", choices=FORMS, help="Unicode normalization before the BERT steps."
    )
    clean_text: bool = True
    handle_chinese_chars: bool = True
    continuing_prefix: str = flag("##", name="--prefix", metavar="P", help="Continuation prefix.")
    unk_token: str = flag("[UNK]", metavar="T", help="Unknown token.")
    special: tuple[str, ...] = ()  # e.g. [CLS] [SEP] [PAD] [MASK]
    template: Optional[str] = None  # "[CLS] $A [SEP]": what add_special_tokens=True adds (template.py)
    min_frequency: int = 0
    limit_alphabet: Optional[int] = flag(None, metavar="N", help="Keep only the N most frequent characters.")
    max_input_chars_per_word: int = flag(
        100, name="--max-word-chars", metavar="N", help="Longer words encode as the unknown token."
    )
    max_token_length: int = flag(
        0, metavar="N", help="Never learn a token longer than N characters, prefix not counted (0: no limit)."
    )
    threads: int = 0
    memory_limit: Optional[int] = None  # bytes; None: the machine's default (training/budget.py)
    max_piece_bytes: int = 0  # words longer than this are cut when counting (0: no limit)
    sample_bytes: int = 0  # read only about this many bytes of text (0: all)

    def config(self) -> WordPieceConfig:
        """The encoding config these options give a trained (or vocab.txt-imported) version."""
        form = None if self.unicode_normalization == "none" else self.unicode_normalization
        return WordPieceConfig(
            normalizer=BertNormalizerConfig(
                self.clean_text, self.handle_chinese_chars, self.strip_accents, self.lowercase, form
            ),
            continuing_prefix=self.continuing_prefix,
            unk_token=self.unk_token,
            max_input_chars_per_word=self.max_input_chars_per_word,
        )


def token_kind(token: str, prefix: str, specials: set[str]) -> str:
    """A WordPiece token's kind, from the token alone (so imports hash like training output):
    special; char (one character, or the prefix and one character: the alphabet); merged."""
    if token in specials:
        return "special"
    body = token[len(prefix) :] if prefix and token.startswith(prefix) and token != prefix else token
    return "char" if len(body) == 1 else "merged"


class WordPiece(Algorithm[WordPieceConfig]):
    name = "wordpiece"
    stored_as = "wordpiece"
    title = "WordPiece"
    options_type = WordPieceOptions
    export_formats = ("hf",)

    def owns(self, config: Mapping[str, Any]) -> bool:
        return True

    def parse_config(self, raw: Mapping[str, Any]) -> WordPieceConfig:
        exact_keys(
            raw,
            {"normalizer", "pre_tokenizer", "continuing_prefix", "unk_token", "max_input_chars_per_word"},
            self.title,
            template.KEYS,
        )
        n = raw["normalizer"]
        if not isinstance(n, dict):
            raise InputError(f"this {self.title} version's normalizer config is {n!r:.40}; the version is damaged")
        exact_keys(n, {"clean_text", "handle_chinese_chars", "strip_accents", "lowercase", "unicode_form"}, self.title)
        if raw["pre_tokenizer"] != "bert":
            raise InputError(f"WordPiece pre-tokenizer {raw['pre_tokenizer']!r:.40} is not implemented by this tokreg")
        # Stored configs can come from a file (a tokreg file's content is only as good as its
        # hash): every value must have its type before it reaches the core.
        max_chars = raw["max_input_chars_per_word"]
        if (
            not all(isinstance(n[k], bool) for k in ("clean_text", "handle_chinese_chars", "lowercase"))
            or not isinstance(n["strip_accents"], (bool, type(None)))
            or n["unicode_form"] not in (None, *FORMS[1:])
            or not isinstance(raw["continuing_prefix"], str)
            or not raw["continuing_prefix"]
            or not isinstance(raw["unk_token"], str)
            or not isinstance(max_chars, int)
            or isinstance(max_chars, bool)
            or not 1 <= max_chars <= 2**32
        ):
            raise InputError(
                f"this {self.title} version's config has a setting of the wrong type; the version is damaged"
            )
        return WordPieceConfig(
            normalizer=BertNormalizerConfig(**n),
            continuing_prefix=str(raw["continuing_prefix"]),
            unk_token=str(raw["unk_token"]),
            max_input_chars_per_word=int(raw["max_input_chars_per_word"]),
        )

    def compile(self, content: bytes, config: WordPieceConfig) -> _core.Encoder:
        return _core.Encoder.wordpiece(
            content,
            config.unk_token,
            continuing_prefix=config.continuing_prefix,
            max_input_chars_per_word=config.max_input_chars_per_word,
            **config.normalizer.to_json(),
        )

    def lossless(self, config: WordPieceConfig) -> bool:
        return False

    # -- training -------------------------------------------------------------------------------

    def check(self, options: TrainOptions, sizes: Sequence[int]) -> None:
        assert isinstance(options, WordPieceOptions)
        opts = options
        opts.check_common()
        if opts.unicode_normalization not in FORMS:
            raise InputError(f"--normalization {opts.unicode_normalization!r} is not one of {', '.join(FORMS)}")
        if not opts.continuing_prefix:
            raise InputError("--prefix must not be empty (BERT uses '##')")
        specials = list(dict.fromkeys([opts.unk_token, *opts.special]))
        if min(sizes) <= len(specials):
            raise InputError(f"--vocab-size {min(sizes)} leaves no room beside {len(specials)} special tokens")

    def counting(self, options: TrainOptions) -> dict[str, Any]:
        assert isinstance(options, WordPieceOptions)
        normalizer = options.config().normalizer.to_json()
        return {"splitting": "bert", "normalizer": normalizer, "max_piece_bytes": options.max_piece_bytes}

    def utf8_hint(self, options: TrainOptions) -> Optional[str]:
        return "WordPiece trains on UTF-8 text; convert the file to UTF-8"

    def train_counts(
        self, counts: _core.Counts, options: TrainOptions, sizes: Sequence[int], progress: Optional[Progress] = None
    ) -> tuple[list[TokenizerData], dict[str, Any]]:
        """Trains to the largest size; each smaller one is a prefix of it (tokens in id order
        up to its size, and the merges that made them), which is what training to that size
        alone gives."""
        assert isinstance(options, WordPieceOptions)
        opts = options
        specials = list(dict.fromkeys([opts.unk_token, *opts.special]))
        out: dict[str, Any] = _core.train_wordpiece(
            counts,
            max(sizes),
            specials,
            continuing_prefix=opts.continuing_prefix,
            min_frequency=opts.min_frequency,
            limit_alphabet=opts.limit_alphabet,
            max_token_len=opts.max_token_length or None,
            threads=opts.threads,
            progress=progress,
        )
        merged = {m[2] for m in out["merges"]}
        tokens = []
        for i, (text, count) in enumerate(out["tokens"]):
            kind = "special" if i < len(specials) else "merged" if i in merged else "char"
            tokens.append(
                TokenRow(id=i, bytes=text.encode("utf-8"), kind=kind, count=count if kind != "special" else None)
            )
        if len(tokens) - len(specials) == 0:
            raise InputError("the corpus has no words after normalization; give files that contain text")
        alphabet = sum(1 for t in tokens if t.kind == "char")
        if len(specials) + alphabet > min(sizes):
            raise InputError(
                f"--vocab-size {min(sizes)} is smaller than the base alphabet: the corpus has {alphabet:,} "
                f"characters and continuation characters (+ {len(specials)} special tokens); raise --vocab-size "
                "or keep fewer characters with --limit-alphabet"
            )
        merges = [
            MergeRow(rank=k, left=a, right=b, result=z, count=pc, score=sc, left_count=lc, right_count=rc)
            for k, (a, b, z, sc, pc, lc, rc) in enumerate(out["merges"])
        ]
        config = opts.config().to_json()
        datas = []
        for size in sizes:
            n_merges = len(merges)
            if size < len(tokens):
                # The merges up to the one that made token `size - 1`: where a run to `size` stops.
                n_merges = next(k + 1 for k, m in enumerate(merges) if m.result == size - 1)
            datas.append(
                TokenizerData(algorithm="wordpiece", config=config, tokens=tokens[:size], merges=merges[:n_merges])
            )
        return datas, {"train_seconds": out["merge_seconds"], "distinct_pieces": out["distinct_words"]}

    # -- extending ----------------------------------------------------------------------------

    def extend_counting(self, config: WordPieceConfig) -> dict[str, Any]:
        return {"splitting": "bert", "normalizer": config.normalizer.to_json(), "max_piece_bytes": 0}

    def extend(
        self,
        base: TokenizerData,
        counts: _core.Counts,
        add: int,
        *,
        keep: Sequence[bytes] = (),
        threads: int = 0,
        progress: Optional[Progress] = None,
    ) -> TokenizerData:
        """Continues the WordPiece merges on the new corpus' words as the base segments them
        (greedy longest match, which is the state the base's own merges leave a word in),
        after first adding the characters the base lacks (`wordpiece::extend` in the core).
        A version imported from a bare vocab.txt has no merges, and extends the same way."""
        config = self.parse_config(base.config)
        by_id = {t.id: t for t in base.tokens}
        vocab = [
            by_id[i].bytes.decode("utf-8") if i in by_id and by_id[i].kind != "special" else ""
            for i in range(max(by_id) + 1)
        ]
        out: dict[str, Any] = _core.extend_wordpiece(
            vocab,
            counts,
            add,
            continuing_prefix=config.continuing_prefix,
            max_chars=config.max_input_chars_per_word,
            keep=[k.decode("utf-8", "replace") for k in keep],
            threads=threads,
            progress=progress,
        )
        first: int = out["first_new"]
        chars_end = first + out["new_symbols"]
        rows = [
            TokenRow(
                id=t.id,
                bytes=t.bytes,
                kind=t.kind,
                count=None if t.kind == "special" else out["tokens"][t.id][1],
                score=t.score,
            )
            for t in base.tokens
        ]
        rows += [
            TokenRow(id=i, bytes=text.encode("utf-8"), kind="char" if i < chars_end else "merged", count=count)
            for i, (text, count) in enumerate(out["tokens"][first:], start=first)
        ]
        start = len(base.merges)
        merges = list(base.merges) + [
            MergeRow(rank=start + k, left=a, right=b, result=z, count=pc, score=sc, left_count=lc, right_count=rc)
            for k, (a, b, z, sc, pc, lc, rc) in enumerate(out["merges"])
        ]
        return TokenizerData(algorithm=base.algorithm, config=dict(base.config), tokens=rows, merges=merges)

    def add_tokens(self, base: TokenizerData, tokens: Sequence[str]) -> TokenizerData:
        """Vocabulary entries after the base's (greedy longest match finds them); a token that
        continues a word carries the prefix (`##ing`)."""
        config = self.parse_config(base.config)
        first = max(t.id for t in base.tokens) + 1
        new = [
            TokenRow(id=first + i, bytes=t.encode("utf-8"), kind=token_kind(t, config.continuing_prefix, set()))
            for i, t in enumerate(tokens)
        ]
        return TokenizerData(
            algorithm=base.algorithm, config=dict(base.config), tokens=list(base.tokens) + new, merges=list(base.merges)
        )

    # -- other tools' files ---------------------------------------------------------------------

    def from_vocab_txt(
        self, raw: bytes, where: str, options: WordPieceOptions, specials: Sequence[str] = ()
    ) -> TokenizerData:
        """A bare BERT `vocab.txt` with the normalizer settings in `options`. Tokens that BERT
        reserves (`[UNK]`, `[CLS]`, `[SEP]`, `[PAD]`, `[MASK]`) and `specials` are marked special."""
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

    def export(self, fmt: str, data: TokenizerData, ref: str) -> bytes:
        """A tokenizer.json: BertNormalizer (after an optional NFC/NFKC/NFD/NFKD step),
        BertPreTokenizer, the WordPiece model and decoder; special tokens as added tokens."""
        if fmt != "hf":
            return super().export(fmt, data, ref)
        cfg = self.parse_config(data.config)
        n = cfg.normalizer
        bert = {
            "type": "BertNormalizer",
            "clean_text": n.clean_text,
            "handle_chinese_chars": n.handle_chinese_chars,
            "strip_accents": n.strip_accents,
            "lowercase": n.lowercase,
        }
        form = n.unicode_form
        normalizer = bert if not form else {"type": "Sequence", "normalizers": [{"type": form.upper()}, bert]}
        return hf_json.dumps(
            {
                "version": "1.0",
                "truncation": None,
                "padding": None,
                "added_tokens": hf_json.added_tokens(
                    (t.id, t.bytes.decode("utf-8")) for t in data.tokens if t.kind == "special"
                ),
                "normalizer": normalizer,
                "pre_tokenizer": {"type": "BertPreTokenizer"},
                "post_processor": template.hf_for(data),
                "decoder": {"type": "WordPiece", "prefix": cfg.continuing_prefix, "cleanup": True},
                "model": {
                    "type": "WordPiece",
                    "unk_token": cfg.unk_token,
                    "continuing_subword_prefix": cfg.continuing_prefix,
                    "max_input_chars_per_word": cfg.max_input_chars_per_word,
                    "vocab": {t.bytes.decode("utf-8"): t.id for t in data.tokens},
                },
            }
        )

    def reads_hf(self, model_type: str, doc: Mapping[str, Any]) -> bool:
        return model_type == "WordPiece"

    def from_hf(self, doc: Mapping[str, Any], model: Mapping[str, Any], where: str) -> TokenizerData:
        """Accepts exactly the pipelines tokreg's WordPiece encoder implements."""

        def refuse(what: str) -> InputError:
            return InputError(f"{where}: {what} is not supported by tokreg's WordPiece (nothing was imported)")

        norm = doc.get("normalizer")
        form = None
        if isinstance(norm, dict) and norm.get("type") == "Sequence":
            steps = norm.get("normalizers", [])
            if (
                not isinstance(steps, list)
                or len(steps) != 2
                or not isinstance(steps[0], dict)
                or (steps[0].get("type") not in _HF_FORMS)
            ):
                raise refuse(f"the normalizer sequence {str(steps)[:80]}")
            form, norm = _HF_FORMS[steps[0]["type"]], steps[1]
        if not isinstance(norm, dict) or norm.get("type") != "BertNormalizer":
            raise refuse(f"the normalizer {str(norm.get('type') if isinstance(norm, dict) else None)[:40]}")
        pre = doc.get("pre_tokenizer")
        if not isinstance(pre, dict) or pre.get("type") != "BertPreTokenizer":
            raise refuse(f"the pre-tokenizer {str(pre.get('type') if isinstance(pre, dict) else None)[:40]}")
        vocab = model.get("vocab")
        if (
            not isinstance(vocab, dict)
            or not vocab
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in vocab.values())
        ):
            raise InputError(f"{where}: the WordPiece model has no vocab of token -> id")
        ids = sorted(vocab.values())
        if ids != list(range(len(ids))):
            raise refuse("a vocab whose ids are not 0..n-1")
        if "" in vocab:
            raise InputError(f"{where}: the vocab has an empty token (id {vocab['']}); remove it")
        unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", "##")
        if not isinstance(unk, str) or unk not in vocab:
            raise InputError(f"{where}: the unknown token {unk!r:.40} is not in the vocab")
        if not isinstance(prefix, str) or not prefix:
            raise InputError(f"{where}: continuing_subword_prefix {prefix!r:.40} is not a non-empty string")
        max_chars = model.get("max_input_chars_per_word", 100)
        if not isinstance(max_chars, int) or isinstance(max_chars, bool) or not 1 <= max_chars <= 2**32:
            raise InputError(f"{where}: max_input_chars_per_word {max_chars!r:.40} is not a positive integer")
        flags = {k: norm.get(k, True) for k in ("clean_text", "handle_chinese_chars", "lowercase")}
        strip = norm.get("strip_accents")
        if not all(isinstance(v, bool) for v in flags.values()) or not isinstance(strip, (bool, type(None))):
            raise InputError(f"{where}: a BertNormalizer setting is not true, false (or null for strip_accents)")
        added = hf_json.read_added(doc, where, normalized_ok=False)
        if any(vocab.get(t) != i for i, t in added.items()):
            raise InputError(f"{where}: an added token is not in the vocab with its id; the file is damaged")
        specials = set(added.values())
        by_id = sorted(vocab.items(), key=lambda kv: kv[1])
        tokens = [TokenRow(id=i, bytes=t.encode("utf-8"), kind=token_kind(t, prefix, specials)) for t, i in by_id]
        config = WordPieceConfig(
            normalizer=BertNormalizerConfig(
                clean_text=flags["clean_text"],
                handle_chinese_chars=flags["handle_chinese_chars"],
                strip_accents=strip,
                lowercase=flags["lowercase"],
                unicode_form=form,
            ),
            continuing_prefix=prefix,
            unk_token=unk,
            max_input_chars_per_word=max_chars,
        )
        return TokenizerData(algorithm="wordpiece", config=config.to_json(), tokens=tokens, source="import:hf")


ALGORITHM = WordPiece()
