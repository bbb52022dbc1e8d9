"""`.tiktoken` rank files as they come: the presets of the well-known encodings (their pattern and
every special token at its official id, checked against tiktoken's own `openai_public.py` and
against tiktoken's ids on every line of the shared corpora), empty tokens (`= RANK`, as in
OpenAI's Whisper multilingual file), ranks with gaps, and gzip/xz/zstd files told by their first
bytes. Every reference here is tiktoken itself, built offline from the very file tokreg imports
(`load_tiktoken_bpe(path)`, its download cache turned off)."""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib
import json
import lzma
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tokreg import InputError, IntegrityError, Registry, Tokenizer
from tokreg.files import decompressed
from tokreg.formats.tiktoken_file import parse_ranks
from tokreg.formats.tiktoken_presets import PRESETS
from tokreg.patterns import resolve

from .conftest import CORPORA, Cli, data_file, slow

# Meta's llama3/tokenizer.py, written out again here rather than taken from tokreg.
LLAMA3_PAT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3_FIRST_TEN = [
    "<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
    "<|reserved_special_token_2|>", "<|reserved_special_token_3|>", "<|start_header_id|>", "<|end_header_id|>",
    "<|reserved_special_token_4|>", "<|eot_id|>",
]  # fmt: skip

# Which constructed file each preset is checked on (see `files`).
FILE_OF = {
    "gpt2": "r50k",
    "r50k_base": "r50k",
    "p50k_base": "p50k",
    "p50k_edit": "p50k",
    "cl100k_base": "cl100k",
    "o200k_base": "o200k",
    "llama3": "llama3",
}


def rank_lines(name: str) -> list[tuple[bytes, int]]:
    """(base64, rank) of each line of a shared `.tiktoken` file, parsed here."""
    out = []
    for line in data_file(f"{name}.tiktoken").read_bytes().splitlines():
        token, rank = line.split()
        out.append((token, int(rank)))
    return out


def write_ranks(path: Path, lines: list[tuple[bytes, int]]) -> Path:
    path.write_bytes(b"".join(t + b" " + str(r).encode() + b"\n" for t, r in lines))
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- fixtures --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiktoken() -> Iterator[Any]:
    """tiktoken, with its download cache off: `load_tiktoken_bpe(path)` reads the path itself
    (the cache is keyed by the path, and these tests write different files at the same paths)."""
    tk = pytest.importorskip("tiktoken")
    importlib.import_module("tiktoken.load")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")
        yield tk


@pytest.fixture(scope="module")
def official(tiktoken: Any) -> dict[str, dict[str, Any]]:
    """name -> tiktoken_ext.openai_public's definition (pat_str, special_tokens, explicit_n_vocab
    when it says), its rank loaders replaced by an empty map: only the facts are wanted here."""
    openai_public: Any = pytest.importorskip("tiktoken_ext.openai_public")
    out = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: {})
        mp.setattr(openai_public, "data_gym_to_mergeable_bpe_ranks", lambda *a, **k: {})
        for name, make in openai_public.ENCODING_CONSTRUCTORS.items():
            out[name] = make()
    return out


@dataclass
class Setup:
    folder: Path
    db: Path
    cli: Cli
    reg: Registry
    files: dict[str, Path]
    lines: list[str]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    """One registry; the two official files and three built from them in the layouts of the
    other encodings, from real ranks: r50k (cl100k's first 50,256 ranks), p50k (those, then
    cl100k's next 24 at 50257..50280, skipping 50256 as p50k does) and llama3 (cl100k's 100,256
    ranks, then o200k's first 27,744 tokens that cl100k lacks, as Llama 3 extends cl100k); and
    every line of the shared corpora."""
    folder = tmp_path_factory.mktemp("tiktoken-files")
    cl100k, o200k = rank_lines("cl100k_base"), rank_lines("o200k_base")
    r50k = [(t, r) for t, r in cl100k if r < 50256]
    p50k = r50k + [(t, r + 1) for t, r in cl100k if 50256 <= r < 50280]
    known = {t for t, _ in cl100k}
    extra = [t for t, _ in o200k if t not in known][: 128000 - len(cl100k)]
    llama3 = cl100k + [(t, len(cl100k) + i) for i, t in enumerate(extra)]
    files = {
        "cl100k": data_file("cl100k_base.tiktoken"),
        "o200k": data_file("o200k_base.tiktoken"),
        "r50k": write_ranks(folder / "r50k.tiktoken", r50k),
        "p50k": write_ranks(folder / "p50k.tiktoken", p50k),
        "llama3": write_ranks(folder / "llama3.tiktoken", llama3),
    }
    lines = [x for name in CORPORA for x in data_file(name).read_text(encoding="utf-8").splitlines(keepends=True)]
    db = folder / "registry.db"
    reg = Registry(db, create=True)
    yield Setup(folder, db, Cli(db), reg, files, lines)
    reg.close()


