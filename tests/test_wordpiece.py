"""WordPiece: training records scores and counts (the `ratio` objective's worked example; the
others are tests/test_wordpiece_objectives.py), same hash whatever the threads, and an
imported BERT-style vocabulary encodes exactly like Hugging Face tokenizers."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tokreg import Registry, WordPieceOptions

from .conftest import CORPORA, CORPORA_BY_LANE, Cli, data_file


def test_hug_pug_pun_bun_hugs(registry: Registry, tmp_path: Path) -> None:
    corpus = tmp_path / "hug.txt"
    corpus.write_text("hug " * 10 + "pug " * 5 + "pun " * 12 + "bun " * 4 + "hugs " * 5 + "\n")
    v = registry.train("hug", [corpus], WordPieceOptions(vocab_size=25, objective="ratio"))
    _, rows = registry.sql(
        "SELECT left_text, right_text, result_text, count, left_count, right_count, score "
        "FROM merges_view WHERE tokenizer = 'hug@1' ORDER BY rank LIMIT 2"
    )
    # score = count(ab) / (count(a) * count(b)): ##g+##s = 5/(20*5) = 1/20 is the best first.
    assert rows[0][:6] == ("##g", "##s", "##gs", 5, 20, 5) and rows[0][6] == pytest.approx(1 / 20)
    assert rows[1][:3] == ("p", "##u", "pu")
    tok = registry.load(v.ref)
    assert tok.decode(tok.encode("hugs bun")) == "hugs bun"


def test_same_hash_for_threads_and_shuffled_lines(registry: Registry, small_corpus: Path, tmp_path: Path) -> None:
    lines = [x + "\n" for x in small_corpus.read_text().splitlines()]  # every line terminated
    random.Random(3).shuffle(lines)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(lines))
    small_corpus.write_text("".join(sorted(lines)))  # the same lines, in another order
    hashes = {
        registry.train("wp", [f], WordPieceOptions(vocab_size=700, lowercase=True, threads=t)).content_hash
        for f, t in [(small_corpus, 1), (small_corpus, 2), (shuffled, 2)]
    }
    assert len(hashes) == 1


def test_lossy_configuration_says_so(registry: Registry, small_corpus: Path, run: Cli) -> None:
    registry.train("lossy", [small_corpus], WordPieceOptions(vocab_size=500, lowercase=True))
    assert registry.show("lossy").lossless is False
    assert "lossless      no" in run("show", "lossy").output
    # `tokreg train` says the loss is WordPiece's own, not a fault, and what it consists of
    said = run("train", "said", small_corpus, "--algo", "wordpiece", "--vocab-size", 500, "--lowercase").output
    loss = said.splitlines()[-1]
    assert loss.startswith("  LOSSY on its corpus: ") and loss.endswith(
        "(expected: WordPiece keeps words, not the whitespace between them: decoding joins them with single "
        "spaces, lowercased and without accents)"
    )


def head(data: bytes, size: int) -> bytes:
    """The first lines of `data`, up to about `size` bytes (never cutting a character)."""
    return data[: data.rfind(b"\n", 0, size) + 1]


@pytest.fixture(scope="module")
def hf_bert(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(
        vocab_size=6000, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"], show_progress=False
    )
    sample = tmp_path_factory.mktemp("hf") / "sample.txt"
    sample.write_bytes(b"".join(head(data_file(n).read_bytes(), 300_000) for n in CORPORA))
    tok.train([str(sample)], trainer)
    out = tmp_path_factory.mktemp("vocab")
    tok.model.save(str(out))
    assert tokenizers is not None
    return tok, out / "vocab.txt"


@pytest.mark.parametrize("name", CORPORA_BY_LANE)
def test_imported_bert_vocab_matches_hf(hf_bert: tuple[object, Path], registry: Registry, name: str) -> None:
    hf, vocab = hf_bert
    registry.import_wordpiece("bert-uncased", vocab, WordPieceOptions(vocab_size=0, lowercase=True))
    tok = registry.load("bert-uncased")
    lines = data_file(name).read_text(encoding="utf-8").splitlines()
    expected = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]  # type: ignore[attr-defined]
    assert tok.encode_batch(lines) == expected


def test_import_wordpiece_cli_and_errors(run: Cli, tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\nhello\n##s\nworld\n")
    out = run("import", "wordpiece", vocab, "--name", "tiny-bert", "--lowercase").output
    assert "tiny-bert@1" in out
    assert run("encode", "tiny-bert", "Hellos, World").output.split() == ["3", "4", "1", "5"]
    bad = tmp_path / "bad.txt"
    bad.write_text("[UNK]\nhello\nhello\n")
    res = run("import", "wordpiece", bad, "--name", "bad", ok=False)
    assert res.exit_code == 1 and "appears on lines 2 and 3" in res.output


@pytest.mark.parametrize("name", CORPORA_BY_LANE)
def test_imported_hf_tokenizer_json_matches_hf(
    hf_bert: tuple[object, Path], registry: Registry, tmp_path: Path, name: str
) -> None:
    hf, _ = hf_bert
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))  # type: ignore[attr-defined]
    v = registry.import_hf("bert-json", path)
    assert v.algorithm == "wordpiece" and v.source == "import:hf"
    tok = registry.load("bert-json")
    lines = data_file(name).read_text(encoding="utf-8").splitlines()
    expected = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]  # type: ignore[attr-defined]
    assert tok.encode_batch(lines) == expected
