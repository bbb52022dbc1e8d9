"""The official tiktoken vocabularies (cl100k_base, o200k_base) through tokreg: `import tiktoken`
with a pinned sha256 (a wrong one writes nothing), merges recovered from the ranks, a byte-for-byte
export, and the same ids as tiktoken itself -- on the shared corpora, on each pattern's edge cases
and on generated text -- with tiktoken's special-token rules, clear errors for lone surrogates,
raw and strict / replacing decode, batches, and loading by ref through the compiled cache."""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokreg
from tokreg import InputError, IntegrityError, Registry, Tokenizer, _core
from tokreg._core import PATTERNS
from tokreg.content import PREFIX
from tokreg.encoding import content_cache

from .conftest import CORPORA_BY_LANE, Cli, data_file, one_error_line, slow

NAMES = ["cl100k_base", "o200k_base"]
PATTERN = {"cl100k_base": "cl100k", "o200k_base": "o200k"}
# The special tokens tiktoken_ext/openai_public.py gives each encoding.
SPECIALS: dict[str, dict[str, int]] = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
ALL_SPECIALS = sorted({s for d in SPECIALS.values() for s in d})


def official_sha256(name: str) -> str:
    for line in data_file("SHA256SUMS").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("*") == f"{name}.tiktoken":
            return parts[0]
    pytest.skip(f"SHA256SUMS has no line for {name}.tiktoken")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_ranks(path: Path) -> dict[bytes, int]:
    """A `.tiktoken` file parsed here, independently of tokreg (and of tiktoken's download cache)."""
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def special_args(name: str) -> list[str]:
    return [a for s, i in SPECIALS[name].items() for a in ("--special", f"{s}={i}")]


# -- fixtures: each vocabulary imported once, loaded once, and built once in tiktoken ---------------


@dataclass
class Imported:
    db: Path
    cache: Path
    cli: Cli
    reg: Registry
    toks: dict[str, Tokenizer]
    hashes: dict[str, str]


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Imported]:
    """One registry holding both vocabularies: cl100k_base@1 imported by the CLI, o200k_base@1 by
    `Registry.import_tiktoken`, each with its official specials and the sha256 of SHA256SUMS. The
    compiled cache is a fresh folder (TOKREG_CACHE) for the whole module."""
    folder = tmp_path_factory.mktemp("tiktoken")
    paths = {n: data_file(f"{n}.tiktoken") for n in NAMES}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOKREG_CACHE", str(folder / "cache"))
        db = folder / "registry.db"
        cli = Cli(db)
        name = "cl100k_base"
        res = cli(
            "import", "tiktoken", paths[name], "--name", name, "--pattern", PATTERN[name],
            *special_args(name), "--expect-sha256", official_sha256(name), "--json",
        )  # fmt: skip
        hashes = {name: json.loads(res.stdout)["hash"]}
        reg = Registry(db)
        name = "o200k_base"
        v = reg.import_tiktoken(
            name, paths[name], pattern=PATTERN[name], specials=SPECIALS[name], expect_sha256=official_sha256(name)
        )
        assert v.ref == "o200k_base@1"
        hashes[name] = v.content_hash
        toks = {n: reg.load(f"{n}@1") for n in NAMES}
        yield Imported(db, folder / "cache", cli, reg, toks, hashes)
        reg.close()