def with_specials(lines: list[str], specials: dict[str, int]) -> list[str]:
    """`lines`, then texts holding every special token: each in a sentence, all of them in a row,
    and each glued to text on both sides."""
    names = sorted(specials)
    return [
        *lines,
        " ".join(f"say {s} here." for s in names),
        "".join(names),
        *(f"x{s}y\n" for s in names),
    ]


def differ(tok: Tokenizer, enc: Any, texts: list[str]) -> list[str]:
    """The texts whose ids differ between tokreg and tiktoken, every special allowed in both."""
    ours = tok.encode_batch(texts, allowed_special="all")
    return [t for t, a in zip(texts, ours) if a != enc.encode(t, allowed_special="all")]


# -- 1. presets: tiktoken's facts, and tiktoken's ids ------------------------------------------------


@pytest.mark.parametrize("name", sorted(set(PRESETS) - {"llama3"}))
def test_openai_presets_are_tiktokens_definitions(official: dict[str, dict[str, Any]], name: str) -> None:
    spec, preset = official[name], PRESETS[name]
    assert resolve(preset.pattern) == resolve(spec["pat_str"])
    assert preset.specials == spec["special_tokens"]
    if "explicit_n_vocab" in spec:  # tiktoken's own check: ranks and specials fill 0..n-1
        n = spec["explicit_n_vocab"]
        assert preset.ranks + len(preset.specials) == n and max(preset.top, *preset.specials.values()) == n - 1
    if name in ("cl100k_base", "o200k_base"):  # the official files themselves
        ranks = [r for _, r in rank_lines(name)]
        assert (len(ranks), max(ranks)) == (preset.ranks, preset.top)


def test_every_openai_encoding_has_a_preset(official: dict[str, dict[str, Any]]) -> None:
    # o200k_harmony gives <|endofprompt|> and <|reserved_200018|> one id, 200018: one id is one
    # token in tokreg, so it has no preset (import it with --special, choosing one of the two).
    harmony = official.get("o200k_harmony")
    if harmony is not None:
        ids = list(harmony["special_tokens"].values())
        assert len(ids) != len(set(ids))
    assert set(official) - {"o200k_harmony"} <= set(PRESETS)


def test_llama3_preset_is_metas_original_layout() -> None:
    p = PRESETS["llama3"]
    names = LLAMA3_FIRST_TEN + [f"<|reserved_special_token_{i}|>" for i in range(5, 251)]
    assert p.specials == {s: 128000 + i for i, s in enumerate(names)}
    assert len(p.specials) == 256 and max(p.specials.values()) == 128255
    assert (p.ranks, p.top) == (128000, 127999)
    assert p.pattern == LLAMA3_PAT
    # Meta's spelling is cl100k's before tiktoken's rewrite, which splits a closing " \n  " otherwise
    assert resolve(LLAMA3_PAT)[0] == "custom"


