"""The way from a trained BPE run to its rows and content without an object per merge or token
(algorithms/bpe/training.py, content.py, store/bulk_rows.py, store/sqlite_write.py): each
shortcut gives what the plain way gives, value for value."""

from __future__ import annotations

import hashlib
import sqlite3
import struct
import sys
from pathlib import Path
from typing import Any

import pytest

from tokreg import BpeOptions, Registry, _core, content
from tokreg.algorithms.bpe.training import learned_rows, merge_rows
from tokreg.cli.opening import samples_of
from tokreg.data import TokenRow, texts_of
from tokreg.errors import InputError
from tokreg.store import bulk_rows, sqlite_write
from tokreg.training import train_run
from tokreg.training.corpus import Corpus

from .conftest import corpus_slice


@pytest.fixture(scope="module")
def counted(tmp_path_factory: pytest.TempPathFactory) -> Any:
    corpus = Corpus.of([corpus_slice(tmp_path_factory.mktemp("rows") / "slice.txt", 15_000)])
    return train_run.count(corpus, BpeOptions(vocab_size=600, pattern="gpt2"), keep=False).counts


def test_the_cores_merge_columns_are_its_merges(counted: Any) -> None:
    out = _core.train_bpe(counted, 600, snapshots=[600])
    learned = out.merges
    assert len(learned) > 300
    rows = learned_rows(out)
    assert rows == merge_rows(learned)  # row for row: rank, left, right, result, count
    assert [(m.left, m.right, m.result, m.count) for m in rows] == learned


def test_merge_triples_from_columns_are_the_packed_triples() -> None:
    left, right, result = [97, 98, 2**32 - 1], [98, 99, 0], [256, 257, 258]
    packed = b"".join(struct.pack("<III", *m) for m in zip(left, right, result))
    assert content.merge_triples(left, right, result) == packed
    args: tuple[Any, ...] = ("bpe", {}, [0], ["byte"], [b"a"], [None])
    assert content.serialize_columns(*args, merge_columns=(left, right, result)) == content.serialize_columns(
        *args, list(zip(left, right, result))
    )
    for bad in ([2**32], [-1]):
        with pytest.raises(InputError, match="ids must be 0..4294967295"):
            content.serialize_columns(*args, merge_columns=(bad, [1], [2]))


def test_the_builtin_sha256_gives_openssls_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small content is hashed with Python's own SHA-256 while OpenSSL is not loaded."""
    monkeypatch.delitem(sys.modules, "hashlib")
    for size in (0, 1, 1000, content.BUILTIN_SHA256_BYTES, content.BUILTIN_SHA256_BYTES + 1):
        raw = bytes(range(256)) * (size // 256) + bytes(size % 256)
        assert content.digest(raw)[1] == "sha256:" + hashlib.sha256(raw).hexdigest()


def test_texts_made_by_statement_are_the_tokens_texts(tmp_path: Path) -> None:
    raws = [b"a", b"\xff", b"caf\xc3\xa9", b"\x00x", b"\xe6\x97", b" the"] * 700  # 4,200 rows: several statements
    assert texts_of(raws) == [TokenRow(i, b, "merged").text for i, b in enumerate(raws)]
    db = tmp_path / "t.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE tokens (version_id, id, bytes, text)")
        columns = {"id": range(len(raws)), "bytes": raws, "text": bulk_rows.Derived(texts_of, raws)}
        bulk_rows.insert(conn.execute, "tokens", 7, columns, sqlite=True)
        got = conn.execute("SELECT version_id, id, bytes, text FROM tokens ORDER BY id").fetchall()
    assert got == [(7, i, b, t) for i, (b, t) in enumerate(zip(raws, texts_of(raws)))]


def test_the_lean_write_encodes_the_samples_after_the_rows(tmp_path: Path, counted: Any) -> None:
    """The samples wait for the encoder compiled on the measure's thread (cli/train.py): the
    lean write asks for them only once the version's rows are in."""
    corpus = Corpus.of([corpus_slice(tmp_path / "slice.txt", 15_000)])
    trained = train_run.train_unmeasured(corpus, BpeOptions(vocab_size=400, pattern="gpt2"), [400])
    db = tmp_path / "lean.db"
    Registry(db, create=True).close()
    seen: list[int] = []

    def samples(version: Any, name: str) -> list[tuple[str, list[int]]]:
        seen.append(rec._conn.execute("SELECT count(*) FROM tokens").fetchone()[0])
        return samples_of(version, name)

    rec = sqlite_write.open_file(str(db), samples)
    assert rec is not None
    measuring = trained.measure_in_background()
    measuring.compiled()
    rec.record_trained("m", trained.versions, ready=measuring)
    rec.close()
    assert seen == [400]
    assert [v.round_trip is not None for v in measuring()] == [True]


def test_the_samples_encoded_on_the_pool_are_encode_alls(tmp_path: Path) -> None:
    from tokreg.encoding.tokenizer import Tokenizer
    from tokreg.versions.samples import SAMPLES, encode_all

    corpus = Corpus.of([corpus_slice(tmp_path / "slice.txt", 15_000)])
    (version,) = train_run.train_unmeasured(corpus, BpeOptions(vocab_size=400, pattern="gpt2"), [400]).versions
    assert samples_of(version, "m") == list(zip(SAMPLES, encode_all(Tokenizer.of_finished(version, ref="m"))))