@pytest.fixture(scope="module")
def encodings() -> dict[str, Any]:
    """tiktoken's own Encodings: name, pattern and specials from tiktoken_ext.openai_public (its
    rank loader pointed at the shared files), else tokreg's copy of the official patterns."""
    tiktoken = pytest.importorskip("tiktoken")
    try:
        openai_public: Any = importlib.import_module("tiktoken_ext.openai_public")
    except ImportError:
        openai_public = None

    def load_local(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        path = data_file(url.rsplit("/", 1)[-1])
        assert expected_hash in (None, sha256_of(path)), f"{path} is not the official file"
        return read_ranks(path)

    out: dict[str, Any] = {}
    for name in NAMES:
        if openai_public is None:
            spec = {
                "name": name,
                "pat_str": PATTERNS[PATTERN[name]],
                "mergeable_ranks": load_local(f"{name}.tiktoken"),
                "special_tokens": SPECIALS[name],
            }
        else:
            with pytest.MonkeyPatch.context() as mp:
                mp.setattr(openai_public, "load_tiktoken_bpe", load_local)
                spec = getattr(openai_public, name)()
            assert spec["special_tokens"] == SPECIALS[name]
        out[name] = tiktoken.Encoding(**spec)
    return out


# -- 1. import: pinned sha256, specials, merges recovered from the ranks -------------------------------


def count_rows(reg: Registry) -> dict[str, int]:
    return {t: reg.sql(f"SELECT count(*) FROM {t}")[1][0][0] for t in ("versions", "tokens", "merges")}


@pytest.mark.parametrize("name", NAMES)
def test_import_records_the_official_vocabulary(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    reg, tok = imported.reg, imported.toks[name]
    v = reg.resolve(f"{name}@1")
    assert v.content_hash == imported.hashes[name] == tok.hash
    assert v.source == "import:tiktoken" and v.algorithm == "bpe"
    assert v.config["byte_level"] is True
    assert v.config["pattern"] == PATTERNS[PATTERN[name]] == encodings[name]._pat_str
    assert tok.special_tokens == SPECIALS[name]
    ranks = read_ranks(data_file(f"{name}.tiktoken"))
    assert v.vocab_size == tok.vocab_size == len(ranks) + len(SPECIALS[name])
    _, kinds = reg.sql(
        "SELECT t.kind, count(*), min(t.id), max(t.id) FROM tokens t JOIN versions v ON v.id = t.version_id "
        f"WHERE v.name = '{name}' AND v.number = 1 GROUP BY t.kind ORDER BY t.kind"
    )
    specials = SPECIALS[name].values()
    assert kinds == [
        ("byte", 256, 0, 255),
        ("merged", len(ranks) - 256, 256, len(ranks) - 1),
        ("special", len(SPECIALS[name]), min(specials), max(specials)),
    ]
    for s, i in SPECIALS[name].items():
        assert tok.token_bytes(i) == s.encode() and tok.decode([i]) == s


@pytest.mark.parametrize("name", ["cl100k_base", slow("o200k_base")])
def test_merges_are_recovered_from_the_ranks(imported: Imported, name: str) -> None:
    ranks = read_ranks(data_file(f"{name}.tiktoken"))
    # through the CLI: the count, and the first merge of each vocabulary joins two bytes
    out = imported.cli(
        "sql",
        f"SELECT count(*) AS n, min(rank) AS lo, max(rank) AS hi FROM merges_view WHERE tokenizer = '{name}@1'",
        "--json",
    ).output
    assert json.loads(out) == [{"n": len(ranks) - 256, "lo": 0, "hi": len(ranks) - 257}]
    first = json.loads(
        imported.cli(
            "sql",
            "SELECT rank, left_text, right_text, result_text, left_id, right_id, result_id FROM merges_view "
            f"WHERE tokenizer = '{name}@1' ORDER BY rank LIMIT 3",
            "--json",
        ).output
    )
    assert first[0]["left_id"] < 256 and first[0]["right_id"] < 256
    assert [m["result_id"] for m in first] == [256, 257, 258]
    assert all(m["left_text"] + m["right_text"] == m["result_text"] for m in first)

    # through the API: every merge joins two earlier tokens into the token of rank 256 + merge rank
    _, rows = imported.reg.sql(
        "SELECT m.rank, m.left_id, m.right_id, m.result_id, l.bytes, r.bytes, z.bytes FROM merges m "
        "JOIN versions v ON v.id = m.version_id "
        "JOIN tokens l ON l.version_id = m.version_id AND l.id = m.left_id "
        "JOIN tokens r ON r.version_id = m.version_id AND r.id = m.right_id "
        "JOIN tokens z ON z.version_id = m.version_id AND z.id = m.result_id "
        f"WHERE v.name = '{name}' AND v.number = 1 ORDER BY m.rank"
    )
    assert len(rows) == len(ranks) - 256
    pairs: dict[bytes, tuple[bytes, bytes]] = {}
    for rank, left, right, result, lb, rb, zb in rows:
        assert result == rank + 256 and left < result and right < result
        assert bytes(lb) + bytes(rb) == bytes(zb) and ranks[bytes(zb)] == result
        pairs[bytes(zb)] = (bytes(lb), bytes(rb))
    # and the pair is the one tiktoken's own merge loop ends with, using only lower ranks
    for token in sorted(pairs, key=ranks.__getitem__)[::499]:
        assert bpe_last_pair(ranks, token) == pairs[token], token


def bpe_last_pair(ranks: dict[bytes, int], token: bytes) -> tuple[bytes, bytes]:
    """tiktoken's rule on `token`'s bytes, merging only pairs ranked below `token` itself."""
    parts = [bytes([b]) for b in token]
    limit = ranks[token]
    while len(parts) > 2:
        scored = [(ranks.get(parts[i] + parts[i + 1], limit), i) for i in range(len(parts) - 1)]
        best, i = min(scored)
        if best >= limit:
            break
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    assert len(parts) == 2, f"{token!r} cannot be built from lower ranks: {parts}"
    return parts[0], parts[1]


def test_wrong_sha256_writes_nothing(imported: Imported) -> None:
    path = data_file("cl100k_base.tiktoken")
    official, wrong = official_sha256("cl100k_base"), "0" * 64
    before = (count_rows(imported.reg), imported.cli("list", "--json").output)
    res = imported.cli(
        "import", "tiktoken", path, "--name", "cl100k_wrong", "--pattern", "cl100k",
        *special_args("cl100k_base"), "--expect-sha256", wrong, ok=False,
    )  # fmt: skip
    one_error_line(res, official, wrong, "nothing was written", code=IntegrityError.exit_code)
    # the o200k file given cl100k's hash, through the API
    with pytest.raises(IntegrityError) as err:
        imported.reg.import_tiktoken(
            "o200k_wrong", data_file("o200k_base.tiktoken"), pattern="o200k", expect_sha256=official
        )
    assert official in str(err.value) and official_sha256("o200k_base") in str(err.value)
    assert (count_rows(imported.reg), imported.cli("list", "--json").output) == before
    assert "cl100k_wrong" not in imported.cli("list").output


def test_small_rank_file_round_trip(run: Cli, registry: Registry, tmp_path: Path) -> None:
    """A cut-down rank file (the bytes and the first 300 merges): the hash may be given in upper
    case with a `sha256:` prefix; the CLI and the API export it back byte for byte."""
    lines = data_file("cl100k_base.tiktoken").read_bytes().splitlines(keepends=True)[:556]
    small = tmp_path / "small.tiktoken"
    small.write_bytes(b"".join(lines))
    sha = sha256_of(small)
    out = run("import", "tiktoken", small, "--name", "small", "--pattern", "cl100k", "--special",
              "<|endoftext|>=600", "--expect-sha256", f"SHA256:{sha.upper()}").output  # fmt: skip
    assert out.startswith("small@1  xxh3-128:") and "(557 tokens, imported from" in out
    assert "wrote small@1" in run("export", "small@1", "--format", "tiktoken", "-o", tmp_path / "cli.tiktoken").output
    registry.export("small@1", "tiktoken", tmp_path / "api.tiktoken")
    assert sha256_of(tmp_path / "cli.tiktoken") == sha256_of(tmp_path / "api.tiktoken") == sha
    tok = registry.load("small@1")
    assert tok.encode("in the<|endoftext|>", allowed_special="all")[-1] == 600
    assert tok.decode(tok.encode("  in the  end\n")) == "  in the  end\n"


# -- 2. export: the official files back, byte for byte ----------------------------------------------


@pytest.mark.parametrize("name", ["cl100k_base", slow("o200k_base")])
def test_export_is_byte_identical(imported: Imported, tmp_path: Path, name: str) -> None:
    out = tmp_path / f"{name}.tiktoken"
    res = imported.cli("export", f"{name}@1", "--format", "tiktoken", "-o", out)
    assert f"wrote {name}@1" in res.output
    assert sha256_of(out) == official_sha256(name)
    assert out.read_bytes() == data_file(f"{name}.tiktoken").read_bytes()


# -- 3. the same ids as tiktoken ---------------------------------------------------------------------


@pytest.mark.parametrize("corpus", CORPORA_BY_LANE)
@pytest.mark.parametrize("name", NAMES)
def test_same_ids_as_tiktoken_on_the_corpora(
    imported: Imported, encodings: dict[str, Any], name: str, corpus: str
) -> None:
    tok, enc = imported.toks[name], encodings[name]
    text = data_file(corpus).read_text(encoding="utf-8")
    ours = tok.encode_ordinary(text)
    assert ours == enc.encode_ordinary(text)
    assert tok.encode(text) == ours and tok.decode_bytes(ours) == text.encode("utf-8")
    lines = text.splitlines(keepends=True)
    bad = [x for x in lines if tok.encode_ordinary(x) != enc.encode_ordinary(x)]
    assert not bad, f"{len(bad)} of {len(lines)} lines differ, first: {bad[0][:80]!r}"


EDGE_CASES = [
    "", " ", "  ", "   a", "a   ", "a   b", "\n", "\n\n\n", " \n ", "  \n", "a  \n", "a \n\n b", "hello \t\n world",
    "\t", "\t\t x", "\r\n", "x\r\ny", "x \r\n y", "\r\n\r\n  ", " \r", "\r\r\n", "\x0b\x0c", "\u2028\u2029", "\u0085",
    "\u00a0", "\u00a0\u00a0x", "x\u00a0", "a \u00a0b", "\u3000", "x\u3000", "\u3000x", "x\u2009\u2009y",
    "1", "12", "123", "1234", "12345678", "123 4567 89", "1" * 100, "3.14159", "-42", "٣٤٥", "١٢٣٤٥", "१२३४",
    "𝟘𝟙", "𝟘𝟙𝟚𝟛", "①②", "ⅫⅢ", "½", "x²", "I'M", "I'm", "don'T", "DON'T", "foo's", "FOO'S", "we'll", "WE'LL",
    "they're", "THEY'RE", "I've", "I'VE", "he'd", "HE'D", "'s", "'S", "'", "''", "' s", "x'", "'S'll'RE'Ve'd",
    "HELLO'S", "Hello'S world", "ÀÉ'S", "ÉCOLE's", "l’été", "it’s", "!!!", "?!", "...", " ???\n\n", "a/b//c\n",
    "a, b; c: d.", "--", " -- ", "(x)", "«»", "¿¡", "、。！", "a\u0300b", "e\u0301", "\u0301\u0301a", "A\u0345",
    "\u0300", " \u0300", "\u0301x\u0301", "ǅemal", "ǄǅǆX", "ǅ", "ABCdef", "abcDEF", "aBcDeF", "McDonald's", "ΣΑΣ σας",
    "straße", "İstanbul", "中文 测试", "你好，世界。", "مرحبا بالعالم", "नमस्ते दुनिया", "한국어 텍스트",
    "日本語のテキスト",
    "ᚠᚢᚦ", "ꙮ", "𐍈", "👍", "👍🏽", "👩\u200d👩\u200d👧", " 👩\u200d👩\u200d👧 ", "🧑\u200d💻", "🏳️\u200d🌈", "🇫🇷🇩🇪",
    "❤️", "a\u200db", "\ufeff", "\x00", "\x7f", "\U0010ffff", "\ue000", "\ufffd", "x" * 1000, " " * 1000,
    "a" + " " * 50 + "b", "\n" * 100, "<|endoftext", "<|", "|>", "<|endoftext|", "def f(x):\n    return x\n",
]  # fmt: skip


@pytest.mark.parametrize("text", EDGE_CASES, ids=[f"{i}:{t[:12]!r}" for i, t in enumerate(EDGE_CASES)])
@pytest.mark.parametrize("name", NAMES)
def test_same_ids_as_tiktoken_on_edge_cases(
    imported: Imported, encodings: dict[str, Any], name: str, text: str
) -> None:
    tok, enc = imported.toks[name], encodings[name]
    ids = tok.encode_ordinary(text)
    assert ids == enc.encode_ordinary(text)
    assert tok.encode(text) == ids == enc.encode(text)
    assert tok.decode_bytes(ids) == text.encode("utf-8") and tok.decode(ids, errors="strict") == text


def _cased(word: str) -> st.SearchStrategy[str]:
    flags = st.lists(st.booleans(), min_size=len(word), max_size=len(word))
    return flags.map(lambda up: "".join(c.upper() if u else c for c, u in zip(word, up)))


def _chars(lo: int, hi: int, size: int = 8) -> st.SearchStrategy[str]:
    return st.text(st.characters(min_codepoint=lo, max_codepoint=hi), min_size=1, max_size=size)


WHITESPACE = [" ", " ", " ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2009", "\x0b", "\x0c", "\u2028", "\u0085"]
PIECES = st.one_of(
    st.text(st.characters(categories=("Lu", "Ll", "Lt", "Lm"), max_codepoint=0x24F), min_size=1, max_size=10),
    _chars(0x4E00, 0x9FFF),  # CJK
    _chars(0x0600, 0x06FF),  # Arabic
    _chars(0x0900, 0x097F),  # Devanagari
    _chars(0xAC00, 0xD7A3),  # Hangul
    _chars(0x0300, 0x036F, 3),  # combining marks
    _chars(0x1F300, 0x1FAFF, 3),  # emoji
    st.sampled_from(["👩\u200d👩\u200d👧", "🧑\u200d💻", "👍🏽", "🏳️\u200d🌈", "❤️", "🇫🇷", "\u200d", "\ufe0f"]),
    st.sampled_from(["ǅ", "ǈ", "ᾈ", "ß", "İ", "ﬁ", "Ω", "µ", "ŉ"]),  # titlecase and odd case mappings
    st.lists(st.sampled_from(WHITESPACE), min_size=1, max_size=6).map("".join),
    st.text("0123456789", min_size=1, max_size=40),
    st.integers(min_value=0).map(str),
    _chars(0x0660, 0x0669, 5),  # Arabic-Indic digits
    st.sampled_from(["𝟘𝟙", "①", "Ⅻ", "½", "²"]),
    st.sampled_from(["s", "t", "re", "ve", "m", "ll", "d"]).flatmap(_cased).map(lambda c: "'" + c),
    st.sampled_from(["’s", "'", "''", "'x"]),
    st.text("!?.,;:-—…()[]{}<>/\\|\"'`~@#$%^&*_+=«»¿¡、。！", min_size=1, max_size=6),
    st.text(max_size=12),
)
TEXTS = st.lists(PIECES, max_size=12).map("".join)
WITH_SPECIALS = st.lists(st.one_of(PIECES, st.sampled_from(ALL_SPECIALS)), max_size=10).map("".join)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(text=TEXTS)
def test_same_ids_as_tiktoken_on_generated_text(
    imported: Imported, encodings: dict[str, Any], name: str, text: str
) -> None:
    tok, enc = imported.toks[name], encodings[name]
    ids = tok.encode_ordinary(text)
    assert ids == enc.encode_ordinary(text)
    assert tok.decode_bytes(ids) == text.encode("utf-8")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=300, deadline=None)
@given(text=WITH_SPECIALS)
def test_same_special_token_rules_as_tiktoken_on_generated_text(
    imported: Imported, encodings: dict[str, Any], name: str, text: str
) -> None:
    tok, enc = imported.toks[name], encodings[name]
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert (
        tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=()) == tok.encode_ordinary(text)
    )
    eot = {"<|endoftext|>"}
    assert tok.encode(text, allowed_special=eot, disallowed_special=()) == enc.encode(
        text, allowed_special=eot, disallowed_special=()
    )
    try:
        theirs = enc.encode(text)
    except ValueError as e:
        with pytest.raises(InputError) as err:
            tok.encode(text)
        found = str(e).split("'")[1]  # tiktoken names the first special token in the text
        assert f"special token {found!r}" in str(err.value)
    else:
        assert tok.encode(text) == theirs


