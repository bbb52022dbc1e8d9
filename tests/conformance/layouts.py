"""The layouts of the conformance suite, one `Layout` entry each: how its reference file is
made (the way real files are made), how tokreg takes it in, and which library is the judge.

Adding a layout is one entry in `LAYOUTS`:

    Layout(
        "hf-clip-bpe",                 # the row's name (and the tests' parametrize id)
        build_clip,                    # (Context) -> Source; makes the files in ctx.folder
        fast=False,                    # True: also in the fast lane, on a CI-sized slice
        pending={"offsets-unk": "DECODE: offsets around unknowns"},  # see below
    )

and a builder that returns a `Source`:

    def build_clip(ctx: Context) -> Source:
        hf = tokenizers.Tokenizer(tokenizers.models.BPE(..., end_of_word_suffix="</w>"))
        hf.normalizer = tokenizers.normalizers.Sequence([...])
        ...                                                   # train on ctx.training_text()
        return hf_source(ctx, hf, roles={"unk_token": "<|endoftext|>", ...})

`hf_source` saves a `tokenizers.Tokenizer` with transformers' `save_pretrained` (so the live
column has an `AutoTokenizer` original) and imports its tokenizer.json; `Source(add, reference,
transformers_dir)` is the general form: `add(registry, name)` puts the version in the registry
(an import, or a training run for the tokreg-trained rows), `reference(registry, name)` gives
the judge (references.py), `transformers_dir` the folder `AutoTokenizer` reads, if any.

`pending` names the columns ("ids", "decode", "offsets", "export", "live"; "decode-unk" and
"offsets-unk" for the lines where the reference's ids hold an unknown token, "decode" and
"offsets" then meaning the other lines) that differ today
for a reason another change of issue 23 is fixing, with that change's name: the suite marks
those cases `xfail` with the reason, so they are reported; once the fix lands they XPASS
(listed in pytest's summary), and the entry is to be deleted. Nothing else may go there:
a difference that nobody is fixing stays a failing test.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from tokreg import BpeOptions, InputError, Registry, UnigramOptions, WordPieceOptions
from tokreg._core import PATTERNS

from ..conftest import CORPORA, data_file, head_lines
from . import references
from .references import Reference

#: the formats every version is exported to (each loaded in the library that reads it)
FORMATS = ("hf", "tiktoken", "sentencepiece", "tokreg")
EXT = {"hf": "json", "tiktoken": "tiktoken", "sentencepiece": "model", "tokreg": "tokreg.json"}
#: the model_max_length the transformers originals are saved with (short, so truncation bites)
MAX_LENGTH = 48


@dataclass
class Context:
    """What a builder gets: a folder of its own, and SentencePiece models by variant name
    (tests/spm_models.py: shared with the other SentencePiece tests, trained once a session)."""

    folder: Path
    spm: Callable[[str], Path]

    def training_text(self, size: int = 100_000) -> Path:
        """The first `size` bytes (whole lines) of every shared corpus, as one file."""
        path = self.folder / f"training-{size}.txt"
        if not path.exists():
            path.write_bytes(b"".join(head_lines(name, size) for name in CORPORA))
        return path


@dataclass(frozen=True)
class Source:
    add: Callable[[Registry, str], object]
    reference: Callable[[Registry, str], Optional[Reference]]
    transformers_dir: Optional[Path] = None
    #: False for a version tokreg trains itself (its import column is n/a)
    imported: bool = True


@dataclass(frozen=True)
class Layout:
    name: str
    build: Callable[[Context], Source]
    fast: bool = False
    pending: dict[str, str] = field(default_factory=dict)


# -- tiktoken rank files, with their presets ------------------------------------------------------


def _openai(name: str) -> Reference:
    """tiktoken's own Encoding for `name` (tiktoken_ext.openai_public), its rank loader pointed
    at the shared file: the pattern and special tokens are tiktoken's, not tokreg's."""
    import tiktoken

    public: Any = importlib.import_module("tiktoken_ext.openai_public")
    real = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda url, expected_hash=None: real(
        str(data_file(url.rsplit("/", 1)[-1])), expected_hash
    )
    try:
        spec = getattr(public, name)()
    finally:
        public.load_tiktoken_bpe = real
    return references.tiktoken_encoding(tiktoken.Encoding(**spec))


def tiktoken_preset(name: str) -> Callable[[Context], Source]:
    def build(ctx: Context) -> Source:
        path = data_file(f"{name}.tiktoken")
        return Source(lambda reg, ref: reg.import_tiktoken(ref, path, preset=name), lambda reg, ref: _openai(name))

    return build


def build_tekken(ctx: Context) -> Source:
    """tests/test_interop.py's tekken.json (cl100k's first ranks, 20 specials first): judged by
    tiktoken over the same ranks, its ids shifted past the specials."""
    import tiktoken

    from ..test_interop import SPECIALS, _tekken

    path = ctx.folder / "tekken.json"
    kept = _tekken(path)
    enc = tiktoken.Encoding("tekken", pat_str=PATTERNS["cl100k"], mergeable_ranks=kept, special_tokens={})
    plain = references.tiktoken_encoding(enc)

    def encode(texts: list[str]) -> list[references.Encoded]:
        return [([i + SPECIALS for i in ids], spans) for ids, spans in plain.encode(texts)]

    shifted = Reference("tiktoken", encode, lambda ids: enc.decode([i - SPECIALS for i in ids]), "bytes")
    return Source(lambda reg, ref: reg.import_tekken(ref, path), lambda reg, ref: shifted)


# -- tokenizer.json files built with the tokenizers API, saved by transformers ----------------------


def hf_source(ctx: Context, hf: Any, roles: dict[str, str], cls: str = "PreTrainedTokenizerFast") -> Source:
    """`hf` saved with transformers' `save_pretrained` (as `cls`, with `roles` and MAX_LENGTH),
    imported from the tokenizer.json it wrote."""
    transformers = importlib.import_module("transformers")
    folder = ctx.folder / "saved"
    fast = getattr(transformers, cls)(tokenizer_object=hf, model_max_length=MAX_LENGTH, **roles)
    fast.save_pretrained(str(folder))
    path = folder / "tokenizer.json"
    return Source(lambda reg, ref: reg.import_hf(ref, path), lambda reg, ref: references.hf_file(path), folder)


def build_gpt2(ctx: Context) -> Source:
    """GPT-2's layout: byte-level BPE (ByteLevel pre-tokenizer, decoder and post-processor),
    `<|endoftext|>` as its only special token, also used for padding."""
    import tokenizers

    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.post_processor = tokenizers.processors.ByteLevel(trim_offsets=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=2000,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train([str(ctx.training_text(50_000))], trainer)
    eot = "<|endoftext|>"
    return hf_source(
        ctx, hf, {"bos_token": eot, "eos_token": eot, "unk_token": eot, "pad_token": eot}, "GPT2TokenizerFast"
    )


def bert(lowercase: bool) -> Callable[[Context], Source]:
    """BERT's layout as real files have it: a WordPiece vocab.txt (trained with the tokenizers
    API), made into tokenizer.json by transformers' BertTokenizerFast (its converter: BertNormalizer,
    BertPreTokenizer, the [CLS] $A [SEP] template, the WordPiece decoder with cleanup)."""

    def build(ctx: Context) -> Source:
        import tokenizers
        from transformers import BertTokenizerFast

        trainer_tok = tokenizers.BertWordPieceTokenizer(lowercase=lowercase)
        trainer_tok.train([str(ctx.training_text())], vocab_size=3000, show_progress=False)
        trainer_tok.save_model(str(ctx.folder))
        folder = ctx.folder / "saved"
        BertTokenizerFast(
            str(ctx.folder / "vocab.txt"), do_lower_case=lowercase, model_max_length=MAX_LENGTH
        ).save_pretrained(str(folder))
        path = folder / "tokenizer.json"
        return Source(lambda reg, ref: reg.import_hf(ref, path), lambda reg, ref: references.hf_file(path), folder)

    return build


# -- SentencePiece models trained by sentencepiece ---------------------------------------------------


def spm(variant: str) -> Callable[[Context], Source]:
    """tests/spm_models.py's `variant`, imported with `import_sentencepiece`."""

    def build(ctx: Context) -> Source:
        path = ctx.spm(variant)
        return Source(lambda reg, ref: reg.import_sentencepiece(ref, path), lambda reg, ref: references.spm_file(path))

    return build


