"""`tokreg tokenize` and the datasets it writes: each layout read back by a reader that knows
only its spec (Megatron's .idx written out below from megatron/core/datasets/indexed_dataset.py's
documented layout; .npy by numpy itself), the ids compared with the tokenizer's own `encode` of
each document, the same bytes whatever the thread count or batch size, resuming after an
interruption, refusals, the bad-record policy, and the registry's views."""

from __future__ import annotations

import json
import shutil
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tokreg
from tokreg import BpeOptions, Registry
from tokreg.datasets import documents, manifest
from tokreg.datasets.options import TokenizeOptions, dtype_for
from tokreg.datasets.writer import id_bound, tokenize
from tokreg.errors import InputError, IntegrityError
from tokreg.versions import lockfile

from .conftest import Cli, head_lines, one_error_line

EOT = "<|endoftext|>"


@pytest.fixture
def tok(registry: Registry, small_corpus: Path) -> tokreg.Tokenizer:
    registry.train("mini", [small_corpus], BpeOptions(vocab_size=600, special=(EOT, "<s>")))
    return registry.load("mini@1")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """About 120 KB of real lines (English and Chinese), with blank lines between some."""
    p = tmp_path / "corpus.txt"
    p.write_bytes(head_lines("kjv.txt", 60_000) + b"\n\n" + head_lines("dr.zh-cn.txt", 60_000))
    return p


def lines_of(path: Path) -> list[str]:
    return [x for x in path.read_text(encoding="utf-8").split("\n") if x]


def spec_megatron(prefix: Path) -> list[list[int]]:
    """Megatron's indexed dataset read from its layout alone: the .idx header (MMIDIDX, version 1,
    a dtype code, sequence count, document-index count), int32 lengths, int64 byte pointers,
    int64 document index; each document's ids from the .bin at its pointers."""
    idx = (prefix.parent / (prefix.name + ".idx")).read_bytes()
    assert idx[:9] == b"MMIDIDX\x00\x00"
    version, code, n_seq, n_doc = struct.unpack_from("<QBQQ", idx, 9)
    assert version == 1
    width, fmt = {8: (2, "H"), 4: (4, "i")}[code]
    at = 9 + 8 + 1 + 8 + 8
    lengths = struct.unpack_from(f"<{n_seq}i", idx, at)
    pointers = struct.unpack_from(f"<{n_seq}q", idx, at + 4 * n_seq)
    doc_index = struct.unpack_from(f"<{n_doc}q", idx, at + 12 * n_seq)
    assert at + 12 * n_seq + 8 * n_doc == len(idx)
    data = (prefix.parent / (prefix.name + ".bin")).read_bytes()
    seqs = [list(struct.unpack_from(f"<{n}{fmt}", data, p)) for n, p in zip(lengths, pointers)]
    return [sum(seqs[doc_index[k] : doc_index[k + 1]], []) for k in range(n_doc - 1)]


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_megatron_layout_read_from_its_spec_gives_the_tokenizers_ids(tok: Any, corpus: Path, tmp_path: Path) -> None:
    opts = TokenizeOptions(document="line", eos=EOT, shard_tokens=8_000)
    out = tokenize(tok, [corpus], tmp_path / "ds", opts, threads=2).manifest
    assert out["dtype"] == "uint16" and out["totals"]["shards"] > 3
    docs = [d for s in out["shards"] for d in spec_megatron(tmp_path / "ds" / s["name"])]
    eos = tok.special_tokens[EOT]
    want = [tok.encode_ordinary(x) + [eos] for x in lines_of(corpus)]
    assert len(docs) == len(want) == out["totals"]["documents"]
    assert sum(d != w for d, w in zip(docs, want)) == 0
    assert sum(map(len, docs)) == out["totals"]["tokens"]


