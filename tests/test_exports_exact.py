"""Exact or refused at the borders (issue 23, point 1): every export of every kind of version is
loaded in the library that reads it and gives tokreg's ids, special tokens included at their
own ids, on every line of the shared corpora and on the export check's mixed text; what a
format cannot hold is refused in one line; a writer that would differ is caught before a file is
written; a missing library is one warning.

Versions: cl100k_base and o200k_base with their official special tokens, a byte-level BPE
trained by `tokenizers` whose specials are ids 0-4, character-level BPE (with and without
`</w>`), WordPiece with a template, Unigram, SentencePiece BPE, a tekken file, and a rank file
whose added tokens no merge reaches (only a piece that is exactly one of them gives it)."""

from __future__ import annotations

import base64
import json
import re
import time
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from tokreg import BpeOptions, InputError, Registry, Tokenizer, UnigramOptions, WordPieceOptions
from tokreg._core import PATTERNS
from tokreg.algorithms.bpe import hf as bpe_hf
from tokreg.encoding import export_check

from .conftest import Cli, corpus_slice, data_file, slow
from .spm_models import train as spm_train
from .spm_models import training_lines
from .test_interop import _tekken

tokenizers = pytest.importorskip("tokenizers")
tiktoken = pytest.importorskip("tiktoken")
spm = pytest.importorskip("sentencepiece")

CL100K = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
O200K = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
EXT = {"hf": "json", "tiktoken": "tiktoken", "sentencepiece": "model", "tokreg": "tokreg.json"}

#: version -> the formats it exports to (each is checked), and those it is refused
EXPORTS: dict[str, tuple[str, ...]] = {
    "cl100k": ("hf", "tiktoken", "tokreg"),
    "o200k": ("hf", "tiktoken", "tokreg"),
    "byte-specials-first": ("hf", "tiktoken", "tokreg"),
    "char": ("hf", "tokreg"),
    "char-w": ("tokreg",),
    "wordpiece": ("hf", "tokreg"),
    "unigram": ("sentencepiece", "tokreg"),
    "sp-bpe": ("hf", "sentencepiece", "tokreg"),
    "tekken": ("hf", "tiktoken", "tokreg"),
    "unreachable": ("hf", "tiktoken", "tokreg"),
}
REFUSED = {
    ("char-w", "hf"): "end-of-word suffix cannot be written as hf",
    ("unigram", "hf"): "Unigram cannot be written as hf exactly",
}

#: Japanese and Chinese words that cl100k splits into three tokens or more: the constructed rank
#: file holds each whole, past cl100k's ranks, where no merge of lower rank reaches it.
UNREACHABLE_WORDS = ["している", "されている", "毎日電車を利用", "東京都に住んでいる", "软件包管理", "命令行"]


