"""Interop and start to ready: `tokreg import tekken` (ids checked against the file's own
definition: tiktoken over the same ranks, shifted past the special tokens, and mistral-common
when installed), `tokreg import tokreg` (same hash), `to_transformers`, `tokreg encode --count`,
and a pinned, cached version loading in a fresh process without SQLAlchemy or Alembic."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokreg
from tokreg import BpeOptions, InputError, Registry, WordPieceOptions
from tokreg._core import PATTERNS

from .conftest import Cli, data_file, head_lines

#: The tekken layout: special tokens first, then the vocabulary cut to VOCAB - SPECIALS entries.
SPECIALS, VOCAB = 20, 20 + 1500
LISTED = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]"]


def _tekken(path: Path) -> dict[bytes, int]:
    """A tekken.json over cl100k's first ranks (extra entries past the cut, as real files have);
    returns the ranks it keeps."""
    # Tekken wants the 256 bytes as ranks 0-255 (cl100k's are not in byte order): the bytes,
    # then cl100k's merged tokens in their order, which keeps every token's merges below it.
    ranks = {bytes([b]): b for b in range(256)}
    for line in data_file("cl100k_base.tiktoken").read_bytes().splitlines()[:2000]:
        token = base64.b64decode(line.split()[0])
        if len(token) > 1:
            ranks[token] = len(ranks)
    doc = {
        "config": {
            "pattern": PATTERNS["cl100k"],
            "num_vocab_tokens": len(ranks),
            "default_vocab_size": VOCAB,
            "default_num_special_tokens": SPECIALS,
            "version": "v7",
        },
        "vocab": [
            {"rank": r, "token_bytes": base64.b64encode(t).decode(), "token_str": t.decode("utf-8", "replace")}
            for t, r in sorted(ranks.items(), key=lambda x: x[1])
        ],
        "special_tokens": [{"rank": k, "token_str": s, "is_control": True} for k, s in enumerate(LISTED)],
    }
    path.write_text(json.dumps(doc), encoding="utf-8")
    return {t: r for t, r in ranks.items() if r < VOCAB - SPECIALS}


def test_import_tekken_gives_the_files_ids(registry: Registry, tmp_path: Path, run: Cli) -> None:
    tiktoken = pytest.importorskip("tiktoken")
    path = tmp_path / "tekken.json"
    kept = _tekken(path)
    out = run("import", "tekken", str(path), "--name", "tek").output
    assert out.startswith("tek@1") and f"{len(kept) + SPECIALS:,} tokens" in out
    tok = tokreg.load("tek", db=registry.url)
    ref = tiktoken.Encoding("tekken", pat_str=PATTERNS["cl100k"], mergeable_ranks=kept, special_tokens={})
    lines = (
        head_lines("kjv.txt", 60_000).decode().splitlines() + head_lines("dr.zh-cn.txt", 30_000).decode().splitlines()
    )
    assert tok.encode_batch(lines, disallowed_special=()) == [[i + SPECIALS for i in ref.encode(t)] for t in lines]
    assert tok.special_tokens["<s>"] == 1 and tok.special_tokens["<SPECIAL_19>"] == 19
    try:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    except ImportError:
        return
    mc = Tekkenizer.from_file(path)
    assert [tok.encode_ordinary(t) for t in lines[:200]] == [mc.encode(t, bos=False, eos=False) for t in lines[:200]]


def test_a_broken_tekken_file_is_one_line_and_writes_nothing(registry: Registry, tmp_path: Path, run: Cli) -> None:
    path = tmp_path / "tekken.json"
    _tekken(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["vocab"][300]["rank"] = 7
    path.write_text(json.dumps(doc), encoding="utf-8")
    res = run("import", "tekken", str(path), "--name", "tek", ok=False)
    assert res.exit_code == 1 and "vocab[300] must be" in res.output and len(res.output.strip().splitlines()) == 1
    with pytest.raises(InputError, match="not a tekken file"):
        registry.import_tekken("tek", _write(tmp_path / "x.json", "{}"))


def _write(p: Path, s: str) -> Path:
    p.write_text(s, encoding="utf-8")
    return p


def test_import_tokreg_keeps_the_hash(registry: Registry, small_corpus: Path, tmp_path: Path, run: Cli) -> None:
    v = registry.train("m", [small_corpus], WordPieceOptions(vocab_size=200))
    out = tmp_path / "m.tokreg.json"
    registry.export("m", "tokreg", out)
    res = run("import", "tokreg", str(out), "--name", "copy", "--json")
    assert json.loads(res.output)["hash"] == v.content_hash
    with pytest.raises(InputError, match="not a tokreg tokenizer file"):
        registry.import_tokreg("copy", _write(tmp_path / "y.json", "[]"))


def test_to_transformers_gives_tokreg_ids(registry: Registry, small_corpus: Path) -> None:
    pytest.importorskip("transformers")
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300, special=("<|endoftext|>",)))
    tok = registry.load("m")
    fast = tok.to_transformers()
    text = "Hello world, hello tokreg.<|endoftext|>"
    assert fast.encode(text, add_special_tokens=False) == tok.encode(text, allowed_special="all")
    assert fast.decode(tok.encode("hello there")) == "hello there"


def test_encode_count(registry: Registry, small_corpus: Path, run: Cli) -> None:
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    text = "hello world, and more words here"
    assert int(run("encode", "m", text, "--count").output) == len(registry.load("m").encode(text))
    assert json.loads(run("encode", "m", text, "--count", "--json").output)["count"] == registry.load("m").count(text)


def test_a_pinned_cached_version_loads_without_sqlalchemy(
    registry: Registry, small_corpus: Path, tmp_path: Path
) -> None:
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    project = tmp_path / "project"
    project.mkdir()
    cwd = os.getcwd()
    os.chdir(project)
    try:
        registry.pin("m")
        want = tokreg.load("m@1", db=registry.url).encode("hello world")
    finally:
        os.chdir(cwd)
    env = {k: v for k, v in os.environ.items() if k != "TOKREG_DB"}
    env["XDG_DATA_HOME"] = str(tmp_path / "nowhere")  # the default registry does not exist
    probe = (
        "import sys, tokreg\n"
        "assert 'sqlalchemy' not in sys.modules\n"
        "tok = tokreg.load('m')\n"
        "print(tok.ref, tok.encode('hello world'), [m for m in sys.modules if m.split('.')[0] in "
        "('sqlalchemy', 'alembic')])\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=project, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"m@1 {want} []"