def test_npy_and_flat_layouts_hold_the_same_ids(tok: Any, corpus: Path, tmp_path: Path) -> None:
    opts = TokenizeOptions(document="paragraph", bos="<s>", shard_tokens=20_000)
    mega = tokenize(tok, [corpus], tmp_path / "m", opts).manifest
    npy = tokenize(tok, [corpus], tmp_path / "n", TokenizeOptions(**{**opts.recorded(), "format": "npy"})).manifest
    flat = tokenize(tok, [corpus], tmp_path / "f", TokenizeOptions(**{**opts.recorded(), "format": "bin"})).manifest
    want = [d for s in mega["shards"] for d in spec_megatron(tmp_path / "m" / s["name"])]
    got_npy, got_flat = [], []
    for s in npy["shards"]:
        ids = np.load(tmp_path / "n" / f"{s['name']}.npy")
        offs = np.load(tmp_path / "n" / f"{s['name']}.docs.npy")
        got_npy += [ids[a:b].tolist() for a, b in zip(offs[:-1], offs[1:])]
    for s in flat["shards"]:
        ids = np.fromfile(tmp_path / "f" / f"{s['name']}.bin", dtype="<u2")
        offs = np.fromfile(tmp_path / "f" / f"{s['name']}.docs", dtype="<u8")
        got_flat += [ids[a:b].tolist() for a, b in zip(offs[:-1], offs[1:])]
    assert got_npy == got_flat == want
    paragraphs: list[list[str]] = [[]]
    for line in corpus.read_text(encoding="utf-8").split("\n"):
        if line:
            paragraphs[-1].append(line)
        elif paragraphs[-1]:
            paragraphs.append([])
    bos = tok.special_tokens["<s>"]
    assert want == [[bos, *tok.encode_ordinary("\n".join(p))] for p in paragraphs if p]