def _unreachable_ranks(folder: Path) -> tuple[Path, dict[bytes, int]]:
    """cl100k's ranks plus UNREACHABLE_WORDS at ranks 100300.. (past its specials, a gap before)."""
    ranks = {}
    for line in data_file("cl100k_base.tiktoken").read_bytes().splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    cl = tiktoken.Encoding("cl", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={})
    for k, word in enumerate(UNREACHABLE_WORDS):
        assert len(cl.encode(word)) >= 3, word  # no pair of lower-ranked tokens joins to it
        ranks[word.encode()] = 100300 + k
    path = folder / "unreachable.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in sorted(ranks.items(), key=lambda x: x[1])))
    return path, ranks


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, Path]:
    """A registry with every kind of version (module-wide: training and imports take seconds)."""
    folder = tmp_path_factory.mktemp("exact")
    reg = Registry(folder / "registry.db", create=True)
    corpus = corpus_slice(folder / "slice.txt", 150_000)
    reg.import_tiktoken("cl100k", data_file("cl100k_base.tiktoken"), pattern="cl100k", specials=CL100K)
    reg.import_tiktoken("o200k", data_file("o200k_base.tiktoken"), pattern="o200k", specials=O200K)
    # RoBERTa's layout: <s> <pad> </s> <unk> <mask> are ids 0-4, then the 256 bytes, then merges
    hf = tokenizers.Tokenizer(tokenizers.models.BPE())
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=3000,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    hf.train([str(corpus)], trainer)
    hf.save(str(folder / "specials-first.json"))
    reg.import_hf("byte-specials-first", folder / "specials-first.json")
    reg.train("char", [corpus], BpeOptions(vocab_size=1500, char_level=True, special=("<|end|>",)))
    reg.train("char-w", [corpus], BpeOptions(vocab_size=1500, char_level=True, end_of_word_suffix="</w>"))
    reg.train(
        "wordpiece",
        [corpus],
        WordPieceOptions(vocab_size=3000, special=("[PAD]", "[CLS]", "[SEP]", "[MASK]"), template="[CLS] $A [SEP]"),
    )
    reg.train("unigram", [corpus], UnigramOptions(vocab_size=3000, byte_fallback=True, special=("<s>", "</s>")))
    model = folder / "sp-bpe.model"
    model.write_bytes(spm_train(training_lines()[::4], model_type="bpe", vocab_size=2000, byte_fallback=True))
    reg.import_sentencepiece("sp-bpe", model)
    _tekken(folder / "tekken.json")
    reg.import_tekken("tekken", folder / "tekken.json")
    path, _ = _unreachable_ranks(folder)
    reg.import_tiktoken("unreachable", path, pattern="cl100k", specials=CL100K)
    return reg, folder


@pytest.fixture(scope="module")
def exported(made: tuple[Registry, Path]) -> Callable[[str, str], Path]:
    """(version, format) -> the file `export` wrote (once each)."""
    reg, folder = made
    done: dict[tuple[str, str], Path] = {}

    def get(name: str, fmt: str) -> Path:
        if (name, fmt) not in done:
            path = folder / f"{name}.{EXT[fmt]}"
            with warnings.catch_warnings():
                warnings.simplefilter("error", export_check.ExportCheckSkipped)  # every library is installed
                reg.export(name, fmt, path)
            done[name, fmt] = path
        return done[name, fmt]

    return get


def _split_specials(text: str, specials: dict[str, int]) -> list[str | int]:
    """`text` cut at its special tokens (leftmost, longest first), as sentencepiece users do."""
    if not specials:
        return [text]
    cut = re.compile("|".join(map(re.escape, sorted(specials, key=len, reverse=True))))
    out: list[str | int] = []
    at = 0
    for m in cut.finditer(text):
        out += [text[at : m.start()], specials[m.group()]]
        at = m.end()
    return [*out, text[at:]]


def _theirs(fmt: str, path: Path, tok: Tokenizer) -> Callable[[list[str]], list[list[int]]]:
    """The file loaded by the library that reads it, as an encoder of many texts (specials allowed)."""
    if fmt == "hf":
        hf = tokenizers.Tokenizer.from_file(str(path))
        return lambda texts: [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)]
    if fmt == "tiktoken":
        ranks = {base64.b64decode(t): int(r) for t, r in (ln.split() for ln in path.read_bytes().splitlines())}
        enc = tiktoken.Encoding(
            "t", pat_str=tok.config["pattern"], mergeable_ranks=ranks, special_tokens=tok.special_tokens
        )
        return lambda texts: enc.encode_batch(texts, allowed_special="all")
    if fmt == "sentencepiece":
        sp = spm.SentencePieceProcessor(model_file=str(path))

        def one(text: str) -> list[int]:
            parts = _split_specials(text, tok.special_tokens)
            return [i for p in parts for i in ([sp.piece_to_id(_name(tok, p))] if isinstance(p, int) else sp.encode(p))]

        return lambda texts: [one(t) for t in texts]
    back = Tokenizer.from_file(path)
    return lambda texts: back.encode_batch(texts, allowed_special="all")


def _name(tok: Tokenizer, i: int) -> str:
    return next(s for s, j in tok.special_tokens.items() if j == i)


