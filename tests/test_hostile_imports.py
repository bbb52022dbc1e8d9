"""Hostile files for every importer: a CI-sized run of the mutation fuzzer (tests/hostile.py;
`just fuzz` runs it for minutes), then each kind of damage found by fuzzing and by hand, one
test each. Every import is refused with one line and the registry unchanged, or it builds an
encoder, verifies and gives the reference library's ids."""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokreg import InputError, Registry, Tokenizer
from tokreg.algorithms import WordPieceOptions

from . import hostile
from .conftest import ROOT, data_file, one_error_line

#: Mutated files per format in the test suite; `just fuzz` runs thousands.
EXAMPLES = int(os.environ.get("TOKREG_FUZZ_EXAMPLES", "25"))


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    data_file("kjv.txt")
    folder = tmp_path_factory.mktemp("seeds")
    return hostile.make_seeds(folder, hostile.write_corpus(folder / "corpus.txt"))


@pytest.fixture(scope="module")
def fuzz_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Registry, Path]]:
    folder = tmp_path_factory.mktemp("fuzz")
    with Registry(folder / "fuzz.db", create=True) as reg:
        yield reg, folder


@pytest.mark.parametrize("fmt", hostile.FORMATS)
def test_mutated_files_are_refused_or_imported_faithfully(
    fmt: str, seeds: dict[str, bytes], fuzz_registry: tuple[Registry, Path]
) -> None:
    reg, folder = fuzz_registry
    outcomes: list[str] = []

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.randoms(use_true_random=False))
    def run(r: random.Random) -> None:
        seed = seeds[fmt] if fmt != "tokreg" else r.choice([seeds["tokreg"], seeds["tokreg-bpe"]])
        out = hostile.judge(reg, fmt, hostile.mutate(fmt, seed, r), folder)
        outcomes.append(out.kind)
        assert out.kind not in hostile.BUGS, out.detail

    run()
    assert "refused" in outcomes  # the mutations do reach the checks


def test_the_unmutated_seeds_import_and_match(seeds: dict[str, bytes], fuzz_registry: tuple[Registry, Path]) -> None:
    reg, folder = fuzz_registry
    for fmt in hostile.FORMATS:
        out = hostile.judge(reg, fmt, seeds[fmt], folder)
        assert out.kind == ("no-ref" if fmt == "tokreg" else "same"), (fmt, out)


# -- the damage found, one case each ---------------------------------------------------------------


def refused(reg: Registry, call: object, *needles: str) -> str:
    before = len(reg.versions())
    with pytest.raises(InputError) as e:
        call()  # type: ignore[operator]
    msg = str(e.value)
    assert "\n" not in msg, msg
    for n in needles:
        assert n in msg, msg
    assert len(reg.versions()) == before
    return msg


def tiktoken_lines(n_merged: int = 0) -> list[bytes]:
    lines = [base64.b64encode(bytes([b])) + b" " + str(b).encode() for b in range(256)]
    return lines + [base64.b64encode(b"ab" * (k + 1)) + b" " + str(256 + k).encode() for k in range(n_merged)]


def test_a_rank_gap_is_refused_without_allocating_for_it(registry: Registry, tmp_path: Path) -> None:
    # A rank near 2^32 in an otherwise small file: the import must not allocate by the largest rank (24 GB).
    # In a child with 1.5 GB of address space, so a regression fails instead of swapping.
    p = tmp_path / "gap.tiktoken"
    p.write_bytes(b"\n".join([*tiktoken_lines(), base64.b64encode(b"ab") + b" 4294967000"]) + b"\n")
    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20));"
        "from tokreg import InputError\nfrom tokreg.versions import import_export as transfer\n"
        "try: transfer.read_tiktoken(sys.argv[1], pattern='cl100k')\n"
        "except InputError as e: print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    # Under the limit, allocating by the rank would have failed: the message proves it did not.
    assert "highest token id is 4294967000" in out.stdout and "renumber" in out.stdout