def test_same_bytes_for_any_thread_count_and_batch_size(
    tok: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = TokenizeOptions(document="line", eos=EOT, shard_tokens=7_000, format="npy")
    tokenize(tok, [corpus], tmp_path / "a", opts, threads=1)
    monkeypatch.setattr(documents, "BATCH_BYTES", 777)
    tokenize(tok, [corpus], tmp_path / "b", opts, threads=2)
    monkeypatch.setattr(documents, "BATCH_BYTES", 50_000)
    tokenize(tok, [corpus], tmp_path / "c", opts, threads=0)
    assert files(tmp_path / "a") == files(tmp_path / "b") == files(tmp_path / "c")


def test_dtype_follows_the_largest_id_plus_one(tok: Any) -> None:
    assert id_bound(tok) == max(tok.special_tokens.values()) + 1 == tok.vocab_size
    assert dtype_for(65_536, "npy") == "uint16" and dtype_for(65_537, "npy") == "uint32"
    assert dtype_for(65_537, "megatron") == "int32"  # Megatron's dtype codes have no uint32


def test_interrupted_run_resumes_to_the_same_bytes(
    tok: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = TokenizeOptions(document="line", shard_tokens=6_000)
    tokenize(tok, [corpus], tmp_path / "whole", opts)
    real = manifest.write
    calls = {"n": 0}

    def stop_at_third(folder: str, doc: dict[str, Any]) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        real(folder, doc)

    monkeypatch.setattr(manifest, "write", stop_at_third)
    with pytest.raises(KeyboardInterrupt):
        tokenize(tok, [corpus], tmp_path / "cut", opts)
    monkeypatch.setattr(manifest, "write", real)
    partial = json.loads((tmp_path / "cut" / "manifest.json").read_text())
    assert partial["state"] == "running" and len(partial["shards"]) == 1
    again = tokenize(tok, [corpus], tmp_path / "cut", opts)
    assert again.resumed and not again.already_complete
    assert files(tmp_path / "cut") == files(tmp_path / "whole")
    assert tokenize(tok, [corpus], tmp_path / "cut", opts).already_complete


def test_a_folder_of_another_tokenizer_or_options_is_refused(
    tok: Any, registry: Registry, corpus: Path, small_corpus: Path, tmp_path: Path
) -> None:
    opts = TokenizeOptions(document="line")
    tokenize(tok, [corpus], tmp_path / "ds", opts)
    registry.train("other", [small_corpus], BpeOptions(vocab_size=500))
    other = registry.load("other@1")
    with pytest.raises(InputError, match=f"made by tokenizer mini@1 \\({tok.hash}\\), not {other.hash}"):
        tokenize(other, [corpus], tmp_path / "ds", opts)
    with pytest.raises(InputError, match="other options \\(eos\\)"):
        tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions(document="line", eos=EOT))
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not empty and holds no manifest.json"):
        tokenize(tok, [corpus], tmp_path / "foreign", opts)
    assert len(tokreg.open_dataset(tmp_path / "ds", tokenizer=tok)) == len(lines_of(corpus))
    with pytest.raises(InputError) as e:
        tokreg.open_dataset(tmp_path / "ds", tokenizer=other)
    assert tok.hash in str(e.value) and other.hash in str(e.value) and "\n" not in str(e.value)


def test_bad_records_fail_with_file_and_line_or_are_skipped_and_counted(tok: Any, run: Cli, tmp_path: Path) -> None:
    src = tmp_path / "web.jsonl"
    good = [{"text": "In the beginning"}, {"text": "was the Word"}]
    src.write_bytes(
        b"\n".join(
            [
                json.dumps(good[0]).encode(),
                b'{"text": "broken',
                json.dumps({"body": "no text field"}).encode(),
                b'{"text": "caf\xe9"}',
                json.dumps({"text": ""}).encode(),
                json.dumps(good[1]).encode(),
            ]
        )
        + b"\n"
    )
    res = run("tokenize", "mini@1", src, "-o", tmp_path / "a", ok=False)
    one_error_line(res, "web.jsonl", "line 2", "--on-bad-record skip")
    res = run("tokenize", "mini@1", src, "-o", tmp_path / "b", "--on-bad-record", "skip", "--json")
    out = json.loads(res.output)
    assert out["documents"] == 2 and out["skipped"] == 4
    doc = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert len(doc["shards"][0]["skipped_examples"]) == 4
    ds = tokreg.open_dataset(tmp_path / "b", tokenizer=tok.hash)
    assert [ds.document(k).tolist() for k in range(2)] == [tok.encode(g["text"]) for g in good]


def test_views_answer_which_data_a_tokenizer_made(tok: Any, run: Cli, corpus: Path, tmp_path: Path) -> None:
    run("tokenize", "mini@1", corpus, "-o", tmp_path / "ds", "--document", "line", "--shard-tokens", "10K")
    doc = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    res = run(
        "sql", f"SELECT shard, tokens FROM shards WHERE tokenizer_hash = '{tok.hash}' ORDER BY position", "--json"
    )
    rows = json.loads(res.output)
    assert [(r["shard"], r["tokens"]) for r in rows] == [(s["name"], s["tokens"]) for s in doc["shards"]]
    res = run(
        "sql", f"SELECT version, tokens FROM datasets_view WHERE dataset_hash = '{doc['dataset_hash']}'", "--json"
    )
    assert json.loads(res.output) == [{"version": "mini@1", "tokens": doc["totals"]["tokens"]}]
    assert doc["dataset_hash"][:22] in run("dataset", "list").output
    assert (
        "documents encoded again from the inputs gave the same ids" in run("dataset", "verify", tmp_path / "ds").output
    )
    shard = tmp_path / "ds" / "shard-00001.bin"
    raw = bytearray(shard.read_bytes())
    raw[10] ^= 1
    shard.write_bytes(bytes(raw))
    one_error_line(run("dataset", "verify", tmp_path / "ds", ok=False), "shard-00001.bin", code=3)


def test_parts_of_shard_of_merge_into_the_documents_of_one_run(
    tok: Any, corpus: Path, tmp_path: Path, run: Cli
) -> None:
    inputs = []
    for k, chunk in enumerate(corpus.read_bytes().split(b"\n\n")[:5]):
        p = tmp_path / f"in{k}.txt"
        p.write_bytes(chunk)
        inputs.append(p)
    opts = dict(document="line", eos=EOT, shard_tokens=3_000)
    whole = tokreg.open_dataset(
        tokenize(tok, inputs, tmp_path / "whole", TokenizeOptions(**opts)).folder, tokenizer=tok
    )
    for i in range(3):
        tokenize(tok, inputs, tmp_path / f"part{i}", TokenizeOptions(**opts, shard_of=(i, 3)))
    one_error_line(
        run("dataset", "merge", tmp_path / "part0", tmp_path / "part2", "-o", tmp_path / "m", ok=False),
        "parts 1 of 3 are missing",
    )
    run("dataset", "merge", tmp_path / "part2", tmp_path / "part0", tmp_path / "part1", "-o", tmp_path / "m")
    merged = tokreg.open_dataset(tmp_path / "m", tokenizer=tok)
    assert len(merged) == len(whole) > 0
    assert all(merged.document(k).tolist() == whole.document(k).tolist() for k in range(len(whole)))
    assert [i["name"] for i in merged.manifest["inputs"]] == [p.name for p in inputs]
    assert "documents encoded again" in run("dataset", "verify", tmp_path / "m").output


@pytest.mark.slow
def test_a_failed_write_is_one_line_and_the_run_resumes(
    tok: Any, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    opts = TokenizeOptions(document="line", shard_tokens=6_000, format="bin")
    tokenize(tok, [corpus], tmp_path / "whole", opts)
    from tokreg.datasets.formats import flat

    real = flat.FlatShard.write_index
    calls = {"n": 0}

    def disk_full(self: Any, suffix: str, path: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError(28, "No space left on device", path)
        real(self, suffix, path)

    monkeypatch.setattr(flat.FlatShard, "write_index", disk_full)
    with pytest.raises(InputError, match="No space left on device.*run the same command again") as e:
        tokenize(tok, [corpus], tmp_path / "cut", opts)
    assert "\n" not in str(e.value)
    monkeypatch.setattr(flat.FlatShard, "write_index", real)
    assert tokenize(tok, [corpus], tmp_path / "cut", opts).resumed
    assert files(tmp_path / "cut") == files(tmp_path / "whole")


@pytest.mark.slow
def test_the_version_page_lists_the_datasets_it_made(
    tok: Any, run: Cli, corpus: Path, db_path: Path, tmp_path: Path
) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from tokreg.serve import create_app

    run("tokenize", "mini@1", corpus, "-o", tmp_path / "ds", "--document", "line")
    doc = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    with Registry.read_only(db_path) as reg, TestClient(create_app(reg), base_url="http://127.0.0.1:8765") as c:
        data = c.get("/v/mini@1?format=json").json()
        html = c.get("/v/mini@1").text
    assert [d["dataset_hash"] for d in data["datasets"]] == [doc["dataset_hash"]]
    assert doc["dataset_hash"][:22] in html and str(tmp_path / "ds") in html


@pytest.mark.slow
def test_every_input_train_reads_gives_the_same_documents(tok: Any, run: Cli, tmp_path: Path) -> None:
    import gzip

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    texts = [x for x in head_lines("dr.en.txt", 20_000).decode().split("\n") if x][:150]
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(("\n".join(texts) + "\n").encode()))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in texts), encoding="utf-8")
    pq.write_table(pa.table({"body": texts}), tmp_path / "c.parquet")
    want = [tok.encode_ordinary(t) for t in texts]
    for name, extra in (
        ("a.txt.gz", ["--document", "line"]),
        ("b.jsonl", ["--field", "body"]),
        ("c.parquet", ["--field", "body"]),
    ):
        run("tokenize", "mini@1", tmp_path / name, "-o", tmp_path / f"out-{name}", *extra, "--no-record")
        ds = tokreg.open_dataset(tmp_path / f"out-{name}", tokenizer=tok.hash)
        assert [ds.document(k).tolist() for k in range(len(ds))] == want, name
    run("tokenize", "mini@1", "-", "-o", tmp_path / "out-stdin", "--no-record", input="\n".join(texts) + "\n")
    ds = tokreg.open_dataset(tmp_path / "out-stdin", tokenizer=tok.hash)
    assert [ds.document(k).tolist() for k in range(len(ds))] == want