# -- versions trained by tokreg: judged by their own export where a library reads one ---------------


def trained(options: Any, judges: Sequence[str] = ("hf", "sentencepiece")) -> Callable[[Context], Source]:
    """A version trained by tokreg on the training slice; its judge is the first of `judges`
    that it exports to (`to_hf()` for hf, the exported .model for sentencepiece), else none."""

    def build(ctx: Context) -> Source:
        corpus = ctx.training_text()

        def judge(reg: Registry, ref: str) -> Optional[Reference]:
            for fmt in judges:
                try:
                    if fmt == "hf":
                        return references.hf_object(reg.load(ref).to_hf())
                    path = ctx.folder / f"judge.{EXT[fmt]}"
                    reg.export(ref, fmt, path)
                    return references.of_format(fmt, path, reg.load(ref))
                except InputError:
                    continue
            return None

        return Source(lambda reg, ref: reg.train(ref, [corpus], options), judge, imported=False)

    return build


# -- the common Hub layouts (tests/hf_layouts.py, tests/test_hf_layouts_bpe.py) ----------------------


def hub_unigram(converter: str, **model_options: Any) -> Callable[[Context], Source]:
    """A SentencePiece Unigram model trained here, made into tokenizer.json by transformers'
    converter `converter` (t5, xlm_r, albert: tests/hf_layouts.py), saved by save_pretrained."""

    def build(ctx: Context) -> Source:
        from .. import hf_layouts

        model = hf_layouts.train_model(ctx.folder / "spm.model", **model_options)
        hf = getattr(hf_layouts, converter)(model)
        roles = {"unk_token": "<unk>", "eos_token": "</s>", "pad_token": "</s>"}
        if converter == "albert":
            roles = {"unk_token": "<unk>", "pad_token": "<pad>", "cls_token": "[CLS]", "sep_token": "[SEP]"}
        return hf_source(ctx, hf, roles)

    return build


