"""Training at corpus scale: every kind of input gives the same hash as the plain text, counts
are a file that trains to the same hash and sums across machines, several sizes come from one
run, the memory budget is kept by its rule, and the Dask engine counts like this machine."""

from __future__ import annotations

import gzip
import io
import json
import lzma
from pathlib import Path

import pytest

from tokreg import BpeOptions, InputError, Registry, UnigramOptions, WordPieceOptions, _core
from tokreg.training import budget as memory

from .conftest import Cli, head_lines


@pytest.fixture
def text(tmp_path: Path) -> bytes:
    return head_lines("dr.en.txt", 60_000) + head_lines("dr.zh-cn.txt", 40_000)


def test_every_input_kind_gives_the_plain_text_hash(registry: Registry, tmp_path: Path, text: bytes) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text)
    opts = BpeOptions(vocab_size=400)
    want = registry.train("plain", [plain], opts).content_hash
    lines = text.decode().splitlines(keepends=True)
    half = len(lines) // 2
    folder = tmp_path / "folder" / "nested"
    folder.mkdir(parents=True)
    (folder / "b.txt").write_text("".join(lines[half:]))
    (folder.parent / "a.txt").write_text("".join(lines[:half]))
    (folder.parent / "skip.md").write_text("not this one\n")
    (tmp_path / "t.gz").write_bytes(gzip.compress(text))
    (tmp_path / "t.xz").write_bytes(lzma.compress(text))
    zstd = pytest.importorskip("zstandard")
    (tmp_path / "t.zst").write_bytes(zstd.ZstdCompressor().compress(text))
    (tmp_path / "t.jsonl").write_text("".join(json.dumps({"id": i, "text": ln}) + "\n" for i, ln in enumerate(lines)))
    for name, inputs, kw in [
        ("folder", [tmp_path / "folder"], {"glob": "*.txt"}),
        ("gz", [tmp_path / "t.gz"], {}),
        ("xz", [tmp_path / "t.xz"], {}),
        ("zst", [tmp_path / "t.zst"], {}),
        ("jsonl", [tmp_path / "t.jsonl"], {"field": "text"}),
        ("iterator", [iter(lines)], {}),
    ]:
        v = registry.train(name, inputs, opts, **kw)
        assert v.content_hash == want, name
    run = registry.show("folder").training_run
    assert [f["name"] for f in run["corpus_files"]] == ["folder/a.txt", "folder/nested/b.txt"]
    gz_file = registry.show("gz").training_run["corpus_files"][0]
    assert (gz_file["size"], gz_file["compression"]) == (len(text), "gzip")
    pq = pytest.importorskip("pyarrow.parquet")
    pa = pytest.importorskip("pyarrow")
    pq.write_table(pa.table({"text": lines}), tmp_path / "t.parquet")
    assert registry.train("pq", [tmp_path / "t.parquet"], opts).content_hash == want
    # Damage found when the file is opened (its footer) and when a page is read: one line each.
    good = (tmp_path / "t.parquet").read_bytes()
    footer = good[:-10] + b"\xff\xff" + good[-8:]
    pages = bytearray(good)
    for i in range(64, len(good) // 2, 7):
        pages[i] ^= 0x55
    for name, data in [("footer", footer), ("pages", bytes(pages))]:
        (tmp_path / f"{name}.parquet").write_bytes(data)
        with pytest.raises(InputError, match=r"is not a readable Parquet file") as e:
            registry.train(name, [tmp_path / f"{name}.parquet"], opts)
        assert "\n" not in str(e.value)


def test_reproduce_folders_and_compressed_files_but_not_stdin(
    run: Cli, registry: Registry, tmp_path: Path, text: bytes, db_path: Path
) -> None:
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.txt.gz").write_bytes(gzip.compress(text))
    (tmp_path / "c" / "y.txt").write_bytes(text[:5000])
    registry.train("f", [tmp_path / "c"], BpeOptions(vocab_size=300))
    assert registry.reproduce("f").same
    res = run("train", "s", "-", "--vocab-size", "300", "-q", input=io.BytesIO(text))
    assert "s@1" in res.output
    with pytest.raises(InputError, match=r"read <stdin> \([\d,]+ bytes, xxh3 \w+…\), which cannot be read again"):
        registry.reproduce("s")
    registry.train("it", [iter(["some text", "more text"])], BpeOptions(vocab_size=260))
    with pytest.raises(InputError, match="<iterator>"):
        registry.reproduce("it")


def test_counts_files_train_to_the_same_hash_and_merge(
    run: Cli, registry: Registry, tmp_path: Path, text: bytes
) -> None:
    lines = text.decode().splitlines(keepends=True)
    (tmp_path / "a.txt").write_text("".join(lines[::2]))
    (tmp_path / "b.txt").write_text("".join(lines[1::2]))
    both = [tmp_path / "a.txt", tmp_path / "b.txt"]
    # (superbpe: the run counter's counts write their keys only when asked, here by the file and the sum)
    for algo, extra in [
        ("bpe", ["--pattern", "o200k"]),
        ("wordpiece", ["--lowercase"]),
        ("unigram", []),
        ("superbpe", ["--max-words", "3"]),
    ]:
        size = {"bpe": "420", "wordpiece": "1500", "unigram": "1500", "superbpe": "420"}[algo]
        direct = json.loads(
            run("train", f"d-{algo}", *both, "--algo", algo, "--vocab-size", size, *extra, "--json").output
        )
        run("count", *both, "--algo", algo, *extra, "-o", tmp_path / f"{algo}.counts")
        run("count", both[0], "--algo", algo, *extra, "-o", tmp_path / "p1.counts")
        run("count", both[1], "--algo", algo, *extra, "-o", tmp_path / "p2.counts")
        run("count", "--merge", tmp_path / "p1.counts", tmp_path / "p2.counts", "-o", tmp_path / "m.counts")
        for counts in (f"{algo}.counts", "m.counts"):
            got = run(
                "train",
                f"c-{algo}",
                "--from-counts",
                tmp_path / counts,
                "--algo",
                algo,
                "--vocab-size",
                size,
                *extra,
                "--json",
            )
            assert json.loads(got.output)["hash"] == direct["hash"], (algo, counts)
        assert (
            registry.show(f"c-{algo}").training_run["corpus_fingerprint"]
            == registry.show(f"d-{algo}").training_run["corpus_fingerprint"]
        )
    bad = run("train", "x", "--from-counts", tmp_path / "bpe.counts", "--vocab-size", "400", ok=False)
    assert "counted with" in bad.output and "count the corpus again" in bad.output
    damaged = tmp_path / "damaged.counts"
    damaged.write_bytes((tmp_path / "bpe.counts").read_bytes()[:-3])
    res = run("train", "x", "--from-counts", damaged, "--vocab-size", "400", "--pattern", "o200k", ok=False)
    assert res.exit_code == 3 and "truncated" in res.output


@pytest.mark.parametrize("kind", ["gzip", "xz", "zstd"])
def test_a_cut_compressed_corpus_is_refused_and_records_nothing(
    registry: Registry, run: Cli, tmp_path: Path, text: bytes, kind: str
) -> None:
    """A compressed corpus that ends inside its stream is one line, not a version trained on
    the part that was there (zstandard's own reader returns a cut frame's part without a word);
    a zstd file of several whole frames is read whole."""
    if kind == "zstd":
        zstd = pytest.importorskip("zstandard")
        whole = zstd.ZstdCompressor().compress(text)
        half = len(text) // 2
        frames = zstd.ZstdCompressor().compress(text[:half]) + zstd.ZstdCompressor().compress(text[half:])
        (tmp_path / "frames.zst").write_bytes(frames)
        opts = BpeOptions(vocab_size=400)
        assert (
            registry.train("frames", [tmp_path / "frames.zst"], opts).content_hash
            == registry.train("plain", [iter([text.decode()])], opts).content_hash
        )
    else:
        whole = gzip.compress(text) if kind == "gzip" else lzma.compress(text)
    cut = tmp_path / f"cut.{kind}"
    cut.write_bytes(whole[: len(whole) // 2])
    before = [v.ref for v in registry.versions()]
    res = run("train", "cut", cut, "--vocab-size", "400", ok=False)
    assert res.exit_code != 0 and "Traceback" not in res.output
    assert str(cut) in res.output and "damaged or truncated" in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1
    assert [v.ref for v in registry.versions()] == before


@pytest.mark.parametrize(
    "options,sizes",
    [
        (BpeOptions(vocab_size=0, char_level=True), [1000, 1300, 1600]),
        (BpeOptions(vocab_size=0), [300, 500, 800]),
        (WordPieceOptions(vocab_size=0, lowercase=True), [1200, 1500, 1800]),
        (UnigramOptions(vocab_size=0), [1200, 1500, 2000]),
    ],
    ids=["char-bpe", "byte-bpe", "wordpiece", "unigram"],
)
def test_several_sizes_from_one_run_equal_single_runs(
    registry: Registry, tmp_path: Path, text: bytes, options: object, sizes: list[int]
) -> None:
    import dataclasses

    corpus = tmp_path / "c.txt"
    corpus.write_bytes(text)
    linked = registry.train_sizes("many", [corpus], options, sizes)  # type: ignore[arg-type]
    assert [v.vocab_size for v in linked] == sizes
    # BPE and WordPiece: every size equals a run of that size alone. Unigram: the largest does;
    # the smaller ones come from the pruning rounds on the way (reproduce retrains the run).
    exact = sizes if not isinstance(options, UnigramOptions) else sizes[-1:]
    for v, size in zip(linked, sizes):
        if size in exact:
            single = registry.train(f"one-{size}", [corpus], dataclasses.replace(options, vocab_size=size))  # type: ignore[type-var]
            assert single.content_hash == v.content_hash, size
    listed = registry.versions("many")
    assert listed[0].same_run == ("many@2", "many@3") and listed[2].same_run == ("many@1", "many@2")
    assert registry.show("many@2").version.same_run == ("many@1", "many@3")
    assert registry.reproduce("many@2").same


def test_memory_budget_spills_and_drops_by_rule(
    registry: Registry, tmp_path: Path, text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(text)
    monkeypatch.setattr(memory, "MINIMUM", 1 << 16)
    limit = 300_000  # the table spills at 35%, training keeps 45%: far below this corpus' pieces
    hashes = set()
    for threads in (1, 2):
        v = registry.train("b", [corpus], BpeOptions(vocab_size=400, memory_limit=limit, threads=threads))
        hashes.add(v.content_hash)
    assert len(hashes) == 1
    counting = registry.show("b").training_run["counting"]
    assert counting["memory_limit"] == limit and counting["spilled_runs"] > 0
    assert counting["dropped_pieces"] > 0 and 0 < counting["dropped_mass"] < 0.5
    # The rule: the kept pieces are the most frequent ones, and every dropped piece is rarer.
    c = _core.Counter.pieces(_core.PATTERNS["cl100k"])
    c.feed(text)
    full = c.finish()
    kept = full.keep_within(memory.shares(limit)[1])
    kept_counts = dict(kept.items())
    dropped = [n for p, n in full.items() if p not in kept_counts]
    assert len(kept) + len(dropped) == len(full) and min(kept_counts.values()) >= max(dropped)
    assert registry.reproduce("b").same


def test_counts_do_not_depend_on_chunks_threads_or_spills(text: bytes) -> None:
    def count(chunk: int, threads: int, budget: int) -> bytes:
        c = _core.Counter.pieces(_core.PATTERNS["o200k"], threads=threads, table_budget=budget)
        for i in range(0, len(text), chunk):
            c.feed(text[i : i + chunk])
        return _core.Counts.from_bytes(c.finish().to_bytes()).items()  # type: ignore[return-value]

    want = count(1 << 20, 1, 1 << 40)
    for chunk, threads, budget in [(1, 2, 1 << 40), (777, 2, 1 << 40), (100_000, 1, 50_000), (4096, 2, 10_000)]:
        assert count(chunk, threads, budget) == want


def test_bounded_pieces_and_tokens_and_a_recorded_sample(registry: Registry, tmp_path: Path, text: bytes) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(text)
    v = registry.train("bounded", [corpus], BpeOptions(vocab_size=600, max_token_length=4, max_piece_bytes=12))
    assert max(len(registry.load(v.ref).token_bytes(i)) for i in range(v.vocab_size)) <= 4
    s = registry.train("sample", [corpus], BpeOptions(vocab_size=300, sample_bytes=10_000))
    f = registry.show(s.ref).training_run["corpus_files"][0]
    assert not f["whole"] and 10_000 <= f["size"] < 10_000 + 2000 and text[: f["size"]].endswith(b"\n")
    assert registry.reproduce(s.ref).same


def test_progress_json_lines(run: Cli, tmp_path: Path, text: bytes) -> None:
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(text)
    res = run("train", "p", corpus, "--vocab-size", "500", "--progress", "json")
    lines = [json.loads(x) for x in res.stderr.splitlines() if x.strip()]
    phases = {x["phase"] for x in lines}
    assert {"read", "merge"} <= phases
    assert all(set(x) == {"phase", "done", "total", "elapsed", "rate", "eta"} for x in lines)


def test_dask_local_cluster_counts_like_this_machine(registry: Registry, tmp_path: Path, text: bytes) -> None:
    distributed = pytest.importorskip("distributed")
    lines = text.decode().splitlines(keepends=True)
    files = []
    for k in range(3):
        p = tmp_path / f"part{k}.txt"
        p.write_text("".join(lines[k::3]))
        files.append(p)
    local = registry.train("local", files, BpeOptions(vocab_size=500))
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        on_dask = registry.train("dask", files, BpeOptions(vocab_size=500), engine=cluster.scheduler_address)
    assert on_dask.content_hash == local.content_hash
    runs = [registry.show(r).training_run for r in ("local", "dask")]
    assert runs[0]["corpus_fingerprint"] == runs[1]["corpus_fingerprint"]
    assert runs[1]["counting"]["engine"].startswith("dask")
