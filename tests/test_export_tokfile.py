"""`export --format tokreg`: one self-describing file; `Tokenizer.from_file` loads it with no
registry, gives the same ids, and refuses a file whose content no longer has its hash."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from sqlalchemy import text

from tokreg import BpeOptions, InputError, IntegrityError, Registry, Tokenizer

from .conftest import Cli, data_file


@pytest.fixture
def reg(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("e", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",)))
    registry.train("e", [small_corpus], BpeOptions(vocab_size=350, char_level=True, end_of_word_suffix="</w>"))
    return registry


@pytest.mark.parametrize("ref", ["e@1", "e@2"])
def test_round_trip_without_the_registry(reg: Registry, tmp_path: Path, ref: str) -> None:
    out = tmp_path / "e.tokreg.json"
    v = reg.export(ref, "tokreg", out)
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert (doc["format"], doc["format_version"], doc["hash"], doc["ref"]) == (
        "tokreg-tokenizer",
        1,
        v.content_hash,
        ref,
    )
    assert {"config", "tokens", "merges", "algorithm", "sha256"} <= set(doc)
    text_ = data_file("dr.en.txt").read_text(encoding="utf-8")[:50_000]
    expected = reg.load(ref).encode_ordinary(text_)
    reg.close()
    (tmp_path / "registry.db").unlink()  # nothing left to fall back on
    tok = Tokenizer.from_file(out)
    assert tok.hash == v.content_hash and tok.ref == ref
    assert tok.encode_ordinary(text_) == expected
    assert Tokenizer.from_file(out, expect_hash=v.content_hash[:20]).hash == v.content_hash


def test_from_file_gives_the_registry_ids(reg: Registry, tmp_path: Path) -> None:
    reg.export("e@1", "tokreg", tmp_path / "e.json")
    text_ = data_file("dr.zh-cn.txt").read_text(encoding="utf-8")
    assert Tokenizer.from_file(tmp_path / "e.json").encode_ordinary(text_) == reg.load("e@1").encode_ordinary(text_)
    assert Tokenizer.from_file(tmp_path / "e.json").special_tokens == {"<|end|>": 399}


def test_a_changed_file_is_refused(reg: Registry, tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    v = reg.export("e@1", "tokreg", path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tokens"][300][2] = base64.b64encode(b"tampered").decode()
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(IntegrityError, match=f"hashes to xxh3-128:[0-9a-f]{{32}}, but the file says {v.content_hash}"):
        Tokenizer.from_file(path)
    reg.export("e@1", "tokreg", path)
    with pytest.raises(IntegrityError, match="expected xxh3-128:0000"):
        Tokenizer.from_file(path, expect_hash="xxh3-128:0000")


@pytest.mark.parametrize(
    "content,message",
    [
        ('{"format": "something-else"}', "not a tokreg tokenizer file"),
        ('{"format": "tokreg-tokenizer", "format_version": 99}', "format_version 99 is newer"),
        (
            '{"format": "tokreg-tokenizer", "format_version": 1, "hash": "x"}',
            "malformed tokreg tokenizer file",
        ),
        ("not json", "not a tokreg tokenizer file"),
    ],
)
def test_files_that_are_not_tokreg_files(tmp_path: Path, content: str, message: str) -> None:
    p = tmp_path / "x.json"
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        Tokenizer.from_file(p)
    with pytest.raises(InputError, match="does not exist"):
        Tokenizer.from_file(tmp_path / "missing.json")


def test_damaged_rows_are_not_exported(reg: Registry, tmp_path: Path) -> None:
    with reg.engine.begin() as conn:
        conn.execute(text("UPDATE tokens SET bytes = X'00' WHERE id = 1 AND version_id = 1"))
    with pytest.raises(IntegrityError, match="refusing to export damaged content"):
        reg.export("e@1", "tokreg", tmp_path / "e.json")
    assert not (tmp_path / "e.json").exists()


def test_cli_export(run: Cli, reg: Registry, tmp_path: Path) -> None:
    out = tmp_path / "cli.json"
    assert "wrote e@2" in run("export", "e@2", "--format", "tokreg", "-o", out).output
    assert Tokenizer.from_file(out).encode_ordinary("lowest newer") == reg.load("e@2").encode_ordinary("lowest newer")
    bad = run("export", "e@9", "-o", out, ok=False)
    assert bad.exit_code == 4 and "no version 9" in bad.output


def test_written_files_follow_the_umask_or_keep_their_mode(reg: Registry, tmp_path: Path) -> None:
    """Exports, lockfiles and counts files are made to be shared: a new one gets 0666 less the
    umask (mkstemp alone would make it 0600); one that is replaced keeps its mode."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        reg.export("e@1", "tokreg", tmp_path / "shared.json")
        reg.export("e@1", "tiktoken", tmp_path / "shared.tiktoken")
        reg.pin("e@1", tmp_path)
        for name in ("shared.json", "shared.tiktoken", "tokreg.lock"):
            assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
        os.umask(0o077)
        reg.export("e@1", "tokreg", tmp_path / "private.json")
        assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
        (tmp_path / "shared.json").chmod(0o640)
        reg.export("e@2", "tokreg", tmp_path / "shared.json")
        assert stat.S_IMODE((tmp_path / "shared.json").stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_any_json_layout_of_the_file_reads_the_same(reg: Registry, tmp_path: Path) -> None:
    """The core reads the rows (src/tokreg_file.rs) from JSON as any writer may lay it out:
    indented, keys reordered, every string escaped to ASCII, numbers as JSON allows them."""
    path = tmp_path / "e.json"
    v = reg.export("e@1", "tokreg", path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tokens"][5][3] = None
    relaid = {k: doc[k] for k in reversed(list(doc))}
    escaped = json.dumps(relaid, indent=3, ensure_ascii=True).replace('"byte"', '"\\u0062yte"')
    assert '"\\u0062yte"' in escaped
    path.write_text(escaped, encoding="utf-8")
    assert Tokenizer.from_file(path).hash == v.content_hash
    # A score written 25.0 or 2.5e1 is the same float: the content (here no longer the file's
    # hash, which is refused naming what it hashes to) is the same.
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["tokens"][7][3] = 25.0
    actual = []
    for written in (json.dumps(doc), json.dumps(doc).replace("25.0", "2.5e1")):
        path.write_text(written, encoding="utf-8")
        with pytest.raises(IntegrityError, match="but the file says") as e:
            Tokenizer.from_file(path)
        actual.append(e.value.actual)
    assert actual[0] == actual[1] != v.content_hash


DAMAGES = [
    (lambda s: s.replace('"merges":', '"tokens":[],"merges":', 1), "the key 'tokens' appears twice"),
    (lambda s: s + " x", "extra data after the object"),
    (lambda s: s.replace('"byte"', '"b\\ud800"', 1), "lone surrogate"),
    (lambda s: s.replace('"config":{', '"config":{"x":NaN,', 1), "not a number JSON allows"),
    (lambda s: s.replace(",null]", ",true]", 1), "malformed tokreg tokenizer file"),
    (lambda s: s.replace('[0,"byte","', '[0,"byte","!', 1), "not base64"),
    (lambda s: s.replace('"merges":[[', '"merges":[[-', 1), "0..4294967295"),
]


def test_damaged_files_are_refused_in_one_line(reg: Registry, tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    reg.export("e@1", "tokreg", path)
    raw = path.read_text(encoding="utf-8").strip()
    for change, message in DAMAGES:
        changed = change(raw)
        assert changed != raw, message
        path.write_text(changed, encoding="utf-8")
        with pytest.raises(InputError, match=message) as e:
            Tokenizer.from_file(path)
        assert "\n" not in str(e.value)
