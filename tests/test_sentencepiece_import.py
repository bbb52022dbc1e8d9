"""`tokreg import sentencepiece`: models trained here with the `sentencepiece` library (Unigram
and BPE, identity normalization, each flag that changes encoding) import and then encode every
line of the shared corpora with exactly SentencePiece's ids; byte-fallback models round-trip;
models tokreg cannot encode identically and damaged files are refused in one line, and nothing
is written."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokreg import InputError, NotFoundError, Registry, Tokenizer, transfer

from .conftest import CORPORA, Cli, data_file

spm = pytest.importorskip("sentencepiece")

# name -> SentencePieceTrainer options (besides the shared ones in `_train`)
VARIANTS: dict[str, dict[str, Any]] = {
    # SentencePiece's defaults: whitespace collapsed, dummy prefix, no byte fallback (unk runs)
    "unigram": {"model_type": "unigram"},
    "unigram-bytes": {"model_type": "unigram", "byte_fallback": True, "remove_extra_whitespaces": False},
    "unigram-symbols": {
        "model_type": "unigram",
        "user_defined_symbols": ["LORD", "<sep>", "神"],
        "control_symbols": ["<cls>", "<mask>"],
        "add_dummy_prefix": False,
        "remove_extra_whitespaces": False,
    },
    # Llama's settings: byte fallback, dummy prefix, whitespace kept
    "bpe-llama": {"model_type": "bpe", "byte_fallback": True, "remove_extra_whitespaces": False},
    "bpe-plain": {"model_type": "bpe", "user_defined_symbols": ["LORD", "<sep>"], "add_dummy_prefix": False},
}


def _lines(name: str) -> list[str]:
    return data_file(name).read_text(encoding="utf-8").split("\n")


@pytest.fixture(scope="module")
def training_lines() -> list[str]:
    """A whole-line slice of each corpus (about 0.6 MB in all)."""
    return _lines("kjv.txt")[:3000] + _lines("dr.en.txt")[:3000] + _lines("dr.zh-cn.txt")[:2000]


def _train(lines: list[str], **options: Any) -> bytes:
    options.setdefault("normalization_rule_name", "identity")
    options.setdefault("vocab_size", 3000)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, num_threads=2, minloglevel=2, **options
    )
    return buf.getvalue()


@pytest.fixture(scope="module")
def models(training_lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """variant -> its .model file, trained once for the module."""
    folder = tmp_path_factory.mktemp("spm")
    out = {}
    for name, options in VARIANTS.items():
        out[name] = folder / f"{name}.model"
        out[name].write_bytes(_train(training_lines, **options))
    return out


@pytest.fixture(scope="module")
def imported(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Tokenizer]:
    """variant -> the tokenizer imported through the API (one registry for all)."""
    reg = Registry(tmp_path_factory.mktemp("db") / "r.db")
    out = {}
    for name, path in models.items():
        v = reg.import_sentencepiece(name, path)
        assert v.ref == f"{name}@1" and v.source == "import:sentencepiece"
        out[name] = reg.load(name)
    reg.close()
    return out


@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_same_ids_as_sentencepiece_on_every_line(
    variant: str, corpus: str, models: dict[str, Path], imported: dict[str, Tokenizer]
) -> None:
    sp = spm.SentencePieceProcessor(model_file=str(models[variant]))
    tok = imported[variant]
    lines = _lines(corpus)
    got = tok.encode_batch(lines)
    want = [sp.encode(line) for line in lines]
    bad = [i for i in range(len(lines)) if got[i] != want[i]]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, first {lines[bad[0]][:80]!r}"


EDGES = [
    "",
    " ",
    "   ",
    "a  b",
    " a ",
    "\t\n",
    "\u2581",
    "a \u2581",
    "\u2581 a\u2581\u2581",
    "<s></s><cls>",
    "<unk>",
    "LORD<sep>神",
    "xLORDx",
    "\x00",
    "😀 日本",
    "ǅ\u0301",
]
# Text made of pieces of the models and characters they lack, so that merges, unknowns,
# user-defined and control pieces and whitespace meet in every way.
_ALPHABET = list("ab  \t\n\u2581的神,.") + ["<s>", "<unk>", "LORD", "<sep>", "<cls>", "the", "é", "😀", "  "]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.sampled_from(EDGES), st.lists(st.sampled_from(_ALPHABET), max_size=12).map("".join), st.text()))
def test_same_ids_as_sentencepiece_on_odd_text(
    models: dict[str, Path], imported: dict[str, Tokenizer], processors: dict[str, Any], s: str
) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    for variant, sp in processors.items():
        assert imported[variant].encode_ordinary(s) == sp.encode(s), variant


@pytest.fixture(scope="module")
def processors(models: dict[str, Path]) -> dict[str, Any]:
    return {name: spm.SentencePieceProcessor(model_file=str(path)) for name, path in models.items()}


def test_pieces_kinds_and_scores_are_kept(models: dict[str, Path], imported: dict[str, Tokenizer]) -> None:
    data = transfer.read_sentencepiece(models["unigram-symbols"])
    sp = spm.SentencePieceProcessor(model_file=str(models["unigram-symbols"]))
    assert len(data.tokens) == sp.get_piece_size() == 3000
    for t in data.tokens:
        assert t.bytes.decode() == sp.id_to_piece(t.id) and t.score == sp.get_score(t.id)
    kinds = {t.bytes.decode(): t.kind for t in data.tokens[:8]}
    assert kinds == {
        "<unk>": "unknown", "<s>": "control", "</s>": "control", "<cls>": "control", "<mask>": "control",
        "LORD": "user_defined", "<sep>": "user_defined", "神": "user_defined",
    }  # fmt: skip
    assert data.config["normalizer"]["add_dummy_prefix"] is False
    llama = transfer.read_sentencepiece(models["bpe-llama"])
    assert llama.algorithm == "bpe" and llama.config["model"] == "sentencepiece" and llama.config["byte_fallback"]
    assert sum(t.kind == "byte" for t in llama.tokens) == 256
    # control and unknown pieces are the special tokens, as SentencePiece's ids say
    assert imported["unigram-symbols"].special_tokens["<cls>"] == sp.piece_to_id("<cls>")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_roundtrip_with_byte_fallback(imported: dict[str, Tokenizer], s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    for variant in ("bpe-llama", "unigram-bytes"):
        tok = imported[variant]
        assert tok.decode(tok.encode(s)) == s


def test_lossless_flag(models: dict[str, Path], tmp_path: Path) -> None:
    with Registry(tmp_path / "r.db") as reg:
        for name in ("bpe-llama", "bpe-plain", "unigram-bytes"):
            reg.import_sentencepiece(name, models[name])
        assert reg.show("bpe-llama")["lossless"] and reg.show("unigram-bytes")["lossless"]
        assert not reg.show("bpe-plain")["lossless"]  # no byte fallback, whitespace collapsed


def test_cli_import(models: dict[str, Path], run: Cli, db_path: Path) -> None:
    res = run("import", "sentencepiece", models["bpe-llama"], "--name", "llama-sp", "-m", "from spm")
    assert res.output.startswith("llama-sp@1  xxh3-128:") and "3,000 tokens" in res.output
    res = run("import", "sentencepiece", models["bpe-llama"], "--name", "llama-sp", "--json")
    assert '"ref": "llama-sp@2"' in res.output
    with Registry(db_path) as reg:
        a, b = reg.resolve("llama-sp@1"), reg.resolve("llama-sp@2")
        assert a.content_hash == b.content_hash  # same file, same content, same hash
        tok = reg.load("llama-sp")
    sp = spm.SentencePieceProcessor(model_file=str(models["bpe-llama"]))
    lines = _lines("dr.zh-cn.txt")[:2000]
    assert tok.encode_batch(lines) == [sp.encode(line) for line in lines]


def test_import_twice_gives_the_same_hash(models: dict[str, Path], registry: Registry) -> None:
    a = registry.import_sentencepiece("u", models["unigram"])
    b = registry.import_sentencepiece("u", models["unigram"])
    assert (a.ref, b.ref) == ("u@1", "u@2") and a.content_hash == b.content_hash


def _refused(registry: Registry, path: Path, *needles: str) -> str:
    with pytest.raises(InputError) as e:
        registry.import_sentencepiece("refused", path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg
    for n in needles:
        assert n in msg, msg
    with pytest.raises(NotFoundError):
        registry.resolve("refused")  # nothing was written
    assert registry.versions() == []
    return msg


def test_nmt_nfkc_is_refused(training_lines: list[str], tmp_path: Path, registry: Registry) -> None:
    p = tmp_path / "nfkc.model"
    p.write_bytes(_train(training_lines[:2000], model_type="bpe", vocab_size=1000, normalization_rule_name="nmt_nfkc"))
    _refused(registry, p, "'nmt_nfkc'", "does not implement", "normalization_rule_name=identity")


@pytest.mark.parametrize(
    "options, needle",
    [
        ({"model_type": "unigram", "treat_whitespace_as_suffix": True}, "treat_whitespace_as_suffix"),
        ({"model_type": "char"}, "CHAR models are not supported"),
        ({"model_type": "word", "vocab_size": 500}, "WORD models are not supported"),
    ],
)
def test_encodings_tokreg_does_not_do_are_refused(
    options: dict[str, Any], needle: str, training_lines: list[str], tmp_path: Path, registry: Registry
) -> None:
    p = tmp_path / "x.model"
    options.setdefault("vocab_size", 1000)
    p.write_bytes(_train(training_lines[:2000], **options))
    _refused(registry, p, needle)


def test_damaged_and_wrong_files_are_refused(models: dict[str, Path], tmp_path: Path, registry: Registry) -> None:
    raw = models["bpe-llama"].read_bytes()
    truncated = tmp_path / "truncated.model"
    truncated.write_bytes(raw[: len(raw) // 2])
    _refused(registry, truncated, "truncated or not a SentencePiece .model file")
    text = tmp_path / "corpus.model"
    text.write_bytes(data_file("kjv.txt").read_bytes()[:5000])
    _refused(registry, text, "SentencePiece")
    empty = tmp_path / "empty.model"
    empty.write_bytes(b"")
    _refused(registry, empty, "holds no pieces")
    _refused(registry, tmp_path / "missing.model", "does not exist")


def test_cli_refusal_is_one_line(training_lines: list[str], tmp_path: Path, run: Cli) -> None:
    p = tmp_path / "nfkc.model"
    p.write_bytes(_train(training_lines[:2000], model_type="unigram", vocab_size=1000, normalization_rule_name="nfkc"))
    res = run("import", "sentencepiece", p, "--name", "x", ok=False)
    assert res.exit_code == 1
    assert res.output.count("\n") == 1 and "'nfkc'" in res.output