def test_a_pinned_dataset_opens_by_name_and_other_data_there_is_refused(
    tok: Any, run: Cli, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "proj"
    web = proj / "data" / "web"
    made = tokenize(tok, [corpus], web, TokenizeOptions(document="line", eos=EOT)).manifest
    monkeypatch.chdir(proj)
    run("pin", "mini@1")
    run("dataset", "pin", "data/web", "--name", "web")
    lock = lockfile.read(proj / "tokreg.lock")
    assert lock.pins["mini"].hash == tok.hash  # the tokenizer's pin is kept beside the dataset's
    pinned = lock.datasets["web"]
    assert (pinned.path, pinned.hash, pinned.tokenizer) == ("data/web", made["dataset_hash"], tok.hash)
    assert len(tokreg.open_dataset("web", tokenizer="mini")) == len(lines_of(corpus))  # the name, the pinned ref
    shutil.rmtree(web)
    other = tokenize(tok, [corpus], web, TokenizeOptions(document="line")).manifest  # no --eos: other ids
    for where in ("web", "data/web", str(web)):
        with pytest.raises(IntegrityError) as e:
            tokreg.open_dataset(where, tokenizer=None)
        msg = str(e.value)
        assert made["dataset_hash"] in msg and other["dataset_hash"] in msg and "\n" not in msg
    monkeypatch.setenv("TOKREG_LOCK", "off")  # no lockfile, no dataset pin: the new data opens
    assert len(tokreg.open_dataset(web, tokenizer=tok)) == len(lines_of(corpus))


def test_plain_text_is_a_document_per_line_by_default_and_the_summary_counts_in_words(
    tok: Any, run: Cli, corpus: Path, tmp_path: Path
) -> None:
    made = tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions()).manifest
    assert made["totals"]["documents"] == len(lines_of(corpus))
    one = tmp_path / "one.txt"
    one.write_text("In the beginning\n", encoding="utf-8")
    out = run("tokenize", "mini@1", one, "-o", tmp_path / "one", "--no-record", "--progress", "none").output
    assert ": 1 shard, " in out and ", 1 document, " in out