@pytest.mark.parametrize("name", [n if n == "cl100k_base" else slow(n) for n in FILE_OF])
def test_preset_gives_tiktokens_ids_on_every_line(
    setup: Setup, tiktoken: Any, official: dict[str, dict[str, Any]], name: str
) -> None:
    path = setup.files[FILE_OF[name]]
    if name == "cl100k_base":  # the README's form, through the CLI
        out = setup.cli("import", "tiktoken", path, "--name", name, "--preset", name, "--json").stdout
        tok = setup.reg.load(json.loads(out)["ref"])
    else:
        tok = setup.reg.load(setup.reg.import_tiktoken(name, path, preset=name).ref)
    if name == "llama3":
        pat, specials = LLAMA3_PAT, dict(PRESETS["llama3"].specials)
    else:
        pat, specials = official[name]["pat_str"], official[name]["special_tokens"]
    assert tok.special_tokens == specials
    enc = tiktoken.Encoding(
        name=name, pat_str=pat, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)), special_tokens=specials
    )
    assert tok.vocab_size == len(enc._mergeable_ranks) + len(specials)
    texts = with_specials(setup.lines, specials)
    bad = differ(tok, enc, texts)
    assert not bad, f"{name}: {len(bad)} of {len(texts)} texts differ, first: {bad[0][:80]!r}"
    for s, i in specials.items():
        assert tok.encode(s, allowed_special="all") == [i] and tok.decode([i]) == s


@pytest.mark.parametrize(
    "preset, file",
    [("o200k_base", "cl100k"), ("cl100k_base", "o200k"), ("p50k_base", "r50k"), ("r50k_base", "p50k"),
     ("llama3", "cl100k"), ("gpt2", "llama3")],
)  # fmt: skip
def test_a_preset_on_another_encodings_file_is_refused_in_one_line(setup: Setup, preset: str, file: str) -> None:
    before = len(setup.reg.versions())
    res = setup.cli("import", "tiktoken", setup.files[file], "--name", "wrong", "--preset", preset, ok=False)
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 1 and len(lines) == 1, res.output
    assert f"it is not the {preset} file" in lines[0] and str(setup.files[file]) in lines[0], lines[0]
    assert f"{PRESETS[preset].ranks:,}" in lines[0] and "nothing was imported" in lines[0]
    assert len(setup.reg.versions()) == before


@pytest.mark.slow  # a full cl100k import; the fast lane has the preset itself on every line
def test_special_tokens_and_pattern_override_the_preset(setup: Setup) -> None:
    reg, path = setup.reg, setup.files["llama3"]
    # Llama 3.1's names for reserved slots, by id; and one name moved to another id
    res = setup.cli(
        "import", "tiktoken", path, "--name", "llama31", "--preset", "llama3",
        "--special", "<|eom_id|>=128008", "--special", "<|python_tag|>=128010",
        "--special", "<|end_of_text|>=128300", "--json",
    )  # fmt: skip
    tok = reg.load(json.loads(res.stdout)["ref"])
    want = dict(PRESETS["llama3"].specials)
    del want["<|reserved_special_token_4|>"], want["<|reserved_special_token_5|>"]
    want |= {"<|eom_id|>": 128008, "<|python_tag|>": 128010, "<|end_of_text|>": 128300}
    assert tok.special_tokens == want and len(want) == 256
    assert tok.encode("<|eom_id|><|end_of_text|>", allowed_special="all") == [128008, 128300]
    # --pattern replaces the preset's pattern; the specials stay
    v = reg.import_tiktoken("cl-gpt2", setup.files["cl100k"], preset="cl100k_base", pattern="gpt2")
    assert v.config["pattern"] == resolve("gpt2")[1]
    assert reg.load(v.ref).special_tokens == PRESETS["cl100k_base"].specials
    # a special on an ordinary rank is refused, naming it
    before = len(reg.versions())
    res = setup.cli(
        "import", "tiktoken", setup.files["cl100k"], "--name", "x", "--preset", "cl100k_base",
        "--special", "<|mine|>=1000", ok=False,
    )  # fmt: skip
    assert res.exit_code == 1 and len(res.output.splitlines()) == 1, res.output
    assert f"{setup.files['cl100k']}: special token '<|mine|>' has id 1000" in res.output
    # neither a preset nor a pattern: one line naming both options
    res = setup.cli("import", "tiktoken", setup.files["cl100k"], "--name", "x", ok=False)
    assert res.exit_code == 1 and "give --preset" in res.output and "--pattern" in res.output
    assert len(res.output.splitlines()) == 1
    with pytest.raises(InputError, match="not a preset; choose one of gpt2"):
        reg.import_tiktoken("x", setup.files["cl100k"], preset="cl200k_base")
    assert len(reg.versions()) == before