# -- 4. special tokens --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_special_tokens_follow_tiktoken(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    tok, enc = imported.toks[name], encodings[name]
    eot, eop = SPECIALS[name]["<|endoftext|>"], SPECIALS[name]["<|endofprompt|>"]
    text = "Hello<|endoftext|> world<|endofprompt|>\n<|endoftext|>"
    head = data_file("dr.en.txt").read_text(encoding="utf-8")[:20_000]
    mixed = "<|endoftext|>".join(head.split("\n\n")) + "<|endofprompt|>"

    for t in (text, mixed):
        assert tok.encode(t, allowed_special="all") == enc.encode(t, allowed_special="all")
    assert tok.encode(text, allowed_special="all").count(eot) == 2 and eop in tok.encode(text, allowed_special="all")

    # refused by default, naming the token (tiktoken: ValueError, tokreg: InputError)
    with pytest.raises(InputError, match=r"special token '<\|endoftext\|>'.*allowed_special.*disallowed_special=\(\)"):
        tok.encode(text)
    with pytest.raises(ValueError, match="<\\|endoftext\\|>"):
        enc.encode(text)
    # the first one in the text is named, whatever its name
    with pytest.raises(InputError, match=r"'<\|endofprompt\|>'"):
        tok.encode("x<|endofprompt|>y<|endoftext|>")
    with pytest.raises(InputError, match=r"'<\|endoftext\|>'"):
        tok.encode("x<|endoftext|>y<|endofprompt|>")

    # an allowed subset: another special in the text is still refused
    with pytest.raises(InputError, match=r"'<\|endofprompt\|>'"):
        tok.encode(text, allowed_special={"<|endoftext|>"})
    with pytest.raises(ValueError):
        enc.encode(text, allowed_special={"<|endoftext|>"})
    for allowed in ({"<|endoftext|>"}, frozenset({"<|endofprompt|>"}), ["<|endoftext|>"]):
        assert tok.encode(text, allowed_special=allowed, disallowed_special=()) == enc.encode(
            text, allowed_special=set(allowed), disallowed_special=()
        )

    # disallowed_special=(): encoded as ordinary text
    plain = tok.encode(text, disallowed_special=())
    assert plain == enc.encode(text, disallowed_special=()) == tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert eot not in plain and eop not in plain and tok.decode(plain) == text

    # only some disallowed: the others are text
    assert tok.encode("x<|endoftext|>", disallowed_special={"<|endofprompt|>"}) == enc.encode(
        "x<|endoftext|>", disallowed_special={"<|endofprompt|>"}
    )
    with pytest.raises(InputError, match=r"'<\|endofprompt\|>'"):
        tok.encode(text, disallowed_special={"<|endofprompt|>"})

    # a string that is not a special token of this vocabulary is text (cl100k's FIM tokens in o200k)
    fim = "a<|fim_prefix|>b"
    if "<|fim_prefix|>" in tok.special_tokens:
        assert tok.encode(fim, allowed_special="all") == enc.encode(fim, allowed_special="all")
        assert tok.encode(fim, allowed_special="all")[1] == SPECIALS[name]["<|fim_prefix|>"]
    else:
        assert tok.encode(fim) == enc.encode(fim) == tok.encode_ordinary(fim)
    # tiktoken also refuses a disallowed string that is not one of its special tokens
    with pytest.raises(ValueError):
        enc.encode("say foo", disallowed_special={"foo"})
    with pytest.raises(InputError, match="special token 'foo'"):
        tok.encode("say foo", disallowed_special={"foo"})
    assert tok.encode("say foo", allowed_special={"foo"}) == enc.encode("say foo", allowed_special={"foo"})