def test_a_failed_engine_start_leaves_the_folder_as_it_was(
    tok: Any, run: Cli, corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tokreg.datasets import engines

    class NoCluster:  # Ray's API as far as a failed connection goes: no Ray cluster needed
        @staticmethod
        def is_initialized() -> bool:
            return False

        @staticmethod
        def init(**kw: Any) -> None:
            raise ConnectionError(f"nothing listens at {kw['address']}")

    monkeypatch.setattr(engines, "_ray", lambda: NoCluster)
    res = run(
        "tokenize",
        "mini@1",
        corpus,
        "-o",
        tmp_path / "new",
        "--engine",
        "ray",
        "--address",
        "ray://127.0.0.1:1",
        ok=False,
    )
    one_error_line(res, "cannot connect to Ray at ray://127.0.0.1:1")
    assert not (tmp_path / "new").exists()
    tokenize(tok, [corpus], tmp_path / "done", TokenizeOptions(shard_tokens=6_000))
    before = files(tmp_path / "done")
    res = run(
        "tokenize",
        "mini@1",
        corpus,
        "-o",
        tmp_path / "done",
        "--shard-tokens",
        "6000",
        "--engine",
        "ray",
        "--address",
        "ray://127.0.0.1:1",
        ok=False,
    )
    assert files(tmp_path / "done") == before


def test_the_resolved_document_kind_is_recorded_and_an_older_auto_is_not_guessed(
    tok: Any, corpus: Path, tmp_path: Path
) -> None:
    made = tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions(shard_tokens=6_000)).manifest
    assert made["options"]["document"] == "auto" and made["document_kinds"] == {"text": "line"}
    path = tmp_path / "ds" / "manifest.json"
    doc = json.loads(path.read_text())
    doc["document_kinds"] = {"text": "file"}  # as if `auto` had resolved otherwise when it started
    doc["state"], doc["shards"] = "running", doc["shards"][:1]
    for f in tmp_path.joinpath("ds").iterdir():
        if f.name.startswith("shard-") and f.name not in doc["shards"][0]["files"]:
            f.unlink()
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="other documents \\(text: file, not text: line\\)"):
        tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions(shard_tokens=6_000))
    del doc["document_kinds"]  # a manifest from before the kinds were recorded
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="started with --document auto by an older tokreg") as e:
        tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions(shard_tokens=6_000))
    assert "\n" not in str(e.value)
    doc["options"]["document"] = "line"  # an explicit choice resolves as it always did: it resumes
    path.write_text(json.dumps(doc))
    again = tokenize(tok, [corpus], tmp_path / "ds", TokenizeOptions(document="line", shard_tokens=6_000))
    assert again.resumed and len(again.manifest["shards"]) == len(made["shards"])