@pytest.mark.slow  # a full cl100k import; the fast lane has the preset form
def test_the_old_form_still_works(setup: Setup) -> None:
    """The README's earlier example: a pattern and one special, without a preset."""
    res = setup.cli(
        "import", "tiktoken", setup.files["cl100k"], "--name", "old", "--pattern", "cl100k",
        "--special", "<|endoftext|>=100257", "--json",
    )  # fmt: skip
    tok = setup.reg.load(json.loads(res.stdout)["ref"])
    assert tok.special_tokens == {"<|endoftext|>": 100257} and tok.vocab_size == 100257


# -- 2. empty tokens ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def whisper_like(setup: Setup) -> Path:
    """Whisper multilingual's shape: the empty token `=` at rank 50256, here between cl100k's
    ranks (those from 50256 on moved up by one, which keeps their order, so every merge is the
    same)."""
    lines = [(t, r + (r >= 50256)) for t, r in rank_lines("cl100k_base")]
    lines.insert(50256, (b"=", 50256))
    return write_ranks(setup.folder / "whisper-like.tiktoken", lines)


@pytest.mark.slow  # the fast lane has test_a_token_replaced_by_the_empty_one_gives_tiktokens_ids
def test_an_empty_token_is_imported_as_tiktoken_loads_it(setup: Setup, tiktoken: Any, whisper_like: Path) -> None:
    ranks = tiktoken.load.load_tiktoken_bpe(str(whisper_like))
    assert ranks[b""] == 50256 and parse_ranks(whisper_like.read_bytes(), "f")[b""] == 50256
    specials = {"<|endoftext|>": 100257}
    v = setup.reg.import_tiktoken("whisper-like", whisper_like, pattern="gpt2", specials=specials)
    tok = setup.reg.load(v.ref)
    assert v.vocab_size == tok.vocab_size == len(ranks) + 1
    enc = tiktoken.Encoding(name="w", pat_str=resolve("gpt2")[1], mergeable_ranks=ranks, special_tokens=specials)
    texts = with_specials(setup.lines, specials)
    bad = differ(tok, enc, texts)
    assert not bad, f"{len(bad)} of {len(texts)} texts differ, first: {bad[0][:80]!r}"
    # never produced, by tiktoken or by tokreg; decodes to nothing, as in tiktoken
    assert not any(50256 in ids for ids in tok.encode_batch(texts, allowed_special="all"))
    assert tok.token_bytes(50256) == enc.decode_single_token_bytes(50256) == b""
    ids = enc.encode("I run")
    mixed = [*ids[:1], 50256, *ids[1:], 50256]
    assert tok.decode(mixed) == enc.decode(mixed) == "I run"
    # stored as a token with no bytes, made by no merge
    _, rows = setup.reg.sql(f"SELECT id, kind, bytes, text FROM vocab WHERE tokenizer = '{v.ref}' AND id = 50256")
    assert [tuple(r) for r in rows] == [(50256, "merged", b"", "")]
    _, made = setup.reg.sql(f"SELECT count(*) FROM merges_view WHERE tokenizer = '{v.ref}' AND result_id = 50256")
    assert made[0][0] == 0
    # the registry's own checks and formats carry it: verify, export back byte for byte, a
    # tokreg file re-imported to the same hash, and the same hash on a second import
    assert "ok" in setup.cli("verify", v.ref).output.lower()
    out = setup.folder / "whisper-back.tiktoken"
    setup.cli("export", v.ref, "--format", "tiktoken", "-o", out)
    assert out.read_bytes() == whisper_like.read_bytes()
    own = setup.folder / "whisper.tokreg.json"
    setup.cli("export", v.ref, "--format", "tokreg", "-o", own)
    assert setup.reg.import_tokreg("whisper-own", own).content_hash == v.content_hash
    assert setup.reg.import_tiktoken("whisper-like", out, pattern="gpt2", specials=specials).content_hash == (
        v.content_hash
    )