CASES = [(name, fmt) for name, fmts in EXPORTS.items() for fmt in fmts]
#: o200k takes the same paths as cl100k at twice the size, the tokreg format of the large rank
#: vocabularies is test_export_tokfile's, cl100k's tiktoken file is test_tiktoken's byte-identical
#: export, and the unreachable tokens have a test of their own below: `just test` only. cl100k's
#: hf export too: tekken's takes the same rank-based path with specials in the fast lane, and
#: cl100k's special ids are checked there by test_special_tokens_keep_their_ids_in_hf.
LANE_CASES = [slow(name, fmt) if name in ("o200k", "unreachable", "cl100k") else (name, fmt) for name, fmt in CASES]
_LOADED: dict[tuple[str, str], Callable[[list[str]], list[list[int]]]] = {}


#: Every line of each corpus; the fast lane keeps the Chinese one (CJK is where exports went wrong).
EXACT_CORPORA = [slow("kjv.txt"), slow("dr.en.txt"), "dr.zh-cn.txt"]


@pytest.mark.parametrize("corpus", EXACT_CORPORA)
@pytest.mark.parametrize(("name", "fmt"), LANE_CASES, ids=[f"{n}-{f}" for n, f in CASES])
def test_every_export_gives_tokreg_ids_on_every_line(
    made: tuple[Registry, Path], exported: Callable[[str, str], Path], name: str, fmt: str, corpus: str
) -> None:
    reg, _ = made
    tok = reg.load(name)
    started = time.perf_counter()
    if (name, fmt) not in _LOADED:  # loaded once for the three corpora
        _LOADED[name, fmt] = _theirs(fmt, exported(name, fmt), tok)
    theirs = _LOADED[name, fmt]
    lines = data_file(corpus).read_text(encoding="utf-8").splitlines()
    specials = sorted(tok.special_tokens, key=tok.special_tokens.__getitem__)
    # every line, then the check's mixed text with each special token in it
    texts = lines + export_check.texts(specials)
    ours = tok.encode_batch(texts, allowed_special="all")
    got = theirs(texts)
    bad = [k for k in range(len(texts)) if list(got[k]) != ours[k]]
    print(f"{name} {fmt} {corpus}: {len(texts)} texts, {len(bad)} differ, {time.perf_counter() - started:.1f}s")
    assert not bad, (
        f"{len(bad)} of {len(texts)} differ, first {texts[bad[0]][:80]!r}: {got[bad[0]][:12]} vs {ours[bad[0]][:12]}"
    )
    assert sum(map(len, ours)) > len(lines)


SPECIAL_TEXTS = {
    "cl100k": "a<|endoftext|>b<|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>",
    "o200k": "a<|endoftext|>b<|endofprompt|>",
    "tekken": "<s>[INST] hi [/INST]</s>",
    "byte-specials-first": "<s>hi</s><pad><unk><mask>",
}


#: o200k takes cl100k's path at twice the size: `just test` only.
@pytest.mark.parametrize("name", [slow(n) if n == "o200k" else n for n in SPECIAL_TEXTS])
def test_special_tokens_keep_their_ids_in_hf(
    made: tuple[Registry, Path], exported: Callable[[str, str], Path], name: str
) -> None:
    """The issue's cases: cl100k's <|endoftext|> is 100257 (HF gave 100256), o200k's 199999
    (HF gave 199998), tekken's control tokens and the specials at 0-4 keep theirs."""
    reg, _ = made
    text = SPECIAL_TEXTS[name]
    tok = reg.load(name)
    hf = tokenizers.Tokenizer.from_file(str(exported(name, "hf")))
    ids = hf.encode(text, add_special_tokens=False).ids
    assert ids == tok.encode(text, allowed_special="all"), name
    for s, i in tok.special_tokens.items():
        assert hf.token_to_id(s) == i and hf.id_to_token(i) == s, (name, s)
    official = {
        "cl100k": ("<|endoftext|>", 100257),
        "o200k": ("<|endoftext|>", 199999),
        "tekken": ("<s>", 1),
        "byte-specials-first": ("<mask>", 4),
    }[name]
    assert tok.special_tokens[official[0]] == official[1]
    if name == "byte-specials-first":
        assert tok.special_tokens == {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "<mask>": 4}
    if name == "tekken":
        assert tok.encode("<s>[INST]", allowed_special="all") == [1, 3]


