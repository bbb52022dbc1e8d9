"""The Hub layouts of `tokenizer.json` that tests/test_hf_layouts*.py import, made as real files
are made: SentencePiece Unigram models trained here with `sentencepiece`, converted by
transformers' own converters (T5, XLM-R, ALBERT, and the generic SentencePiece converter), and
variants built with the `tokenizers` Python API. Plus `compare`, which counts the lines where
tokreg and `tokenizers` differ in ids, decode or offsets."""

from __future__ import annotations

import io
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

import pytest

from .conftest import CORPORA, data_file, head_lines, sweep_lines

spm = pytest.importorskip("sentencepiece")
tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("google.protobuf", reason="transformers' SentencePiece converters read .model files with protobuf")
convert = pytest.importorskip("transformers.convert_slow_tokenizer")


def train_model(path: Path, **options: Any) -> Path:
    """A small SentencePiece Unigram model trained on the head of the shared corpora."""
    text = b"".join(head_lines(n, 40_000) for n in ("dr.en.txt", "dr.zh-cn.txt", "kjv.txt")).decode()
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(text.splitlines()),
        model_writer=buf,
        model_type="unigram",
        vocab_size=1200,
        character_coverage=0.99,
        num_threads=1,
        minloglevel=2,
        **options,
    )
    path.write_bytes(buf.getvalue())
    return path


def _slow_tokenizer(model: Path, **attrs: Any) -> SimpleNamespace:
    """What a converter reads of a slow tokenizer: its vocab_file and a few settings."""
    sp = spm.SentencePieceProcessor(model_file=str(model))
    return SimpleNamespace(vocab_file=str(model), legacy=True, convert_tokens_to_ids=sp.piece_to_id, **attrs)


def t5(model: Path) -> Any:
    return convert.T5Converter(_slow_tokenizer(model, _extra_ids=5)).converted()


def xlm_r(model: Path) -> Any:
    conv = convert.XLMRobertaConverter(_slow_tokenizer(model))
    # XLM-R renumbers its first pieces (fairseq's order); the template names them by these ids.
    ids = {t: i for i, (t, _) in enumerate(conv.vocab(conv.proto))}
    conv.original_tokenizer.convert_tokens_to_ids = ids.__getitem__
    return conv.converted()


def albert(model: Path) -> Any:
    return convert.AlbertConverter(_slow_tokenizer(model, keep_accents=False, do_lower_case=True)).converted()


def generic(model: Path) -> Any:
    """transformers' converter for a SentencePiece model without a class of its own."""
    conv = convert.SpmConverter.__new__(convert.SpmConverter)
    with warnings.catch_warnings():
        # "byte fallback is not implemented": about the class's own path, not this one
        warnings.simplefilter("ignore", UserWarning)
        convert.SpmConverter.__init__(conv, _slow_tokenizer(model))
    vocab = [(p.piece, p.score) for p in conv.proto.pieces]
    return convert.SpmConverter.build_tokenizer_from_spm_proto(conv.proto, vocab)


def metaspace(scheme: str, split: bool) -> Callable[[Path], Any]:
    """T5's file with the Metaspace pre-tokenizer and decoder set through the tokenizers API."""

    def build(model: Path) -> Any:
        tk = t5(model)
        tk.pre_tokenizer = tokenizers.pre_tokenizers.Metaspace(prepend_scheme=scheme, split=split)
        tk.decoder = tokenizers.decoders.Metaspace(prepend_scheme=scheme, split=split)
        return tk

    return build


@dataclass
class Tally:
    """Lines compared and lines differing, by what differs."""

    lines: int = 0
    ids: int = 0
    decode: int = 0
    offsets: int = 0
    examples: list[str] = field(default_factory=list)

    @property
    def differing(self) -> int:
        return self.ids + self.decode + self.offsets

    def note(self, what: str, line: str, ours: Any, theirs: Any) -> None:
        setattr(self, what, getattr(self, what) + 1)
        if len(self.examples) < 3:
            self.examples.append(f"{what} {line[:60]!r}: tokreg {str(ours)[:120]} / tokenizers {str(theirs)[:120]}")