def test_a_token_replaced_by_the_empty_one_gives_tiktokens_ids(setup: Setup, tiktoken: Any, tmp_path: Path) -> None:
    """cl100k with " the" (rank 279) emptied: the tokens built through it are now reached, or
    not, by tiktoken's rule alone, and both libraries agree on every line."""
    lines = rank_lines("cl100k_base")
    assert base64.b64decode(lines[279][0]) == b" the"
    lines[279] = (b"=", 279)
    path = write_ranks(tmp_path / "no-the.tiktoken", lines)
    tok = setup.reg.load(setup.reg.import_tiktoken("no-the", path, pattern="cl100k").ref)
    enc = tiktoken.Encoding(
        name="n", pat_str=resolve("cl100k")[1], mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
        special_tokens={},
    )  # fmt: skip
    bad = differ(tok, enc, setup.lines)
    assert not bad, f"{len(bad)} of {len(setup.lines)} lines differ, first: {bad[0][:80]!r}"
    assert tok.encode(" the")[0] != 279 and tok.encode(" the") == enc.encode(" the")


def test_two_empty_tokens_are_refused(registry: Registry, tmp_path: Path) -> None:
    lines = [(base64.b64encode(bytes([b])), b) for b in range(256)] + [(b"=", 256), (b"=", 257)]
    p = write_ranks(tmp_path / "two.tiktoken", lines)
    with pytest.raises(InputError, match=r"line 258 repeats a token or rank \(257\)"):
        registry.import_tiktoken("t", p, pattern="gpt2")
    assert registry.versions() == []


# -- 3. gaps -----------------------------------------------------------------------------------------


@pytest.mark.slow  # a full cl100k import; the fast lane has the empty-token case
def test_ranks_with_gaps_give_tiktokens_ids(setup: Setup, tiktoken: Any, tmp_path: Path) -> None:
    """cl100k without every 101st multi-byte token and without a run of 500: tokreg keeps the
    ids (nothing is renumbered) and encodes as tiktoken does over the same holes; an id in a
    hole is no token for either."""
    lines = [(t, r) for t, r in rank_lines("cl100k_base") if not (r >= 256 and r % 101 == 0 or 60000 <= r < 60500)]
    path = write_ranks(tmp_path / "gaps.tiktoken", lines)
    specials = {"<|endoftext|>": 100257}
    v = setup.reg.import_tiktoken("gaps", path, pattern="cl100k", specials=specials)
    tok = setup.reg.load(v.ref)
    assert v.vocab_size == len(lines) + 1
    ranks = tiktoken.load.load_tiktoken_bpe(str(path))
    enc = tiktoken.Encoding(name="g", pat_str=resolve("cl100k")[1], mergeable_ranks=ranks, special_tokens=specials)
    texts = with_specials(setup.lines, specials)
    bad = differ(tok, enc, texts)
    assert not bad, f"{len(bad)} of {len(texts)} texts differ, first: {bad[0][:80]!r}"
    for hole in (60000, 60499, 101 * 300):
        with pytest.raises(InputError):
            tok.decode([hole])
        with pytest.raises(KeyError):
            enc.decode_single_token_bytes(hole)


# -- 4. compressed files -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small(setup: Setup) -> Path:
    """The 256 bytes and cl100k's first 300 merges."""
    return write_ranks(setup.folder / "small.tiktoken", rank_lines("cl100k_base")[:556])


