"""`tokreg train --algo unigram` with spm_train's options: each normalization rule gives the
normalizer a model spm_train writes with that rule (the same stored config, so export and
hashing treat trained and imported alike), and the exported file encodes like tokreg in the
`sentencepiece` library; the splitting switches change which pieces may exist, as spm_train's
do; bad values are refused in one line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tokreg import Registry, UnigramOptions
from tokreg.versions import import_export as transfer

from . import spm_models as spm_data
from .conftest import Cli, corpus_slice

spm = pytest.importorskip("sentencepiece")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return corpus_slice(tmp_path_factory.mktemp("c") / "corpus.txt", 150_000)


@pytest.fixture(scope="module")
def reg(tmp_path_factory: pytest.TempPathFactory) -> Registry:
    return Registry(tmp_path_factory.mktemp("db") / "r.db")


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc_cf"])
def test_a_trained_normalizer_is_stored_like_an_imported_one(
    rule: str, corpus: Path, reg: Registry, spm_models: dict[str, Path], tmp_path: Path
) -> None:
    v = reg.train(f"t-{rule}", [corpus], UnigramOptions(vocab_size=1500, unicode_normalization=rule))
    shown = reg.show(v.ref).config["normalizer"]
    assert shown["rule"] == rule and not shown["custom_charsmap"]
    # the same rules, byte for byte, as a model spm_train wrote with this rule
    model = spm_models["unigram-nmt_nfkc" if rule == "nmt_nfkc" else "bpe-nfkc_cf"]
    imported = transfer.read_sentencepiece(model).config["normalizer"]
    trained = reg.stored(v.ref).info.config["normalizer"]
    assert trained["charsmap"] == imported["charsmap"] and trained["name"] == imported["name"] == rule
    out = tmp_path / "t.model"
    reg.export(v.ref, "sentencepiece", out)
    sp = spm.SentencePieceProcessor(model_file=str(out))
    tok = reg.load(v.ref)
    lines = spm_data.lines("kjv.txt")[:3000] + spm_data.lines("dr.zh-cn.txt")[:1000]
    odd = ["ﬁne ＡＢＣ １２３ ｶﾀｶﾅ Ⅻ", "e\u0301 \u3000 \u00a0x", "ǅ İ ß ΣΑΣ"]
    assert tok.encode_batch(lines + odd) == [sp.encode(s) for s in lines + odd]


def _pieces(reg: Registry, name: str, corpus: Path, **options: object) -> list[str]:
    v = reg.train(name, [corpus], UnigramOptions(vocab_size=1500, **options))  # type: ignore[arg-type]
    return [t.bytes.decode("utf-8") for t in reg.stored(v.ref).tokens if t.kind != "byte"]  # <0x30> is no piece


def test_splitting_switches(corpus: Path, reg: Registry) -> None:
    default = _pieces(reg, "d", corpus)
    assert not any(re.search(r"[0-9]", p) and re.search(r"[a-z]", p) for p in default)
    assert not any("▁" in p[1:] for p in default)
    digits = _pieces(reg, "digits", corpus, split_digits=True)
    assert not any(re.search(r"[0-9]", p) and len(p) > 1 for p in digits)
    # Numbers of several digits are pieces by default (verse numbers, as whole ▁-words since
    # trainer revision 2: "12" alone, seen only before a space, is no seed, as in spm_train).
    assert any(re.fullmatch(r"▁?[0-9]{2,}", p) for p in default)
    lines = _pieces(reg, "lines", corpus, split_by_whitespace=False)
    assert any("▁" in p[1:] for p in lines) and not any(p.endswith("▁") and len(p) > 1 for p in lines)
    scripts = _pieces(reg, "scripts", corpus, split_by_unicode_script=False)

    def mixed(p: str) -> bool:
        return bool(re.search(r"[A-Za-z]", p) and re.search(r"[-/$\".,;:=]", p))

    assert any(mixed(p) for p in scripts) and not any(mixed(p) for p in default)


def test_user_defined_and_control_symbols(corpus: Path, reg: Registry) -> None:
    v = reg.train(
        "sym",
        [corpus],
        UnigramOptions(
            vocab_size=1500,
            unicode_normalization="nmt_nfkc",
            user_defined_symbols="LORD,ＬＯＲＤ",
            control_symbols="<cls>,<mask>",
        ),
    )
    tok = reg.load(v.ref)
    kinds = {t.bytes.decode(): t.kind for t in reg.stored(v.ref).tokens[:8]}
    assert kinds["<cls>"] == kinds["<mask>"] == "control" and kinds["LORD"] == "user_defined"
    # a user-defined piece is never normalized: the full-width one stays itself
    assert tok.decode(tok.encode("ＬＯＲＤ")) == "ＬＯＲＤ" and len(tok.encode("ＬＯＲＤ")) <= 2


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--algo", "unigram", "--normalization", "nfd"], "is not one of --algo unigram's"),
        (["--algo", "wordpiece", "--normalization", "nmt_nfkc"], "is not one of --algo wordpiece's"),
        (["--algo", "unigram", "--character-coverage", "0"], "--character-coverage"),
        (["--algo", "bpe", "--split-digits"], "applies to --algo unigram"),
    ],
)
def test_bad_options_are_one_line(args: list[str], needle: str, run: Cli, corpus: Path) -> None:
    res = run("train", "x", corpus, "--vocab-size", "1000", *args, ok=False)
    assert res.exit_code == 1 and res.output.count("\n") == 1 and needle in res.output, res.output


def test_list_json_names_rules_by_hash_instead_of_printing_them(
    corpus: Path, tmp_path: Path, spm_models: dict[str, Path]
) -> None:
    db = tmp_path / "r.db"
    run = Cli(db)
    run("import", "sentencepiece", spm_models["unigram-nmt_nfkc"], "--name", "m")
    out = run("list", "--json").output
    [row] = json.loads(out)
    shown = row["config"]["normalizer"]
    assert shown["rule"] == "nmt_nfkc" and shown["charsmap_hash"].startswith("xxh3-128:")
    assert "charsmap" not in shown and len(out) < 5_000, len(out)
