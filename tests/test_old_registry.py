"""A registry written by tokreg 0.1.0 (commit a903aab, before the redesign into algorithm
modules and one core encoder) still opens, upgrades, verifies and encodes exactly as it did:
every version keeps its hash, and every encoder gives the ids the old code gave on probe texts.

tests/data/registry-0.1.0.sql.gz is that registry's SQL dump (byte- and character-level BPE,
WordPiece and Unigram trained on a slice of the shared corpora; tiktoken, tokenizer.json and
SentencePiece BPE/Unigram imports; an alias), registry-0.1.0.json the old code's hashes and ids."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def old(tmp_path_factory: pytest.TempPathFactory) -> tuple[Registry, dict[str, Any]]:
    db = tmp_path_factory.mktemp("old") / "registry.db"
    conn = sqlite3.connect(db)
    conn.executescript(gzip.decompress((DATA / "registry-0.1.0.sql.gz").read_bytes()).decode("utf-8"))
    conn.close()
    expected = json.loads((DATA / "registry-0.1.0.json").read_text(encoding="utf-8"))
    return Registry(db), expected


def test_every_version_keeps_its_hash_and_verifies(old: tuple[Registry, dict[str, Any]]) -> None:
    reg, expected = old
    versions = {v.ref: v for v in reg.versions()}
    assert sorted(versions) == sorted(expected["versions"])
    for ref, want in expected["versions"].items():
        assert (versions[ref].content_hash, versions[ref].sha256) == (want["hash"], want["sha256"])
    results = reg.verify()
    assert [r.problems for r in results if not r.ok] == []
    assert all(r.samples == 6 for r in results)
    assert reg.aliases("byte") == {"prod": 1}


def test_every_encoder_gives_the_old_ids(old: tuple[Registry, dict[str, Any]]) -> None:
    reg, expected = old
    for ref, want in expected["versions"].items():
        tok = reg.load(ref)
        assert tok.hash == want["hash"]
        assert [tok.encode_ordinary(p) for p in expected["probes"]] == want["ids"], ref
