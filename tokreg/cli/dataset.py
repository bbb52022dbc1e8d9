"""`tokreg dataset list|show|verify|merge|pin`: the datasets `tokreg tokenize` wrote, as the registry
records them, and a folder checked against its manifest and its inputs (tokreg/datasets/)."""

from __future__ import annotations

import os
from typing import Optional

import click

from ..datasets.merge import merge as run_merge
from ..datasets.reader import complete_manifest
from ..datasets.verify import verify as run_verify
from ..errors import IntegrityError, NotFoundError
from ..loading import load
from ..versions.dataset_pins import pin as run_pin
from .common import db_option, echo_json, echo_table, json_option, open_registry, when
from .tokenize import counted, totals_line


@click.group()
def dataset() -> None:
    """Token datasets: list and show the recorded ones, verify, merge and pin folders.

    \b
    Example:
        tokreg dataset list
        tokreg dataset verify data/web
    """


@dataset.command("list")
@click.option(
    "--tokenizer", "tokenizer_hash", metavar="HASH", help="Only the datasets of this tokenizer hash (prefix)."
)
@json_option
@db_option
def list_(tokenizer_hash: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """List the datasets recorded in the registry, oldest first.

    \b
    Example:
        tokreg dataset list --tokenizer xxh3-128:4489
    """
    rows = open_registry(db).datasets(tokenizer_hash)
    if as_json:
        echo_json(rows)
        return
    echo_table(
        ("dataset", "tokenizer", "format", "shards", "tokens", "documents", "skipped", "folder", "recorded"),
        [
            (
                r["dataset_hash"][:22],
                r["tokenizer_ref"],
                f"{r['format']}/{r['dtype']}",
                r["shards"],
                r["tokens"],
                r["documents"],
                r["skipped"],
                r["folder"],
                when(r["recorded_at"]),
            )
            for r in rows
        ],
    )


@dataset.command()
@click.argument("key")
@json_option
@db_option
def show(key: str, as_json: bool, db: Optional[str]) -> None:
    """Show a dataset: KEY is a dataset folder, or a dataset hash (prefix) the registry records.

    \b
    Example:
        tokreg dataset show data/web
    """
    if os.path.isdir(key):
        doc = complete_manifest(key)
    else:
        found = open_registry(db).find_datasets(key)
        if not found:
            raise NotFoundError(f"no dataset {key!r} is recorded and no such folder exists; see tokreg dataset list")
        doc = found[-1]["manifest"]
    if as_json:
        echo_json(doc)
        return
    t = doc["totals"]
    click.echo(f"dataset   {doc['dataset_hash']}")
    click.echo(f"tokenizer {doc['tokenizer']['ref']} {doc['tokenizer']['hash']}")
    click.echo(f"format    {doc['options']['format']}, {doc['dtype']} ids (id bound {doc['id_bound']:,})")
    click.echo(f"holds     {totals_line(t)}")
    opts = ", ".join(f"{k}={v}" for k, v in doc["options"].items() if v not in (None, False, 0))
    click.echo(f"options   {opts}")
    for i in doc["inputs"]:
        click.echo(f"input     {i['name']}  {i['size']:,} bytes  xxh3 {i['xxh3']}")
    echo_table(
        ("shard", "tokens", "documents", "skipped", "from", "to"),
        [(s["name"], s["tokens"], s["documents"], s["skipped"], s["start"], s["end"]) for s in doc["shards"]],
    )


@dataset.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--sample", default=20, show_default=True, help="Documents per shard to encode again from the inputs.")
@json_option
@db_option
def verify(folder: str, sample: int, as_json: bool, db: Optional[str]) -> None:
    """Check a dataset folder: every file's hash against the manifest, every shard readable, and
    the first SAMPLE documents of each shard encoded again from the inputs (when they are still
    there) to the same ids.

    \b
    Example:
        tokreg dataset verify data/web
    """
    rep = run_verify(folder, sample=sample, load=lambda h: load(h, db=db))
    if as_json:
        echo_json(
            {
                "folder": folder,
                "dataset_hash": rep.dataset_hash,
                "files": rep.files,
                "reencoded": rep.reencoded,
                "inputs_missing": rep.inputs_missing,
                "problems": rep.problems,
                "ok": rep.ok,
            }
        )
    if not rep.ok:
        raise IntegrityError(
            f"dataset {folder} does not match its manifest: {rep.problems[0]}"
            + (f" (and {len(rep.problems) - 1} more)" if len(rep.problems) > 1 else "")
        )
    if not as_json:
        note = (
            f"; inputs not found, ids not re-encoded: {', '.join(rep.inputs_missing[:3])}"
            if rep.inputs_missing
            else f"; {counted(rep.reencoded, 'document')} encoded again from the inputs gave the same ids"
        )
        verb = "matches" if rep.files == 1 else "match"
        click.echo(f"ok {rep.dataset_hash}: {counted(rep.files, 'file')} {verb} the manifest{note}")


@dataset.command()
@click.argument("parts", nargs=-1, required=True, type=click.Path(file_okay=False))
@click.option("--output", "-o", "out", required=True, type=click.Path(file_okay=False), help="The merged folder.")
@click.option("--no-record", is_flag=True, help="Do not record the merged dataset in the registry.")
@db_option
def merge(parts: tuple[str, ...], out: str, no_record: bool, db: Optional[str]) -> None:
    """Join the folders written by `tokreg tokenize --shard-of I/N` (every part, once) into one
    dataset with one manifest.

    \b
    Example:
        tokreg dataset merge data/part-* -o data/web
    """
    doc = run_merge(list(parts), out)
    if not no_record:
        open_registry(db).record_dataset(doc, os.path.abspath(out))
    t = doc["totals"]
    click.echo(f"merged {len(parts)} parts into {out}: {totals_line(t)}; dataset {doc['dataset_hash']}")


@dataset.command()
@click.argument("folder", type=click.Path(file_okay=False, exists=True))
@click.option("--name", help="The name the pin goes by [default: the folder's name].")
@click.option("--dir", "lock_dir", type=click.Path(file_okay=False), help="Write the lockfile here [default: .].")
@json_option
def pin(folder: str, name: Optional[str], lock_dir: Optional[str], as_json: bool) -> None:
    """Pin the complete dataset in FOLDER in ./tokreg.lock: its dataset hash and the hash of the
    tokenizer that made it. In that project, tokreg.open_dataset(FOLDER or NAME) then refuses
    the folder unless it holds exactly this dataset, made by exactly this tokenizer.

    \b
    Example:
        tokreg dataset pin data/web --name web
    """
    p = run_pin(folder, name, lock_dir)
    if as_json:
        echo_json({"name": p.name, "path": p.path, "hash": p.hash, "tokenizer": p.tokenizer})
        return
    click.echo(
        f"pinned dataset {p.name} ({p.path})  {p.hash}  made by {p.tokenizer_ref} {p.tokenizer}  "
        f"in {lock_dir or '.'}/tokreg.lock"
    )
