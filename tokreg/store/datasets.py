"""The registry's rows of token datasets (tokreg/datasets/): one `datasets` row per complete
dataset folder, one `dataset_shards` row per shard, written in one transaction from the
dataset's manifest. Recording the same dataset at the same folder again changes nothing."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Optional

from sqlalchemy import Connection, insert, select

from .schema import Dataset, DatasetShard, Version


def _data_hash(shard: dict[str, Any]) -> str:
    first = shard["name"] + (".npy" if shard["name"] + ".npy" in shard["files"] else ".bin")
    return str(shard["files"][first]["xxh3"])


def record(conn: Connection, doc: dict[str, Any], folder: str) -> tuple[int, bool]:
    """(the dataset's row id, whether it was written now) for a complete manifest."""
    found = conn.execute(
        select(Dataset.c.id).where(Dataset.c.dataset_hash == doc["dataset_hash"], Dataset.c.folder == folder)
    ).scalar()
    if found is not None:
        return int(found), False
    tok = doc["tokenizer"]
    version_id = conn.execute(
        select(Version.c.id).where(Version.c.content_hash == tok["hash"]).order_by(Version.c.id).limit(1)
    ).scalar()
    shard_of = doc["options"].get("shard_of")
    totals = doc["totals"]
    new_id = conn.execute(
        insert(Dataset).values(
            dataset_hash=doc["dataset_hash"],
            folder=folder,
            tokenizer_ref=tok["ref"],
            tokenizer_hash=tok["hash"],
            version_id=version_id,
            format=doc["options"]["format"],
            dtype=doc["dtype"],
            shards=totals["shards"],
            tokens=totals["tokens"],
            documents=totals["documents"],
            skipped=totals["skipped"],
            shard_of=None if shard_of is None else f"{shard_of[0]}/{shard_of[1]}",
            manifest=doc,
            tokreg_version=doc["tokreg_version"],
            recorded_at=datetime.now(timezone.utc),
        )
    ).inserted_primary_key
    assert new_id is not None
    rows = [
        {
            "dataset_id": new_id[0],
            "position": k,
            "name": s["name"],
            "tokens": s["tokens"],
            "documents": s["documents"],
            "skipped": s["skipped"],
            "data_xxh3": _data_hash(s),
            "files": s["files"],
        }
        for k, s in enumerate(doc["shards"])
    ]
    if rows:
        conn.execute(insert(DatasetShard), rows)
    return int(new_id[0]), True


COLUMNS = (
    "dataset_hash",
    "folder",
    "tokenizer_ref",
    "tokenizer_hash",
    "format",
    "dtype",
    "shards",
    "tokens",
    "documents",
    "skipped",
    "shard_of",
    "recorded_at",
)


def listing(conn: Connection, tokenizer_hash: Optional[str] = None) -> list[dict[str, Any]]:
    """Every recorded dataset (or those of one tokenizer hash prefix), oldest first."""
    q = select(*(Dataset.c[c] for c in COLUMNS)).order_by(Dataset.c.id)
    if tokenizer_hash is not None:
        q = q.where(Dataset.c.tokenizer_hash.startswith(tokenizer_hash))
    return [dict(r._mapping) for r in conn.execute(q)]


def find(conn: Connection, key: str) -> list[dict[str, Any]]:
    """The datasets whose hash starts with `key`, or whose folder is `key`, with their manifest."""
    q = select(*(Dataset.c[c] for c in COLUMNS), Dataset.c.manifest).where(
        Dataset.c.dataset_hash.startswith(key) | (Dataset.c.folder == key)
    )
    return [dict(r._mapping) for r in conn.execute(q.order_by(Dataset.c.id))]