def test_json_lines_records_read_as_pythons_json_reads_them(tok: Any, tmp_path: Path) -> None:
    """The core's JSON scanner takes a record only as Python's json.loads reads it; what it
    leaves (NaN, a byte-order mark, a duplicate key, escapes, bad records) Python judges."""
    lines = [
        b'{"text": "plain"}',
        b' {"id": [1, {"a": null}], "text": "tab\\there\\nnew line \\u00e9\\ud83d\\ude00 \\"q\\""} ',
        b'{"text": "first", "text": "last wins"}',
        b'{"n": NaN, "text": "NaN is Python\'s"}',
        b'\xef\xbb\xbf{"text": "after a BOM"}',
        b'{"te\\u0078t": "escaped key"}',
        b'{"text": "lone \\ud800"}',
        b'{"text": 5}',
        b'{"text": "x"} trailing',
        b"   ",
        b'{"text": "no end"',
    ]
    src = tmp_path / "r.jsonl"
    src.write_bytes(b"\n".join(lines))
    ds = tokenize(tok, [src], tmp_path / "ds", TokenizeOptions(on_bad_record="skip", format="npy"))
    got = tokreg.open_dataset(tmp_path / "ds", tokenizer=tok)
    want = []
    for line in lines:
        try:
            t = json.loads(line)["text"]
            if isinstance(t, str) and t and t.encode():
                want.append(tok.encode_ordinary(t))
        except (ValueError, KeyError, UnicodeEncodeError):
            continue
    assert [got.document(k).tolist() for k in range(len(got))] == want and len(want) == 6
    assert ds.manifest["totals"]["skipped"] == 4


def test_strings_with_escapes_anywhere_read_as_pythons_json_reads_them(tok: Any, tmp_path: Path) -> None:
    """The scanner reads a string eight bytes at a time: escapes, multi-byte characters, raw
    control characters and bytes that are not UTF-8 at every offset of a word, checked against
    json.loads (seeded random records)."""
    import random

    rng = random.Random(27)
    good = [b"a", b"abcdefghij", "é ü".encode(), "😀".encode(), b"\\n", b"\\t", b'\\"', b"\\\\", b"\\/",
            b"\\u00e9", b"\\ud83d\\ude00", b"\x7f"]  # fmt: skip
    bad = [b"\\ud800", b"\\udc00x", b"\t", b"\x01", b"\xff", b"\xc3", b"\\x", b"\\u12", b"\\"]
    lines = []
    for _ in range(400):
        body = b"".join(rng.choice(bad if rng.random() < 0.04 else good) for _ in range(rng.randint(0, 12)))
        lines.append(b'{"id": %d, "text": "%s"}' % (rng.randint(0, 9), body))
    src = tmp_path / "r.jsonl"
    src.write_bytes(b"\n".join(lines))
    tokenize(tok, [src], tmp_path / "ds", TokenizeOptions(on_bad_record="skip", format="bin"), threads=2)
    got = tokreg.open_dataset(tmp_path / "ds", tokenizer=tok)
    want = []
    for line in lines:
        try:
            t = json.loads(line)["text"]
            if t and t.encode():
                want.append(tok.encode_ordinary(t))
        except (ValueError, UnicodeEncodeError):
            continue
    assert 100 < len(want) < 350
    assert [got.document(k).tolist() for k in range(len(got))] == want