def compare(tok: Any, hf: Any, lines: Iterable[str], *, offsets: bool = True, decode: bool = True) -> Tally:
    """tokreg's `tok` against the `tokenizers.Tokenizer` `hf` on `lines`: ids (without the
    post-processor's specials), decode (specials kept, as tokreg decodes) and character offsets
    (`decode` / `offsets` false: ids only for those)."""
    t = Tally()
    for line in lines:
        t.lines += 1
        e = hf.encode(line, add_special_tokens=False)
        ids = tok.encode(line, allowed_special="all")
        if ids != e.ids:
            t.note("ids", line, ids, e.ids)
            continue
        ours, theirs = tok.decode(ids), hf.decode(e.ids, skip_special_tokens=False)
        if decode and ours != theirs:
            t.note("decode", line, repr(ours), repr(theirs))
        if offsets:
            spans = [tuple(o) for o in tok.encode_with_offsets(line, allowed_special="all").offsets]
            if spans != [tuple(o) for o in e.offsets]:
                t.note("offsets", line, spans, e.offsets)
    return t


class Built:
    """Layout files made on first use (`make(name, path)`), each imported once into one
    registry: a lane builds only the layouts it compares."""

    def __init__(self, folder: Path, make: Callable[[str, Path], None]):
        from tokreg import Registry

        self.folder, self.make = folder, make
        self.registry = Registry(folder / "r.db")
        self.hashes: dict[str, str] = {}

    def file(self, name: str) -> Path:
        path = self.folder / f"{name}.json"
        if not path.exists():
            self.make(name, path)
        return path

    def hf(self, name: str) -> Any:
        return tokenizers.Tokenizer.from_file(str(self.file(name)))

    def tok(self, name: str) -> Any:
        if name not in self.hashes:
            self.hashes[name] = self.registry.import_hf(name, self.file(name)).content_hash
        return self.registry.load(name)


def check(tally: Tally, what: str) -> None:
    """Prints the figures (run with -s to see them) and fails with the first examples."""
    print(
        f"\n{what}: {tally.lines} lines compared, {tally.ids} differ in ids, {tally.decode} in decode, "
        f"{tally.offsets} in offsets"
    )
    assert tally.differing == 0, "\n".join(tally.examples)


def corpus_lines(name: str, limit: Optional[int] = None) -> list[str]:
    """The first `limit` lines of a shared corpus, or (None) the lines a sweep compares
    (conftest.sweep_lines)."""
    if limit is None:
        return sweep_lines(name)
    return data_file(name).read_text(encoding="utf-8").split("\n")[:limit]


def check_hypothesis(tok: Any, hf: Any, text: Any, examples: int = 10) -> None:
    """`compare` on `examples` texts drawn from the strategy `text`."""
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(text)
    def run(t: str) -> None:
        tally = compare(tok, hf, [t])
        assert tally.differing == 0, "\n".join(tally.examples)

    run()


def check_export(built: Built, layout: str, folder: Path, lines: list[str]) -> None:
    """`export --format hf` and `to_hf()` give the original file's ids in `tokenizers` on
    `lines`, and `--format tokreg` and the exported tokenizer.json import with the same hash."""
    built.tok(layout)
    out = folder / "out.json"
    built.registry.export(layout, "hf", out)
    original = built.hf(layout)

    def ids(t: Any, x: str) -> list[int]:
        return list(t.encode(x, add_special_tokens=False).ids)

    exported = tokenizers.Tokenizer.from_file(str(out))
    assert [x for x in lines if ids(exported, x) != ids(original, x)] == []
    live = built.tok(layout).to_hf()
    assert [x for x in lines if ids(live, x) != ids(original, x)] == []
    built.registry.export(layout, "tokreg", folder / "v.tokreg")
    again = built.registry.import_tokreg(f"{layout}-again", folder / "v.tokreg")
    back = built.registry.import_hf(f"{layout}-back", out)
    assert again.content_hash == back.content_hash == built.hashes[layout]


def trained(folder: Path, layouts: Mapping[str, Callable[[], Any]]) -> Built:
    """`Built` for layouts given as `() -> (tokenizers.Tokenizer, trainer)`, trained on first
    use on the head of each shared corpus."""
    text = b"".join(head_lines(n, 40_000) for n in CORPORA).decode().splitlines()

    def make(name: str, path: Path) -> None:
        t, trainer = layouts[name]()
        t.train_from_iterator(text, trainer)
        t.save(str(path))

    return Built(folder, make)