def test_cli_encode_and_decode_with_specials(imported: Imported, encodings: dict[str, Any]) -> None:
    enc, text = encodings["cl100k_base"], "hi<|endoftext|> there"
    # The Python API's rule: special-token text is refused until the user says what it is.
    refused = imported.cli("encode", "cl100k_base@1", text, ok=False)
    assert refused.exit_code == 1 and len(refused.output.strip().splitlines()) == 1
    assert "'<|endoftext|>'" in refused.output and "--allow-special" in refused.output
    assert "--special-as-text" in refused.output
    as_text = imported.cli("encode", "cl100k_base@1", text, "--special-as-text").output.split()
    assert [int(i) for i in as_text] == enc.encode_ordinary(text)
    count = imported.cli("encode", "cl100k_base@1", text, "--special-as-text", "--count").output
    assert int(count) == len(as_text)
    special = imported.cli("encode", "cl100k_base@1", text, "--allow-special").output.split()
    assert [int(i) for i in special] == enc.encode(text, allowed_special="all")
    assert imported.cli("decode", "cl100k_base@1", *special).output == text + "\n"


# -- 5. lone surrogates ---------------------------------------------------------------------------------


SURROGATE_CALLS: dict[str, Callable[[Tokenizer, str], object]] = {
    "encode_ordinary": lambda t, s: t.encode_ordinary(s),
    "encode": lambda t, s: t.encode(s),
    "encode_all": lambda t, s: t.encode(s, allowed_special="all"),
    "encode_batch": lambda t, s: t.encode_batch(["fine", s]),
}