@pytest.mark.parametrize("fmt", ["megatron", "bin", "npy"])
def test_the_digests_kept_while_writing_are_the_files_on_disk(tok: Any, corpus: Path, tmp_path: Path, fmt: str) -> None:
    """Each shard file's digest is taken from the bytes as they are written (the .npy ids file,
    whose header comes last, read back): the manifest records what `file_digest` reads."""
    ds = tokenize(tok, [corpus], tmp_path / fmt, TokenizeOptions(document="line", shard_tokens=6_000, format=fmt))
    files = {f: d for s in ds.manifest["shards"] for f, d in s["files"].items()}
    assert len(files) >= 4
    assert files == {f: manifest.file_digest(str(tmp_path / fmt / f)) for f in files}


@pytest.mark.parametrize("refused_after", [None, 0, 1])
def test_the_ids_file_written_past_the_page_cache_holds_every_byte_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_after: Any
) -> None:
    """direct.py stages writes of any size in whole blocks; where the file system refuses direct
    writes (here: the first, or the second, refused), the rest goes the ordinary way, none lost
    or written twice."""
    import errno
    import os
    import random

    from tokreg.datasets.formats import direct

    monkeypatch.setattr(direct, "STAGE", 3 * direct.ALIGN)
    calls = {"n": 0}
    real = os.write

    def write(fd: int, data: Any) -> int:
        if f.direct and refused_after is not None:
            calls["n"] += 1
            if calls["n"] > refused_after:
                raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, data)

    monkeypatch.setattr(direct.os, "write", write)
    rng = random.Random(5)
    want = bytearray()
    f = direct.IdsFile(str(tmp_path / "ids"))
    for n in [0, 1, 4095, 4096, 9000, 12288, 3] + [rng.randrange(0, 20_000) for _ in range(30)]:
        chunk = rng.randbytes(n)
        f.write(chunk)
        want += chunk
    f.flush()
    os.fsync(f.fileno())
    f.close()
    assert (tmp_path / "ids").read_bytes() == want
    if refused_after is not None and hasattr(os, "O_DIRECT"):
        assert calls["n"] == refused_after + 1