@pytest.mark.slow  # the fast lane tells every compression on a small file (test_compression_is_told_by_...)
def test_a_gzipped_file_imports_as_the_plain_file(setup: Setup) -> None:
    plain = setup.files["cl100k"]
    gz = setup.folder / "cl100k_base.tiktoken.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    want = setup.reg.import_tiktoken("plain", plain, preset="cl100k_base").content_hash
    # the official sha256 is the plain file's: it pins the content of the .gz too
    res = setup.cli(
        "import", "tiktoken", gz, "--name", "gz", "--preset", "cl100k_base",
        "--expect-sha256", sha256_of(plain), "--json",
    )  # fmt: skip
    assert json.loads(res.stdout)["hash"] == want


@pytest.mark.parametrize("kind", ["gzip", "xz", "zstd", "gzip named .tiktoken", "plain named .gz"])
def test_compression_is_told_by_the_first_bytes(setup: Setup, small: Path, kind: str) -> None:
    raw = small.read_bytes()
    if kind.startswith("gzip"):
        packed, name = gzip.compress(raw), "s.tiktoken" if "named" in kind else "s.tiktoken.gz"
    elif kind == "xz":
        packed, name = lzma.compress(raw), "s.tiktoken.xz"
    elif kind == "zstd":
        zstandard = pytest.importorskip("zstandard")
        packed, name = zstandard.ZstdCompressor().compress(raw), "s.tiktoken.zst"
    else:
        packed, name = raw, "s.tiktoken.gz"
    path = setup.folder / kind.replace(" ", "-") / name
    path.parent.mkdir()
    path.write_bytes(packed)
    want = setup.reg.import_tiktoken("small", small, pattern="cl100k").content_hash
    # pinned by the file's own sha256, or by its content's
    for sha in (hashlib.sha256(packed).hexdigest(), sha256_of(small)):
        assert setup.reg.import_tiktoken("small", path, pattern="cl100k", expect_sha256=sha).content_hash == want
    before = len(setup.reg.versions())
    with pytest.raises(IntegrityError) as e:
        setup.reg.import_tiktoken("small", path, pattern="cl100k", expect_sha256="0" * 64)
    assert hashlib.sha256(packed).hexdigest() in str(e.value) and "\n" not in str(e.value)
    if packed != raw:
        assert f"(decompressed: {sha256_of(small)})" in str(e.value)
    assert len(setup.reg.versions()) == before


@pytest.mark.parametrize("damage", ["truncated", "flipped", "trailing garbage", "xz truncated", "zstd truncated"])
def test_a_damaged_compressed_file_is_refused_in_one_line(setup: Setup, small: Path, damage: str) -> None:
    raw = small.read_bytes()
    if damage.startswith("zstd"):
        packed = pytest.importorskip("zstandard").ZstdCompressor().compress(raw)
    else:
        packed = lzma.compress(raw) if damage.startswith("xz") else gzip.compress(raw)
    if "truncated" in damage:
        packed = packed[: len(packed) // 2]
    elif damage == "flipped":  # a byte of the deflate stream: a bad block or a CRC that differs
        mid = len(packed) // 2
        packed = packed[:mid] + bytes([packed[mid] ^ 0x55]) + packed[mid + 1 :]
    else:
        packed += b"\x00garbage"
    path = setup.folder / f"damaged-{damage.replace(' ', '-')}.tiktoken.gz"
    path.write_bytes(packed)
    before = len(setup.reg.versions())
    res = setup.cli("import", "tiktoken", path, "--name", "damaged", "--pattern", "cl100k", ok=False)
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert res.exit_code == 1 and len(lines) == 1 and "Traceback" not in res.output, res.output
    assert str(path) in lines[0] and "damaged or truncated" in lines[0], lines[0]
    assert len(setup.reg.versions()) == before


def test_decompression_stops_at_its_limit() -> None:
    bomb = gzip.compress(b"0" * 100_000)
    assert decompressed(bomb, "b", limit=100_000) == b"0" * 100_000
    with pytest.raises(InputError, match="'b' decompresses to more than 99,999 bytes"):
        decompressed(bomb, "b", limit=99_999)
    assert decompressed(b"plain", "p", limit=1) == b"plain"  # a plain file is not decompressed