@pytest.mark.parametrize("call", sorted(SURROGATE_CALLS))
@pytest.mark.parametrize("name", NAMES)
def test_lone_surrogate_is_a_clear_error(imported: Imported, encodings: dict[str, Any], name: str, call: str) -> None:
    """tiktoken silently turns a lone surrogate into U+FFFD; tokreg refuses it, says where, and
    suggests the clean-up that gives tiktoken's ids."""
    tok, enc = imported.toks[name], encodings[name]
    for text, index in (("ab\ud800c", 2), ("\udfff", 0), ("x<|endoftext|>\ud83d\ude00 \udc00", 14)):
        with pytest.raises(InputError, match=f"lone surrogate at index {index}") as err:
            SURROGATE_CALLS[call](tok, text)
        if call == "encode_batch":
            assert "text 1 of the batch" in str(err.value)
        msg = str(err.value)
        assert "text.encode('utf-16', 'surrogatepass').decode('utf-16', 'replace')" in msg
        cleaned = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        assert "\ufffd" in cleaned
        assert tok.encode_ordinary(cleaned) == enc.encode_ordinary(text) == enc.encode_ordinary(cleaned)


# -- 6. decoding -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_decode_bytes_strict_and_replace(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    tok, enc = imported.toks[name], encodings[name]
    text = "naïve 你好 𝟘 ᚠ 👩\u200d👩\u200d👧"
    ids = tok.encode(text)
    raw = tok.decode_bytes(ids)
    assert isinstance(raw, bytes) and raw == text.encode("utf-8") == enc.decode_bytes(ids)
    assert tok.decode(ids, errors="strict") == tok.decode(ids) == text

    for ch in ("𝟘", "ᚠ", "🫠"):  # characters these vocabularies split over several tokens
        cut = tok.encode(ch)[:-1]
        assert cut, f"{ch!r} is one token in {name}; pick another character"
        partial = tok.decode_bytes(cut)
        assert partial == ch.encode("utf-8")[: len(partial)] and partial
        with pytest.raises(InputError, match="not valid UTF-8 at byte 0"):
            tok.decode(cut, errors="strict")
        assert tok.decode(cut, errors="replace") == partial.decode("utf-8", "replace") == enc.decode(cut)
        assert tok.decode(cut) == "\ufffd"
        assert tok.decode([*cut, *tok.encode("a")]) == "\ufffda"

    # a token that is a lone UTF-8 continuation byte
    _, rows = imported.reg.sql(
        "SELECT t.id FROM tokens t JOIN versions v ON v.id = t.version_id "
        f"WHERE v.name = '{name}' AND v.number = 1 AND t.bytes = X'80'"
    )
    (cont,) = rows[0]
    assert tok.token_bytes(cont) == tok.decode_bytes([cont]) == b"\x80" == enc.decode_single_token_bytes(cont)
    with pytest.raises(InputError, match="not valid UTF-8"):
        tok.decode([cont], errors="strict")
    assert tok.decode([cont], errors="replace") == "\ufffd" == enc.decode([cont])
    assert tok.decode([cont], errors="ignore") == ""
    assert tok.decode([cont], errors="backslashreplace") == "\\x80"

    # ids that are not tokens: a clear error, not a crash
    for bad in (tok.vocab_size + 10**6, -1, 2**40):
        with pytest.raises(InputError, match="cannot decode"):
            tok.decode([bad])
    gap = max(SPECIALS[name].values()) - 1  # between the specials, or just below the last one
    with pytest.raises(InputError, match=f"no token id {gap}") as err:
        tok.token_bytes(gap)
    assert f"0..{max(SPECIALS[name].values())}" in str(err.value)


