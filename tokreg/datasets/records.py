"""The registry side of datasets: recording a complete dataset (after `tokreg tokenize`),
listing and finding recorded ones. SQL is in tokreg/store/datasets.py; this file opens the
registry's read and write transactions around it."""

from __future__ import annotations

from typing import Any, Optional

from ..registry import Registry
from ..store import datasets as rows


def record(reg: Registry, doc: dict[str, Any], folder: str) -> dict[str, Any]:
    """Records a complete dataset; {"id", "new", "registry"}."""
    with reg._writing() as conn:
        row_id, new = rows.record(conn, doc, folder)
    return {"id": row_id, "new": new, "registry": reg.where}


def listing(reg: Registry, tokenizer_hash: Optional[str] = None) -> list[dict[str, Any]]:
    with reg._reading() as conn:
        return rows.listing(conn, tokenizer_hash)


def find(reg: Registry, key: str) -> list[dict[str, Any]]:
    with reg._reading() as conn:
        return rows.find(conn, key)