@pytest.mark.parametrize(
    "line, needle",
    [
        (b"YWI= 4294967296", "ranks are 0..4294967295"),
        (b"YWI= " + b"9" * 5000, "ranks are 0..4294967295"),
        (b"YWI= -3", "not 'BASE64 RANK'"),
        (b"YWI= 7", "repeats a token or rank (7)"),
        (b"YQ== 300", "repeats a token or rank"),
    ],
)
def test_bad_ranks_are_refused(registry: Registry, tmp_path: Path, line: bytes, needle: str) -> None:
    p = tmp_path / "bad.tiktoken"
    p.write_bytes(b"\n".join([*tiktoken_lines(), line]) + b"\n")
    refused(registry, lambda: registry.import_tiktoken("t", p, pattern="cl100k"), str(p), needle)


def test_a_byte_level_vocabulary_missing_a_byte_is_refused(registry: Registry, tmp_path: Path) -> None:
    p = tmp_path / "missing.tiktoken"
    p.write_bytes(b"\n".join(line for n, line in enumerate(tiktoken_lines()) if n != 0x41) + b"\n")
    refused(registry, lambda: registry.import_tiktoken("t", p, pattern="cl100k"), str(p), "byte 0x41")


@pytest.mark.parametrize("special", ["x=4294967296", "x=\u00b2", "x=1,x=2"])
def test_bad_special_ids_are_refused(registry: Registry, tmp_path: Path, special: str) -> None:
    from tokreg.formats.tiktoken_file import parse_specials

    with pytest.raises(InputError):
        parse_specials(special.split(","))


def hf_doc(seeds: dict[str, bytes], fmt: str) -> dict[str, object]:
    return json.loads(seeds[fmt])


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"model": {"type": "BPE", "vocab": {"a": 0, "a": 1}, "merges": []}}', "the key 'a' appears twice"),
        ('{"model": {"type": "Unigram", "vocab": [["a", NaN]]}}', "NaN is not a number JSON allows"),
        ('{"model": {"type": "Unigram", "vocab": [["a", -Infinity]]}}', "-Infinity is not a number"),
        ('{"model": {"type": "BPE", "vocab": {"\\ud800": 0}}}', "lone surrogate"),
        ("[" * 100_000 + "]" * 100_000, "nests deeper than 64 levels"),
        ('{"model": ' * 70 + "1" + "}" * 70, "nests deeper than 64 levels"),
        ('{"model": {"type": "BPE", "vocab": {"a": ' + "1" * 5000 + "}}}", "Exceeds the limit"),
        ('{"model": {"type": 7}}', 'its model "type" is 7'),
        ('{"model": {"type": "BPE", "vocab": {"a": 1.5}, "merges": []}, "pre_tokenizer": null}', "has the id 1.5"),
        (b"\xff\xfe{}".decode("latin-1"), "not a Hugging Face tokenizer.json"),
    ],
)
def test_malformed_tokenizer_json_is_one_line(registry: Registry, tmp_path: Path, text: str, needle: str) -> None:
    p = tmp_path / "t.json"
    p.write_bytes(text.encode("latin-1") if text.startswith("\xff") else text.encode("utf-8", "surrogatepass"))
    refused(registry, lambda: registry.import_hf("t", p), needle)


@pytest.mark.slow
def test_wrong_types_anywhere_in_a_tokenizer_json_are_one_line(
    seeds: dict[str, bytes], registry: Registry, tmp_path: Path
) -> None:
    """Every value of every seed replaced, one at a time, by values of the wrong type."""
    p = tmp_path / "t.json"
    tried = 0
    for fmt in ("hf-byte", "hf-char", "hf-wordpiece", "hf-unigram"):
        doc = hf_doc(seeds, fmt)
        paths: list[tuple[object, object]] = []
        stack: list[object] = [doc]
        while stack:
            node = stack.pop()
            items = (
                list(node.items())
                if isinstance(node, dict)
                else list(enumerate(node))
                if isinstance(node, list)
                else []
            )
            for k, v in items[:6]:  # the first few entries of the long vocab lists are enough
                paths.append((node, k))
                stack.append(v)
        for parent, key in paths:
            old = parent[key]  # type: ignore[index]
            for bad in (None, True, -1, 1.5, "x", [], {}, [[1]], 2**40):
                if bad == old and type(bad) is type(old):
                    continue
                parent[key] = bad  # type: ignore[index]
                p.write_text(json.dumps(doc), encoding="utf-8")
                before = len(registry.versions())
                try:
                    registry.import_hf("t", p)
                except InputError as e:
                    assert "\n" not in str(e)
                    assert len(registry.versions()) == before
                tried += 1
            parent[key] = old  # type: ignore[index]
    assert tried > 500