# -- 7. batches ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_encode_batch_matches_encode(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    tok, enc = imported.toks[name], encodings[name]
    lines = data_file("dr.zh-cn.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:3000]
    texts = [*lines, *EDGE_CASES, "a<|endoftext|>b", ""]
    one_by_one = [tok.encode_ordinary(t) for t in texts]
    assert one_by_one == enc.encode_ordinary_batch(texts)
    for threads in (0, 1, 2):
        assert tok.encode_ordinary_batch(texts, threads=threads) == one_by_one
        assert tok.encode_batch(texts, threads=threads, disallowed_special=()) == one_by_one
    assert tok.encode_batch(iter(texts[:10]), threads=2) == one_by_one[:10]
    assert tok.encode_batch([]) == []
    # encode_batch follows encode's special-token rule, as tiktoken's does
    with pytest.raises(ValueError, match="<\\|endoftext\\|>"):
        enc.encode_batch(texts)
    with pytest.raises(InputError, match=r"text 3\d+ of the batch contains the special token '<\|endoftext\|>'"):
        tok.encode_batch(texts)
    allowed = tok.encode_batch(texts, allowed_special="all")
    assert allowed == enc.encode_batch(texts, allowed_special="all")
    with pytest.raises(InputError, match="threads"):
        tok.encode_batch(texts, threads=-1)


# -- 8. loading by ref, through the compiled cache ---------------------------------------------------------


def test_load_by_ref_and_compiled_cache(
    imported: Imported, encodings: dict[str, Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOKREG_DB", str(imported.db))
    monkeypatch.chdir(tmp_path)  # no tokreg.lock above
    assert content_cache.cache_dir() == imported.cache
    text = data_file("dr.en.txt").read_text(encoding="utf-8")[:50_000]
    want = encodings["cl100k_base"].encode_ordinary(text)

    tok = tokreg.load("cl100k_base@1")
    h = imported.hashes["cl100k_base"]
    assert (tok.ref, tok.hash) == ("cl100k_base@1", h) and tok.encode_ordinary(text) == want
    assert tokreg.load("cl100k_base").hash == h
    cached = imported.cache / (h.removeprefix(PREFIX) + ".content")
    assert cached.is_file() and content_cache.get(h) == cached.read_bytes()

    # a second load reads the cached content, not the rows
    def no_rows(*args: object) -> None:
        raise AssertionError("the rows were read although the compiled cache holds this version")

    with monkeypatch.context() as mp:
        mp.setattr("tokreg.store.reads.read_version", no_rows)
        again = tokreg.load("cl100k_base@1")
        assert again.hash == h and again.encode_ordinary(text) == want
        with Registry(imported.db) as reg:
            assert reg.load("cl100k_base@1").encode_ordinary(text) == want

    # a damaged cache file is ignored and rebuilt from the rows
    cached.write_bytes(b"garbage")
    with Registry(imported.db) as reg:
        rebuilt = reg.load("cl100k_base@1")
    assert rebuilt.hash == h and rebuilt.encode_ordinary(text) == want
    assert content_cache.get(h) is not None and os.path.getsize(cached) > 1_000_000


# -- 9. long pieces and the caches: the same ids as tiktoken, first time, again, under threads --------


def _long_pieces() -> dict[str, str]:
    """Pieces long enough for the chunked path (8 KB and more), each one piece for both patterns."""
    import random

    rng = random.Random(9)
    return {
        "letter": "a" * 20_000,
        "spaces": " " * 20_000 + "x",
        "cjk": "中" * 7_000,
        "two letters": "".join(rng.choice("ab") for _ in range(20_000)),
        "lowercase": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(20_000)),
        "period 3": "abc" * 7_000,
        "one change": "a" * 15_000 + "b" + "a" * 5_000,
        "accents": "".join(rng.choice("eéèaàç") for _ in range(10_000)),
        "kana": "".join(rng.choice("あいうえおかきくけこ") for _ in range(7_000)),
        "replacement chars": "\ufffd" * 7_000,
    }


@pytest.mark.parametrize("name", NAMES)
def test_long_pieces_equal_tiktoken(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    tok, enc = imported.toks[name], encodings[name]
    for label, text in _long_pieces().items():
        want = enc.encode_ordinary(text)
        assert tok.encode_ordinary(text) == want, label
        assert tok.encode_ordinary("x " + text + " y") == enc.encode_ordinary("x " + text + " y"), label


@pytest.mark.parametrize("name", NAMES)
def test_piece_cache_never_changes_a_result(imported: Imported, encodings: dict[str, Any], name: str) -> None:
    """Ids from a fresh encoder, from one whose cache holds the same pieces, from threads that each
    keep their own, and after more encoders than a thread keeps caches for: always tiktoken's."""
    enc = encodings[name]
    raw = content_cache.get(imported.hashes[name])
    assert raw is not None
    text = data_file("dr.zh-cn.txt").read_text(encoding="utf-8")[:60_000] + data_file("kjv.txt").read_text()[:60_000]
    docs = [text[i : i + 3000] for i in range(0, len(text), 3000)]
    want = [enc.encode_ordinary(d) for d in docs]
    # several compiled encoders of one version (a fresh one each: no shared cache)
    fresh = [_core.Encoder.byte_bpe(raw, PATTERNS[PATTERN[name]]) for _ in range(4)]
    for round_ in range(2):  # the second round hits the caches the first filled
        for e in fresh:  # four encoders in turn on one thread: caches are dropped and remade
            assert [e.encode_ordinary(d) for d in docs] == want, round_
        for threads in (1, 2):
            assert fresh[0].encode_batch(docs, [], threads) == want


# -- the built-encoder cache (encoding/built_cache.py) ---------------------------------------------


def _replace(path: Path, data: bytes) -> None:
    """Puts `data` at `path` as a new file renamed over the old one, as the cache's own writer
    does: a process that has the old file mapped keeps the old file (built_cache.py, "In place")."""
    tmp = path.with_name(".tmp-test-" + path.name)
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _forget(h: str) -> None:
    """As a new process starts: no encoder compiled in this one."""
    from tokreg.encoding import tokenizer as tokenizer_module

    tokenizer_module._compiled.pop(h, None)


@pytest.mark.parametrize("name", ["cl100k_base", slow("o200k_base")])
def test_built_encoder_cache_gives_the_built_ids_and_rebuilds_a_bad_file(
    imported: Imported, encodings: dict[str, Any], name: str
) -> None:
    """Loading put the built encoder beside the content in the module's cache, read-only; a later
    process (here: this one with its in-process encoders forgotten) maps it instead of building,
    reads its tables in place, and encodes held-out text (the tail of every corpus) exactly as a
    freshly built encoder and tiktoken do. A truncated, damaged, empty or foreign file, or one of
    the previous format, is never used: the load builds from the content and writes it again."""
    from tokreg.encoding import built_cache

    h = imported.hashes[name]
    path = built_cache.path_of(h)
    assert path is not None and path.parent == imported.cache and path.is_file()
    assert path.stat().st_mode & 0o222 == 0  # read-only: a plain `cp` over it fails
    text = b"".join(data_file(c).read_bytes()[-6_000:] for c in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt"))
    held_out = text.decode("utf-8", errors="replace")
    fresh = imported.toks[name].content
    size = len(fresh)
    built = Tokenizer(fresh, ref="fresh", _hashed=h)._enc  # compiled in this process, not thawed
    expected = encodings[name].encode_ordinary(held_out)
    assert built.encode_ordinary(held_out) == expected and not built.tables_in_place

    def load_fresh() -> Tokenizer:
        _forget(h)
        tok = Tokenizer.cached(h, f"{name}@1")
        return tok if tok is not None else imported.reg.load(f"{name}@1")

    thawed = built_cache.get(h, size)
    assert thawed is not None and thawed[0].tables_in_place
    assert thawed[0].encode_ordinary(held_out) == expected
    tok = load_fresh()
    assert tok._content is None and tok._enc.tables_in_place  # the content was not read
    assert tok.encode_ordinary(held_out) == expected and tok.special_tokens == SPECIALS[name]
    assert tok.title == "byte-level BPE" and tok.lossless and tok.template is None  # read on first use
    assert tok.content == fresh  # read (and checked) on first use
    good = path.read_bytes()
    middle = len(good) // 2
    other = imported.hashes[NAMES[1 - NAMES.index(name)]]
    old_format = good[:8] + (1).to_bytes(4, "little") + good[12:]
    bad_files = {
        "half": good[:middle],
        "one byte short": good[:-1],
        "empty": b"",
        "a byte changed in the middle": good[:middle] + bytes([good[middle] ^ 1]) + good[middle + 1 :],
        "a byte changed in the last table": good[:-9] + bytes([good[-9] ^ 0x10]) + good[-8:],
        "another vocabulary's": path.with_name(other[len(PREFIX) :] + ".encoder").read_bytes(),
        "the previous format": old_format,
    }
    for what, bad in bad_files.items():
        _replace(path, bad)
        assert built_cache.get(h, size) is None, what
        again = load_fresh()
        assert again.encode_ordinary(held_out) == expected, what
        assert path.read_bytes() == good, what  # built from content and written again
        assert load_fresh()._enc.tables_in_place, what
    # Written by another build of the core, or for content of another size: not this one's.
    assert built_cache.get(h, size + 1) is None
    tag = built_cache._tag(h, size)
    assert _core.Encoder.thaw(good, tag) is not None
    assert _core.Encoder.thaw(good, tag.replace(b"\n", b"\nanother core ", 1)) is None


def test_a_mapped_encoder_outlives_its_file(imported: Imported, encodings: dict[str, Any]) -> None:
    """A process that has mapped a built encoder keeps encoding right when the file is replaced
    (by a rename, as the cache writes) or deleted meanwhile: the mapping holds the old file. The
    next load finds the new file, refuses it, and builds."""
    from tokreg.encoding import built_cache

    name = "cl100k_base"
    h = imported.hashes[name]
    path = built_cache.path_of(h)
    assert path is not None
    text = data_file("dr.zh-cn.txt").read_text(encoding="utf-8")[-4_000:] + data_file("kjv.txt").read_text()[-4_000:]
    expected = encodings[name].encode_ordinary(text)
    _forget(h)
    mapped = Tokenizer.cached(h, f"{name}@1")
    assert mapped is not None and mapped._enc.tables_in_place
    good = path.read_bytes()
    _replace(path, bytes(len(good)))  # same size, all zeros
    assert mapped.encode_ordinary(text) == expected
    _forget(h)
    assert Tokenizer.cached(h, f"{name}@1") is None  # the new file is refused
    path.unlink()
    assert mapped.encode_ordinary(text) == expected
    _forget(h)
    assert imported.reg.load(f"{name}@1").encode_ordinary(text) == expected
    assert path.read_bytes() == good


def test_a_content_file_beside_a_built_encoder_is_checked_by_size_then_by_hash(
    imported: Imported, encodings: dict[str, Any]
) -> None:
    """The rule of built_cache.py: a load that only encodes does not read the content file, but
    takes the built encoder only when that file has the size the encoder names; so one cut short
    is noticed at load (the content is read again from the registry and cached). One damaged at
    the same size is found where the content is first read: refused in one line, removed, and
    read again from the registry by the next load. Encoding never depends on it."""
    from tokreg.encoding import built_cache

    name = "cl100k_base"
    h = imported.hashes[name]
    content_file = content_cache.path_of(h)
    assert content_file is not None
    fresh = content_file.read_bytes()
    text = "hello world, 你好世界"
    expected = encodings[name].encode_ordinary(text)
    _forget(h)
    _replace(content_file, fresh[:-1])
    assert Tokenizer.cached(h, f"{name}@1") is None
    assert imported.reg.load(f"{name}@1").encode_ordinary(text) == expected
    assert content_file.read_bytes() == fresh  # read from the registry, checked, cached again
    _forget(h)
    damaged = fresh[:-5] + bytes([fresh[-5] ^ 1]) + fresh[-4:]
    _replace(content_file, damaged)
    tok = Tokenizer.cached(h, f"{name}@1")
    assert tok is not None and tok.encode_ordinary(text) == expected
    with pytest.raises(tokreg.NotFoundError) as e:
        _ = tok.content
    assert "\n" not in str(e.value) and "damaged" in str(e.value) and h in str(e.value)
    assert not content_file.exists()
    _forget(h)
    assert Tokenizer.cached(h, f"{name}@1") is None
    assert imported.reg.load(f"{name}@1").content == fresh
    assert content_file.read_bytes() == fresh
    # `cache verify` removes a built encoder whose content is not cached beside it: no load uses it.
    built = built_cache.path_of(h)
    assert built is not None and built_cache.check(h) == built_cache.INTACT
    content_file.unlink()
    assert built_cache.check(h) == built_cache.REMOVED and not built.exists()
    _forget(h)
    assert imported.reg.load(f"{name}@1").content == fresh  # and both are cached again
    assert content_file.is_file() and built.is_file()