@pytest.mark.slow  # a 128k rank vocabulary; the lane keeps test_a_vocab_with_a_later_formed_token_exports_exactly
def test_unreachable_tokens_are_exported_with_ignore_merges(
    made: tuple[Registry, Path], exported: Callable[[str, str], Path]
) -> None:
    """A token no merge reaches is given by tiktoken (and tokreg) for a piece that is exactly it;
    HF does the same only with `ignore_merges`, which the export then sets (and only then)."""
    reg, folder = made
    doc = json.loads(exported("unreachable", "hf").read_text(encoding="utf-8"))
    assert doc["model"]["ignore_merges"] is True
    assert json.loads(exported("cl100k", "hf").read_text(encoding="utf-8"))["model"]["ignore_merges"] is False
    _, ranks = _unreachable_ranks(folder)
    ref = tiktoken.Encoding("u", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens=CL100K)
    hf = tokenizers.Tokenizer.from_file(str(exported("unreachable", "hf")))
    tok = reg.load("unreachable")
    texts = [
        *UNREACHABLE_WORDS,
        " ".join(UNREACHABLE_WORDS),
        "彼はしている。",
        "しているのです",
        "<|endoftext|>している",
    ]
    want = [ref.encode(t, allowed_special="all") for t in texts]
    assert want[0] == [100300]  # the whole piece is the token
    assert [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)] == want
    assert tok.encode_batch(texts, allowed_special="all") == want
    # tokreg reads its own file back as the same version
    assert (
        reg.import_hf("unreachable-back", exported("unreachable", "hf")).content_hash
        == reg.resolve("unreachable").content_hash
    )


def test_a_token_formed_only_after_a_higher_rank_gets_its_merge() -> None:
    """`abc` (rank 256) is made from `ab`, whose rank (257) is higher: tiktoken forms it inside a
    longer text, so the HF file must list (ab, c) before (a, b)."""
    ordinary = [(b, bytes([b])) for b in range(256)] + [(256, b"abc"), (257, b"ab")]
    ranked = bpe_hf.rank_merges(ordinary, "t")
    assert (ranked.direct, ranked.later, ranked.lone) == ([(97, 98, 257)], [(257, 99, 256)], [])
    assert ranked.merges == [(257, 99, 256), (97, 98, 257)]
    ordinary.append((258, b"xyz"))  # no pair joins to it: only the piece "xyz" gives it
    assert bpe_hf.rank_merges(ordinary, "t").lone == [258]


def test_a_vocab_with_a_later_formed_token_exports_exactly(registry: Registry, tmp_path: Path) -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"abc": 256, b"ab": 257, b"xyz": 258}
    path = tmp_path / "later.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    registry.import_tiktoken("later", path, pattern="gpt2")
    registry.export("later", "hf", tmp_path / "later.json")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "later.json"))
    ref = tiktoken.Encoding(
        "l", pat_str=registry.resolve("later").config["pattern"], mergeable_ranks=ranks, special_tokens={}
    )
    texts = ["abc", "abcd", "xabcx", "ababc", "xyz", "xyzz", "abcabc ab xyz"]
    assert [e.ids for e in hf.encode_batch(texts, add_special_tokens=False)] == [ref.encode(t) for t in texts]
    assert (
        registry.import_hf("later-back", tmp_path / "later.json").content_hash == registry.resolve("later").content_hash
    )


@pytest.mark.parametrize(("name", "fmt"), sorted(REFUSED))
def test_what_a_format_cannot_hold_is_refused_in_one_line(made: tuple[Registry, Path], name: str, fmt: str) -> None:
    reg, folder = made
    path = folder / f"refused-{name}.{EXT[fmt]}"
    with pytest.raises(InputError, match=REFUSED[name, fmt]) as e:
        reg.export(name, fmt, path)
    assert "\n" not in str(e.value) and not path.exists()
    with pytest.raises(InputError, match=REFUSED[name, fmt]):
        reg.load(name).to_hf()


