"""`tokreg import sentencepiece`: models trained here with the `sentencepiece` library (Unigram
and BPE, every normalization rule, a custom rule, a denormalizer, each flag that changes
encoding; tests/spm_models.py) import and then encode every line of the shared corpora, and
generated odd text, with exactly SentencePiece's ids, and decode as it does; byte-fallback
models round-trip; models tokreg cannot encode identically and damaged files (a truncated or
unknown precompiled_charsmap included) are refused in one line, and nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokreg import InputError, NotFoundError, Registry, Tokenizer
from tokreg.formats import sentencepiece_proto
from tokreg.versions import import_export as transfer

from . import spm_models as spm_models_mod
from .conftest import CORPORA_BY_LANE, Cli, data_file

spm = pytest.importorskip("sentencepiece")

_lines = spm_models_mod.lines
_train = spm_models_mod.train
VARIANTS = spm_models_mod.ALL


@pytest.fixture(scope="module")
def training_lines() -> list[str]:
    return spm_models_mod.training_lines()


@pytest.fixture(scope="module")
def models(spm_models: dict[str, Path]) -> dict[str, Path]:
    return spm_models


@pytest.fixture(scope="module")
def imported(spm_imported: dict[str, Tokenizer]) -> dict[str, Tokenizer]:
    return spm_imported


@pytest.fixture(scope="module")
def processors(spm_processors: dict[str, Any]) -> dict[str, Any]:
    return spm_processors


@pytest.mark.parametrize("corpus", CORPORA_BY_LANE)
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
# What normalization rules rewrite: compatibility characters, full-width forms, ligatures,
# combining marks, odd whitespace and control characters, case (the *_cf rules), the custom rule.
_NORMALIZED = list(
    "ﬁﬂﬀﬃ ＡＢＣａｂｃ０１２ｶﾀｶﾅ ⅠⅫ㎏½²™℃ e\u0301a\u0308\u0323 Å\u212b\u00c5 "
    "\u00a0\u2000\u2003\u3000\u200b\u200d\ufeff\u2028\u0085\x01\x07\x1f\x7f\u0080 "
    "ǅİıßẞΣσς ＬＯＲＤ aaa ㈱①⑴ ﹏﹖ ＿ \U0001d400\U0001d7d8"
) + ["aa", "LORD", "Lord", "  ", "\u3000\u3000"]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.sampled_from(EDGES),
        st.lists(st.sampled_from(_ALPHABET), max_size=12).map("".join),
        st.lists(st.sampled_from(_NORMALIZED + _ALPHABET), max_size=16).map("".join),
        st.text(),
    )
)
def test_same_ids_as_sentencepiece_on_odd_text(
    models: dict[str, Path], imported: dict[str, Tokenizer], processors: dict[str, Any], s: str
) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    for variant, sp in processors.items():
        assert imported[variant].encode_ordinary(s) == sp.encode(s), variant


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
@example("<s>")
@example("</s><unk>x")
@example("\u2581")
@example("a\u2581\u2581b \u2581")
def test_roundtrip_with_byte_fallback(imported: dict[str, Tokenizer], processors: dict[str, Any], s: str) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return
    for variant in ("bpe-llama", "unigram-bytes"):
        tok = imported[variant]
        # Any text, also one that spells a special token ('<s>'), encoded as text, comes back as
        # it was; except SentencePiece's own space mark U+2581 in the input, which it decodes as
        # a space: there the round trip is sentencepiece's own.
        back = tok.decode(tok.encode(s, disallowed_special=()))
        sp = processors[variant]
        assert back == (s if "\u2581" not in s else sp.decode(sp.encode(s)))


def test_lossless_flag(models: dict[str, Path], tmp_path: Path) -> None:
    with Registry(tmp_path / "r.db") as reg:
        for name in ("bpe-llama", "bpe-plain", "unigram-bytes"):
            reg.import_sentencepiece(name, models[name])
        assert reg.show("bpe-llama").lossless and reg.show("unigram-bytes").lossless
        assert not reg.show("bpe-plain").lossless  # no byte fallback, whitespace collapsed


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


def test_normalizer_is_the_models(models: dict[str, Path], imported: dict[str, Tokenizer]) -> None:
    """Each model's rules are stored with it (so they are hashed) and named as the model names them."""
    for variant, rule in [
        ("unigram-nmt_nfkc", "nmt_nfkc"),
        ("bpe-nfkc_cf", "nfkc_cf"),
        ("unigram-custom", "user_defined"),
    ]:
        data = transfer.read_sentencepiece(models[variant])
        norm = data.config["normalizer"]
        assert norm["name"] == rule and "charsmap" in norm and "denormalizer" not in norm
    assert "denormalizer" in transfer.read_sentencepiece(models["unigram-denorm"]).config["normalizer"]
    # identity models keep the config (and so the hash) they had before rules existed
    assert set(transfer.read_sentencepiece(models["unigram"]).config["normalizer"]) == {
        "name", "add_dummy_prefix", "remove_extra_whitespaces", "escape_whitespaces"
    }  # fmt: skip
    tok = imported["unigram-denorm"]
    sp = spm.SentencePieceProcessor(model_file=str(models["unigram-denorm"]))
    for s in ["the Lord said", "LORD ﬁne aa", "Lord,Lord"]:
        ids = sp.encode(s)
        assert tok.encode(s) == ids and tok.decode(ids) == sp.decode(ids)
    assert tok.decode(tok.encode("the Lord said")) == "the LORD said"


def _with_charsmap(path: Path, charsmap: bytes, out: Path) -> Path:
    m = sentencepiece_proto.read(path)
    m.precompiled_charsmap = charsmap
    out.write_bytes(sentencepiece_proto.dumps(m))
    return out


def test_a_damaged_charsmap_is_refused(models: dict[str, Path], tmp_path: Path, registry: Registry) -> None:
    source = models["unigram-nmt_nfkc"]
    charsmap = sentencepiece_proto.read(source).precompiled_charsmap
    for name, blob in [
        ("truncated", charsmap[: len(charsmap) // 2]),
        ("header", charsmap[:3]),
        ("unknown", b"\x08\x00\x00\x00" + bytes(range(40))),
        ("no-replacements", charsmap[: 4 + int.from_bytes(charsmap[:4], "little")]),
    ]:
        p = _with_charsmap(source, blob, tmp_path / f"{name}.model")
        _refused(registry, p, "precompiled_charsmap", "nothing was imported")


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


def test_cli_refusal_is_one_line(models: dict[str, Path], tmp_path: Path, run: Cli) -> None:
    charsmap = sentencepiece_proto.read(models["bpe-nfkc"]).precompiled_charsmap
    p = _with_charsmap(models["bpe-nfkc"], charsmap[:1000], tmp_path / "bad.model")
    res = run("import", "sentencepiece", p, "--name", "x", ok=False)
    assert res.exit_code == 1
    assert res.output.count("\n") == 1 and "precompiled_charsmap" in res.output and str(p) in res.output