def hub_bpe(layout: str, roles: dict[str, str]) -> Callable[[Context], Source]:
    """A BPE layout of tests/test_hf_layouts_bpe.py (Qwen2, DeepSeek-V3, CLIP...), trained here
    with the tokenizers library's own trainer, saved by save_pretrained."""

    def build(ctx: Context) -> Source:
        from ..test_hf_layouts_bpe import LAYOUTS as BPE_LAYOUTS

        hf, trainer = BPE_LAYOUTS[layout]()
        hf.train([str(ctx.training_text())], trainer)
        return hf_source(ctx, hf, roles)

    return build


ENDOFTEXT = {"eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>"}

LAYOUTS = [
    Layout("tiktoken-cl100k", tiktoken_preset("cl100k_base")),
    Layout("tiktoken-o200k", tiktoken_preset("o200k_base")),
    Layout("tekken", build_tekken),
    Layout("hf-gpt2-bytelevel", build_gpt2, fast=True),
    Layout(
        "hf-bert-uncased",
        bert(lowercase=True),
        fast=True,
    ),
    Layout(
        "hf-bert-cased",
        bert(lowercase=False),
    ),
    Layout("spm-unigram-identity", spm("unigram")),
    Layout("spm-unigram-nmt_nfkc", spm("unigram-nmt_nfkc")),
    Layout("spm-unigram-bytes", spm("unigram-bytes"), fast=True),
    Layout("spm-bpe-byte_fallback", spm("bpe-llama"), fast=True),
    Layout("spm-bpe-plain", spm("bpe-plain")),
    Layout("spm-bpe-nfkc", spm("bpe-nfkc")),
    Layout(
        "trained-bpe-bytelevel",
        trained(BpeOptions(vocab_size=2000, special=("<|endoftext|>",))),
    ),
    Layout(
        "trained-bpe-char",
        trained(BpeOptions(vocab_size=1500, char_level=True, special=("<|end|>",))),
    ),
    Layout("trained-bpe-char-eow", trained(BpeOptions(vocab_size=1500, char_level=True, end_of_word_suffix="</w>"))),
    Layout(
        "trained-wordpiece",
        trained(
            WordPieceOptions(vocab_size=3000, special=("[PAD]", "[CLS]", "[SEP]", "[MASK]"), template="[CLS] $A [SEP]")
        ),
    ),
    Layout("trained-unigram", trained(UnigramOptions(vocab_size=3000, byte_fallback=True, special=("<s>", "</s>")))),
    Layout("hub-t5-unigram", hub_unigram("t5")),
    Layout("hub-xlm-r-unigram", hub_unigram("xlm_r")),
    Layout(
        "hub-albert-unigram",
        hub_unigram("albert", pad_id=0, unk_id=1, bos_id=-1, eos_id=-1, control_symbols="[CLS],[SEP],[MASK]"),
    ),
    Layout("hub-qwen2-bpe", hub_bpe("qwen2", ENDOFTEXT)),
    Layout("hub-deepseek-v3-bpe", hub_bpe("deepseek-v3", ENDOFTEXT)),
    Layout("hub-clip-bpe", hub_bpe("clip", {"unk_token": "<|endoftext|>", **ENDOFTEXT})),
]
BY_NAME = {layout.name: layout for layout in LAYOUTS}