def test_a_special_spelled_like_text_is_refused_when_ignore_merges_is_needed(
    registry: Registry, tmp_path: Path
) -> None:
    """ "Ġhi" is GPT-2's spelling of " hi": with ignore_merges HF would give the special's id for " hi"."""
    ranks = {bytes([b]): b for b in range(256)} | {b"xyz": 256}
    path = tmp_path / "r.tiktoken"
    path.write_bytes(b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in ranks.items()))
    registry.import_tiktoken("s", path, pattern="gpt2", specials={"\u0120hi": 300})
    with pytest.raises(InputError, match="GPT-2's spelling of ' hi'") as e:
        registry.export("s", "hf", tmp_path / "s.json")
    assert "\n" not in str(e.value) and not (tmp_path / "s.json").exists()
    registry.export("s", "tiktoken", tmp_path / "s.tiktoken")  # tiktoken has no such lookup


def test_a_writer_that_would_differ_is_caught_and_nothing_is_written(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Cli
) -> None:
    registry.train("b", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",)))
    write = bpe_hf.ByteLevelHf.write

    def swapped(self: Any, data: Any, ref: str) -> bytes:  # two tokens at each other's ids
        doc = json.loads(write(self, data, ref))
        vocab = doc["model"]["vocab"]
        vocab["e"], vocab["t"] = vocab["t"], vocab["e"]
        return json.dumps(doc).encode()

    monkeypatch.setattr(bpe_hf.ByteLevelHf, "write", swapped)
    out = tmp_path / "b.json"
    with pytest.raises(InputError, match=r"the hf file would not give tokreg's ids, so it was not written") as e:
        registry.export("b", "hf", out)
    message = str(e.value)
    assert "\n" not in message and "tokenizers" in message and "where tokreg gives [" in message and not out.exists()
    res = run("export", "b", "--format", "hf", "-o", out, ok=False)
    assert res.exit_code == 1 and "so it was not written" in res.output and not out.exists()
    with pytest.raises(InputError, match="its tokenizers object would not give tokreg's ids"):
        registry.load("b").to_hf()


def test_a_missing_library_is_one_warning_and_the_file_is_written(
    registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: Cli
) -> None:
    registry.train("b", [small_corpus], BpeOptions(vocab_size=400))
    real = export_check.importlib.import_module

    def without_tiktoken(name: str, *a: Any) -> Any:
        if name == "tiktoken":
            raise ImportError(name)
        return real(name, *a)

    monkeypatch.setattr(export_check.importlib, "import_module", without_tiktoken)
    with pytest.warns(export_check.ExportCheckSkipped, match="tiktoken is not installed"):
        registry.export("b", "tiktoken", tmp_path / "b.tiktoken")
    assert (tmp_path / "b.tiktoken").exists()
    res = run("export", "b", "--format", "tiktoken", "-o", tmp_path / "c.tiktoken")
    said = [line for line in res.output.splitlines() if line.startswith("tokreg: warning:")]
    assert len(said) == 1 and "was not checked" in said[0] and (tmp_path / "c.tiktoken").exists()


def test_to_hf_gives_the_special_ids_of_the_export(made: tuple[Registry, Path]) -> None:
    reg, _ = made
    hf = reg.load("cl100k").to_hf()
    assert hf.encode("x<|endoftext|><|endofprompt|>", add_special_tokens=False).ids == [87, 100257, 100276]
    wp = reg.load("wordpiece")
    framed = wp.to_hf().encode("hello world")  # the template, at the specials' ids
    assert framed.ids == wp.encode("hello world", add_special_tokens=True)
    assert framed.ids[0] == wp.special_tokens["[CLS]"] and framed.ids[-1] == wp.special_tokens["[SEP]"]


def test_the_check_texts_hold_every_special_token() -> None:
    texts = export_check.texts(["<a>", "<b>"], ["sample"])
    assert texts[0] == "sample" and all(any(s in t for t in texts) for s in ("<a>", "<b>"))
    assert sum(len(t.encode()) for t in export_check.MIXED) > 3000