@pytest.mark.parametrize("kind", ["record", "paragraph"])
def test_mapped_and_read_inputs_give_the_same_shards_and_name_the_same_lines(
    tok: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """A plain file is read through memory maps (its lines numbered from the core's counts), a
    compressed one by `read` (numbered by the reader): with frames of 300 bytes, units over the
    limit among them, both give the same shards and name the same lines in their skipped units."""
    import gzip
    import re

    monkeypatch.setattr(documents, "BATCH_BYTES", 300)
    rows, bad = [], []
    for i in range(150):
        if i % 29 == 7 or i % 41 == 40:
            rows.append(json.dumps({"text": "long " * (40 + i)}).encode())  # over 150 bytes
            bad.append(i + 1)
        elif kind == "record" and i % 17 == 5:
            rows.append(b'{"text": "broken')
            bad.append(i + 1)
        elif kind == "paragraph" and i % 4 == 0:
            rows.append(b"")
        else:
            rows.append(json.dumps({"text": f"line {i} of the corpus"}).encode())
    data = b"\n".join(rows) + b"\n"
    suffix = ".jsonl" if kind == "record" else ".txt"
    (tmp_path / f"c{suffix}").write_bytes(data)
    (tmp_path / f"c{suffix}.gz").write_bytes(gzip.compress(data))
    opts = TokenizeOptions(document=kind, on_bad_record="skip", max_document_bytes=150, format="bin")
    made = {}
    for name in (f"c{suffix}", f"c{suffix}.gz"):
        out = tokenize(tok, [tmp_path / name], tmp_path / f"ds-{name}", opts, threads=2).manifest
        reasons = [r for s in out["shards"] for r in s["skipped_examples"]] + out["skipped_examples"]
        lines = [int(re.search(r" line (\d+)", r).group(1)) for r in reasons]  # type: ignore[union-attr]
        shards = {f: b for f, b in files(tmp_path / f"ds-{name}").items() if f != "manifest.json"}
        made[name] = (shards, lines, out["totals"])
    plain, packed = made.values()
    assert plain == packed
    if kind == "record":
        assert plain[1] == bad[: manifest.EXAMPLES] and plain[2]["skipped"] == len(bad)
    else:  # a paragraph over the limit is named by its first line
        assert plain[2]["skipped"] >= 5 and all(rows[n - 1] for n in plain[1])


def test_inputs_without_a_document_are_refused_and_leave_no_folder(tok: Any, run: Cli, tmp_path: Path) -> None:
    empty, blank = tmp_path / "empty.txt", tmp_path / "blank.txt"
    empty.write_bytes(b"")
    blank.write_bytes(b"\n" * 9)  # a line of spaces is a document; empty lines are not
    res = run("tokenize", "mini@1", empty, "-o", tmp_path / "a", ok=False)
    one_error_line(res, "nothing to tokenize", "empty.txt", "is empty")
    assert not (tmp_path / "a").exists()
    res = run("tokenize", "mini@1", blank, "--document", "line", "-o", tmp_path / "b", ok=False)
    one_error_line(res, "nothing to tokenize in 'blank.txt'", "no document", "no dataset was kept")
    assert not (tmp_path / "b").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "broken\n{"body": "no text"}\n')
    (tmp_path / "c").mkdir()
    res = run("tokenize", "mini@1", bad, "-o", tmp_path / "c", "--on-bad-record", "skip", ok=False)
    one_error_line(res, "all 2 records were skipped", "bad.jsonl")
    assert (tmp_path / "c").is_dir() and not any((tmp_path / "c").iterdir())
    with pytest.raises(InputError, match="nothing to tokenize"):
        tokenize(tok, [empty, empty], tmp_path / "d")


_CUT_WHILE_MAPPED = """
import os, sys
from tokreg import console
from tokreg.datasets import documents

path = sys.argv[1]
read_to = documents._Mapped.read_to


def cut_then_read(self, mm, a0, end):
    os.truncate(path, 0)  # another program cuts the file short while its pages are mapped
    read_to(self, mm, a0, end)


documents._Mapped.read_to = cut_then_read
sys.argv = ["tokreg", *sys.argv[2:]]
console.main()
"""


def test_an_input_cut_short_while_mapped_ends_in_one_line(
    tok: Any, db_path: Path, corpus: Path, tmp_path: Path
) -> None:
    """A plain input is read through read-only maps: a page cut off the file by another program
    raises SIGBUS, which no code recovers from. The console script says so in one line and exits
    with 135 (128 + SIGBUS), instead of the shell's bare "Bus error"; the registry is untouched."""
    import subprocess
    import sys

    before = db_path.read_bytes()
    argv = ["tokenize", "mini@1", str(corpus), "-o", str(tmp_path / "ds"), "--db", str(db_path)]
    res = subprocess.run(
        [sys.executable, "-c", _CUT_WHILE_MAPPED, str(corpus), *argv], capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 135, res.stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("tokreg: error: a file being read was cut short")
    assert "run the command again once the file is complete" in res.stderr
    assert db_path.read_bytes() == before