def split_isolated(seeds: dict[str, bytes], fmt: str, regex: str, behavior: str, invert: bool) -> dict[str, object]:
    doc = hf_doc(seeds, fmt)
    step = {"type": "Split", "pattern": {"Regex": regex}, "behavior": behavior, "invert": invert}
    if fmt == "hf-byte":
        doc["pre_tokenizer"]["pretokenizers"][0] = step  # type: ignore[index]
    else:
        doc["pre_tokenizer"] = step
    return doc


@pytest.mark.parametrize("fmt", ["hf-byte", "hf-char"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_isolated_keeps_the_text_between_matches(
    seeds: dict[str, bytes], registry: Registry, tmp_path: Path, fmt: str, invert: bool
) -> None:
    """A Split(\\d+, Isolated) pre-tokenizer keeps the gaps between matches as pieces too, as in
    HF: "room 101 is here" is not just the two tokens of 101 with the rest silently dropped."""
    from tokenizers import Tokenizer as HfTokenizer

    p = tmp_path / "isolated.json"
    doc = split_isolated(seeds, fmt, r"\d+", "Isolated", invert)
    p.write_text(json.dumps(doc), encoding="utf-8")
    v = registry.import_hf("iso", p)
    tok = registry.load(v.ref, lock=False)
    hf = HfTokenizer.from_file(str(p))
    for text in [*hostile.TEXTS, "room 101 is here", "12ab34", "no digits at all", ""]:
        # HF matches its added (special) tokens in any text; tokreg when they are allowed.
        assert tok.encode(text, allowed_special="all") == hf.encode(text, add_special_tokens=False).ids, text
    assert registry.verify(v.ref)[0].ok
    assert tok.config.get("keep_gaps") is True
    # Export writes it back as Isolated, and importing that gives the same version.
    out = tmp_path / "again.json"
    registry.export(v.ref, "hf", out)
    assert json.loads(out.read_text())["pre_tokenizer"]["pretokenizers" if fmt == "hf-byte" else "behavior"]
    assert registry.import_hf("iso", out).content_hash == v.content_hash


def test_split_isolated_with_a_builtin_pattern_keeps_its_hash(seeds: dict[str, bytes], registry: Registry) -> None:
    """Built-in patterns match all text: Isolated changes nothing and is not stored."""
    v = registry.import_hf("bb", _write(seeds["hf-byte"]))
    assert "keep_gaps" not in registry.stored(v.ref).info.config


def _write(raw: bytes) -> Path:
    import tempfile

    fd, name = tempfile.mkstemp(suffix=".json")
    os.write(fd, raw)
    os.close(fd)
    return Path(name)


def imports_like_hf(registry: Registry, path: Path, name: str) -> None:
    """`path` imports with its own HF pipeline (hf_pipe.py) and gives `tokenizers`' ids."""
    tokenizers = pytest.importorskip("tokenizers")
    tok = registry.load(registry.import_hf(name, path).ref)
    assert "hf_pipeline" in tok.config
    hf = tokenizers.Tokenizer.from_file(str(path))
    for text in ["Hello wörld 12345 and 6789!", "a  b\tc\n", "", "ünïcödé 漢字 🙂"]:
        assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids, text


@pytest.mark.parametrize("behavior, invert", [("Removed", False), ("MergedWithPrevious", False), ("Contiguous", True)])
def test_split_behaviors_tokreg_does_not_implement_import_with_the_hf_pipeline(
    seeds: dict[str, bytes], registry: Registry, tmp_path: Path, behavior: str, invert: bool
) -> None:
    """tokreg's own character-level BPE keeps only two Split behaviors; the others are HF's
    pipeline's, which the version then keeps (docs/hf-layouts.md)."""
    p = tmp_path / "t.json"
    p.write_text(json.dumps(split_isolated(seeds, "hf-char", r"\d+", behavior, invert)), encoding="utf-8")
    imports_like_hf(registry, p, "t")


def test_garbage_that_parses_is_refused(seeds: dict[str, bytes], registry: Registry, tmp_path: Path) -> None:
    """Files that parse but hold what no encoder can build (an infinite or f32-overflowing
    Unigram score, empty or repeated pieces, missing byte pieces, merges that name what is not
    in the vocab) are refused instead of recorded; merges that repeat or are out of id order
    are HF's rule, which the HF pipeline keeps."""
    p = tmp_path / "t.json"

    def attempt(doc: dict[str, object], *needles: str) -> None:
        p.write_text(json.dumps(doc), encoding="utf-8")
        refused(registry, lambda: registry.import_hf("t", p), *needles)

    ug = hf_doc(seeds, "hf-unigram")
    ug["model"]["vocab"][300][1] = 1e308  # type: ignore[index]
    attempt(ug, "out of the f32 range")
    ug = hf_doc(seeds, "hf-unigram")
    ug["model"]["vocab"][300][0] = ""  # type: ignore[index]
    attempt(ug, "empty piece")
    ug = hf_doc(seeds, "hf-unigram")
    ug["model"]["vocab"][301][0] = ug["model"]["vocab"][300][0]  # type: ignore[index]
    attempt(ug, "defined twice")
    ug = hf_doc(seeds, "hf-unigram")
    del ug["model"]["vocab"][5]  # type: ignore[attr-defined]
    attempt(ug, "255 byte pieces, not 256")
    bb = hf_doc(seeds, "hf-byte")
    vocab = bb["model"]["vocab"]  # type: ignore[index]
    del vocab[next(k for k, i in vocab.items() if i == 0x41)]
    attempt(bb, "not in the vocab")
    # A merge listed twice, merges out of id order: HF's own rule, which the HF pipeline keeps.
    bb = hf_doc(seeds, "hf-byte")
    bb["model"]["merges"].append(bb["model"]["merges"][3])  # type: ignore[index]
    p.write_text(json.dumps(bb), encoding="utf-8")
    imports_like_hf(registry, p, "twice")
    bb = hf_doc(seeds, "hf-byte")
    m = bb["model"]["merges"]  # type: ignore[index]
    m[5], m[6] = m[6], m[5]
    p.write_text(json.dumps(bb), encoding="utf-8")
    imports_like_hf(registry, p, "swapped")
    wp = hf_doc(seeds, "hf-wordpiece")
    wp["model"]["vocab"][""] = len(wp["model"]["vocab"])  # type: ignore[index]
    attempt(wp, "empty token")
    wp = hf_doc(seeds, "hf-wordpiece")
    wp["model"]["max_input_chars_per_word"] = -5  # type: ignore[index]
    attempt(wp, "max_input_chars_per_word")
    wp = hf_doc(seeds, "hf-wordpiece")
    wp["added_tokens"][0]["lstrip"] = True  # type: ignore[index]
    attempt(wp, "lstrip")


def test_byte_level_merges_other_than_the_ids_imply_import_with_the_hf_pipeline(
    seeds: dict[str, bytes], registry: Registry, tmp_path: Path
) -> None:
    """tokreg's byte-level BPE encodes by id (tiktoken's rule); a file whose merges say
    otherwise (a token no merge makes) keeps HF's pipeline and merge rule instead."""
    bb = hf_doc(seeds, "hf-byte")
    merges = bb["model"]["merges"]  # type: ignore[index]
    dropped = merges.pop(len(merges) // 2)  # its token stays in the vocab, made by no merge
    p = tmp_path / "t.json"
    p.write_text(json.dumps(bb), encoding="utf-8")
    imports_like_hf(registry, p, "t")
    assert dropped


def test_a_tokreg_file_with_a_matching_hash_but_garbage_is_refused(seeds: dict[str, bytes], tmp_path: Path) -> None:
    """A tokreg file is only as good as its hash: an attacker recomputes it. The reader and
    the encoder must still refuse what cannot be used."""
    doc = json.loads(seeds["tokreg"])
    cases = [
        ("a score", lambda d: d["tokens"][300].__setitem__(3, 1e308), "out of the f32 range"),
        ("an id", lambda d: d["tokens"][300].__setitem__(0, 2**32), "0..4294967295"),
        ("a kind", lambda d: d["tokens"][300].__setitem__(1, "nonsense"), "nonsense"),
        ("a config", lambda d: d["config"].__setitem__("byte_fallback", "yes"), ""),
    ]
    for what, change, needle in cases:
        d = json.loads(json.dumps(doc))
        change(d)
        p = tmp_path / "t.tokreg.json"
        p.write_bytes(hostile._rehash(json.dumps(d).encode()))
        try:
            Tokenizer.from_file(p)
        except InputError as e:
            assert "\n" not in str(e) and needle in str(e), (what, e)
        else:
            assert what == "a config"  # bool("yes") is true: a valid byte_fallback, hashed as written


def test_vocab_txt_with_a_missing_unknown_token_is_refused(registry: Registry, tmp_path: Path) -> None:
    p = tmp_path / "vocab.txt"
    p.write_text("a\nb\n##c\n", encoding="utf-8")
    refused(registry, lambda: registry.import_wordpiece("t", p, WordPieceOptions(vocab_size=0)), "[UNK]")


def test_add_and_verify_refuse_content_that_cannot_encode(registry: Registry) -> None:
    """`Registry.add` compiles before it writes; content no encoder takes is one line."""
    from tokreg.data import TokenizerData, TokenRow

    rows = [
        TokenRow(id=0, bytes=b"<unk>", kind="unknown", score=0.0),
        TokenRow(id=1, bytes=b"a", kind="normal", score=-1.0),
    ]
    rows.append(TokenRow(id=2, bytes=b"a", kind="normal", score=-2.0))  # the same piece twice
    config = {
        "normalizer": {
            "name": "identity",
            "add_dummy_prefix": True,
            "remove_extra_whitespaces": False,
            "escape_whitespaces": True,
        },
        "byte_fallback": False,
        "unk_token": "<unk>",
    }
    refused(registry, lambda: registry.add("x", TokenizerData("unigram", config, rows)), "defined twice")
    rows[2] = TokenRow(id=2, bytes=b"b", kind="normal", score=float("inf"))
    refused(registry, lambda: registry.add("x", TokenizerData("unigram", config, rows)), "scores must be finite")


@pytest.mark.parametrize(
    "args, content, needle",
    [
        (["import", "hf", "{f}", "--name", "x"], b"[" * 50_000 + b"]" * 50_000, "nests deeper than 64 levels"),
        (["import", "hf", "{f}", "--name", "x"], b'{"model": {"type": "BPE", "vocab": {"a": 0, "a": 1}}}', "twice"),
        (["import", "tiktoken", "{f}", "--name", "x", "--pattern", "cl100k"], b"YWI= 5000000000\n", "ranks are"),
        (["import", "wordpiece", "{f}", "--name", "x"], b"\xff\xfe\n", "not UTF-8"),
        (["import", "sentencepiece", "{f}", "--name", "x"], b"\x0a\xff\xff\xff\xff\x0f", "truncated"),
    ],
)
def test_cli_imports_of_hostile_files_are_one_line(
    run: object, tmp_path: Path, args: list[str], content: bytes, needle: str
) -> None:
    f = tmp_path / "hostile"
    f.write_bytes(content)
    res = run(*[a.format(f=f) for a in args], ok=False)  # type: ignore[operator]
    one_error_line(res, needle, str(f), code=1)
