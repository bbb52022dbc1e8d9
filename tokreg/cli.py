"""The `tokreg` command: a thin skin over `Registry`. Each command opens the registry, calls
one library function and prints a table (or --json / --csv). Library errors become one line
on stderr and the exit code of their class (see errors.py); never a traceback."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections.abc import Sequence
from typing import Any, Callable, Optional, TypeVar

import click

from .chart import png_chart, text_chart
from .errors import InputError, Interrupted, TokregError
from .progress import Progress
from .registry import Registry, load
from .trainers import BpeOptions, Options, UnigramOptions, WordPieceOptions

F = TypeVar("F", bound=Callable[..., Any])


def db_option(f: F) -> F:
    return click.option(
        "--db",
        metavar="PATH_OR_URL",
        envvar="TOKREG_DB",
        help="Registry location: a SQLite path or an SQLAlchemy URL [env TOKREG_DB; default: the XDG data dir].",
    )(f)


def json_option(f: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")(f)


def _registry(db: Optional[str]) -> Registry:
    return Registry(db)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (bytes, memoryview)):
        return "0x" + bytes(v).hex()
    return str(v)


def _json_default(v: Any) -> Any:
    if isinstance(v, (bytes, memoryview)):
        return "0x" + bytes(v).hex()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False, default=_json_default))


def echo_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    cells = [[_cell(c).replace("\n", "\\n") for c in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]
    click.echo("  ".join(h.upper().ljust(w) for h, w in zip(headers, widths)).rstrip())
    for r in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


class TokregGroup(click.Group):
    """Turns library errors and Ctrl-C into one line and an exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TokregError as e:
            click.echo(f"tokreg: error: {e}", err=True)
            ctx.exit(e.exit_code)
        except KeyboardInterrupt:
            click.echo(f"tokreg: error: {Interrupted('interrupted; nothing was written to the registry')}", err=True)
            ctx.exit(Interrupted.exit_code)


@click.group(cls=TokregGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="tokreg")
def cli() -> None:
    """tokreg: train subword tokenizers, keep every version in a SQL registry, and load them
    through a fast encoder.

    \b
    Example:
        tokreg train mini corpus.txt --vocab-size 8000 && tokreg list
    """


# Which options belong to which algorithm; any other one given is an error, not ignored.
_ALGO_OPTIONS = {
    "bpe": {"pattern", "char_level", "end_of_word_suffix"},
    "wordpiece": {
        "lowercase",
        "strip_accents",
        "normalization",
        "prefix",
        "unk_token",
        "limit_alphabet",
        "max_word_chars",
    },
    "unigram": {"byte_fallback", "shrinking_factor", "max_piece_length", "unk_token", "collapse_whitespace"},
}
# Options that more than one algorithm takes.
_SHARED = {"unk_token"}


def _train_options(algo: str, given: dict[str, Any], common: dict[str, Any]) -> Options:
    for key, value in given.items():
        if value not in (None, False, "") and key not in _ALGO_OPTIONS[algo]:
            owner = " or ".join(a for a, keys in _ALGO_OPTIONS.items() if key in keys)
            raise InputError(f"--{key.replace('_', '-')} applies to --algo {owner}, not {algo}")
    if algo == "bpe":
        return BpeOptions(
            pattern=given["pattern"] or "",
            char_level=given["char_level"],
            end_of_word_suffix=given["end_of_word_suffix"],
            **common,
        )
    if algo == "unigram":
        if common.pop("min_frequency"):
            raise InputError("--min-frequency applies to --algo bpe or wordpiece; Unigram prunes by likelihood")
        return UnigramOptions(
            byte_fallback=given["byte_fallback"],
            shrinking_factor=given["shrinking_factor"] or 0.75,
            max_piece_length=given["max_piece_length"] or 16,
            unk_token=given["unk_token"] or "<unk>",
            remove_extra_whitespaces=given["collapse_whitespace"],
            **common,
        )
    return WordPieceOptions(
        lowercase=given["lowercase"],
        strip_accents=given["strip_accents"],
        unicode_normalization=given["normalization"] or "none",
        continuing_prefix=given["prefix"] or "##",
        unk_token=given["unk_token"] or "[UNK]",
        limit_alphabet=given["limit_alphabet"],
        max_input_chars_per_word=given["max_word_chars"] or 100,
        **common,
    )


@cli.command()
@click.argument("name")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option(
    "--algo",
    type=click.Choice(sorted(_ALGO_OPTIONS)),
    default="bpe",
    show_default=True,
    help="Training algorithm.",
)
@click.option("--vocab-size", type=int, required=True, help="Total tokens, base alphabet and special tokens included.")
@click.option("--min-frequency", type=int, default=0, show_default=True, help="Never merge a rarer pair.")
@click.option("--special", "special", multiple=True, metavar="TOKEN", help="Add a special token (repeatable).")
@click.option("--threads", type=int, default=0, show_default=True, help="Counting threads (0 = one per core).")
@click.option("--message", "-m", help="A note stored with the version.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option(
    "--pattern",
    help="[bpe] Pre-tokenizer: gpt2, cl100k, o200k, whitespace, or a regex "
    "[default: cl100k; whitespace with --char-level].",
)
@click.option("--char-level", is_flag=True, help="[bpe] Classic BPE over characters instead of bytes.")
@click.option("--end-of-word-suffix", metavar="S", help="[bpe] End-of-word symbol for --char-level, e.g. '</w>'.")
@click.option("--lowercase", is_flag=True, help="[wordpiece] Lowercase the text (uncased BERT).")
@click.option(
    "--strip-accents/--keep-accents",
    default=None,
    help="[wordpiece] Remove accents [default: when --lowercase, as BERT does].",
)
@click.option(
    "--normalization",
    type=click.Choice(["none", "nfc", "nfkc", "nfd", "nfkd"]),
    help="[wordpiece] Unicode normalization before the BERT steps [default: none].",
)
@click.option("--prefix", metavar="P", help="[wordpiece] Continuation prefix [default: ##].")
@click.option("--unk-token", metavar="T", help="[wordpiece, unigram] Unknown token [default: [UNK] / <unk>].")
@click.option("--limit-alphabet", type=int, help="[wordpiece] Keep only the N most frequent characters.")
@click.option("--max-word-chars", type=int, help="[wordpiece] Longer words encode as the unknown token [default: 100].")
@click.option("--byte-fallback", is_flag=True, help="[unigram] Add the 256 <0xNN> byte pieces: nothing is unknown.")
@click.option(
    "--shrinking-factor", type=float, help="[unigram] Fraction of pieces kept per prune round [default: 0.75]."
)
@click.option("--max-piece-length", type=int, help="[unigram] Longest piece, in characters [default: 16].")
@click.option(
    "--collapse-whitespace", is_flag=True, help="[unigram] Collapse runs of spaces, as SentencePiece (lossy)."
)
@json_option
@db_option
def train(
    name: str,
    files: tuple[str, ...],
    algo: str,
    vocab_size: int,
    min_frequency: int,
    special: tuple[str, ...],
    threads: int,
    message: Optional[str],
    quiet: bool,
    as_json: bool,
    db: Optional[str],
    **given: Any,
) -> None:
    """Train a tokenizer on FILES and record it as the next version of NAME.

    \b
    Example:
        tokreg train gpt-mini corpus/*.txt --vocab-size 32000 --pattern cl100k
        tokreg train bert-mini corpus/*.txt --algo wordpiece --vocab-size 8000 --lowercase --special [CLS]
        tokreg train sp-mini corpus/*.txt --algo unigram --vocab-size 8000 --byte-fallback
    """
    opts = _train_options(
        algo,
        given,
        {"vocab_size": vocab_size, "min_frequency": min_frequency, "special": special, "threads": threads},
    )
    reg = _registry(db)
    progress = Progress(enabled=False if quiet or as_json else None)
    try:
        v = reg.train(name, files, opts, message=message, progress=progress)
    finally:
        progress.clear()
    if as_json:
        echo_json(v.to_json())
        return
    info = reg.show(v.ref, merges=0)
    run = info.get("training_run", {})
    kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(info["tokens_by_kind"].items()))
    click.echo(f"{v.ref}  {v.content_hash}")
    level = (" byte-level" if v.config.get("byte_level") else " character-level") if v.algorithm == "bpe" else ""
    merges = f", {info['merges']:,} merges" if info["merges"] else ""
    click.echo(f"  {v.algorithm}{level}, {v.vocab_size:,} tokens ({kinds}){merges}")
    if run:
        click.echo(
            f"  corpus {run['corpus_bytes'] / 1e6:,.1f} MB in {len(run['corpus_files'])} file(s), "
            f"trained in {run['total_seconds']:.2f} s"
        )


@cli.command(name="list")
@click.argument("name", required=False)
@json_option
@db_option
def list_(name: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """List tokenizer versions (all, or those of NAME).

    \b
    Example:
        tokreg list --json
    """
    versions = _registry(db).versions(name)
    if as_json:
        echo_json([v.to_json() for v in versions])
        return
    if not versions:
        click.echo("the registry is empty; train one with: tokreg train NAME FILE... --vocab-size N", err=True)
        return
    echo_table(
        ["ref", "algorithm", "vocab", "hash", "created", "message"],
        [
            [
                v.ref,
                v.algorithm,
                v.vocab_size,
                v.content_hash[:25] + "…",
                v.created_at.strftime("%Y-%m-%d %H:%M"),
                v.message or "",
            ]
            for v in versions
        ],
    )


@cli.command()
@click.argument("ref")
@click.option("--merges", "n_merges", type=int, default=10, show_default=True, help="How many first merges to show.")
@click.option("--history", is_flag=True, help="Also show each training round and a chart of the curve (Unigram).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Write the training curve as a PNG (needs matplotlib).")
@json_option
@db_option
def show(ref: str, n_merges: int, history: bool, plot: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Show a version: config, training run, token counts, the first merges (or the most
    likely pieces), and with --history the training curve.

    \b
    Example:
        tokreg show gpt-mini@1 --merges 20
        tokreg show sp-mini --history --plot curve.png
    """
    reg = _registry(db)
    info = reg.show(ref, merges=n_merges)
    rounds = reg.history(ref) if history or plot else []
    if plot:
        if not rounds:
            raise InputError(f"{info['ref']} has no recorded training rounds (only Unigram training records them)")
        png_chart(rounds, plot, title=f"{info['ref']} training")
    if as_json:
        echo_json({**info, "rounds": rounds} if history else info)
        return
    click.echo(f"{info['ref']}  {info['hash']}")
    click.echo(f"  {'sha256':<14}{info['sha256']}")
    click.echo(f"  {'algorithm':<14}{info['algorithm']} ({info['source']})")
    click.echo(
        f"  {'vocab size':<14}{info['vocab_size']:,}  "
        + ", ".join(f"{k} {n:,}" for k, n in sorted(info["tokens_by_kind"].items()))
    )
    click.echo(f"  {'merges':<14}{info['merges']:,}")
    click.echo(f"  {'lossless':<14}{'yes' if info['lossless'] else 'no (decode(encode(s)) may differ from s)'}")
    click.echo(f"  {'created':<14}{info['created_at']}")
    if info["message"]:
        click.echo(f"  {'message':<14}{info['message']}")
    for k, val in sorted(info["config"].items()):
        click.echo(f"  {k:<14}{val}")
    run = info.get("training_run")
    if run:
        click.echo("  training run:")
        click.echo(
            f"    corpus      {run['corpus_fingerprint']}  {run['corpus_bytes']:,} bytes in "
            f"{len(run['corpus_files'])} file(s)"
        )
        for f in run["corpus_files"][:5]:
            click.echo(f"      {f['path']}  {f['size']:,} bytes")
        click.echo(
            f"    timings     count {run['count_seconds']:.2f} s, train {run['train_seconds']:.2f} s, "
            f"total {run['total_seconds']:.2f} s, {run['threads']} thread(s)"
        )
        click.echo(f"    tokreg      {run['tokreg_version']}, started {run['started_at']}")
    if info["first_merges"]:
        click.echo("  first merges:")
        scored = any(m["score"] is not None for m in info["first_merges"])
        echo_table(
            ["rank", "left", "right", "result", "count"] + (["score"] if scored else []),
            [
                [m["rank"], repr(m["left"]), repr(m["right"]), repr(m["result"]), m["count"]]
                + ([f"{m['score']:.3g}"] if scored else [])
                for m in info["first_merges"]
            ],
        )
    if info.get("top_pieces"):
        click.echo("  most likely pieces:")
        echo_table(
            ["id", "piece", "log prob"], [[p["id"], repr(p["text"]), f"{p['score']:.4f}"] for p in info["top_pieces"]]
        )
    if history:
        if not rounds:
            click.echo("  no recorded training rounds (only Unigram training records them)")
            return
        click.echo("  training rounds:")
        echo_table(
            ["round", "phase", "vocab", "log-likelihood"],
            [[r["round"], r["phase"], f"{r['vocab_size']:,}", f"{r['log_likelihood']:,.1f}"] for r in rounds],
        )
        for line in text_chart([r["log_likelihood"] for r in rounds], title="  log-likelihood by round"):
            click.echo("  " + line)
    if plot:
        click.echo(f"  wrote the training curve to {plot}")


@cli.command()
@click.argument("ref")
@click.argument("text", required=False)
@click.option("--file", "-f", "file", type=click.Path(), help="Encode the contents of this file instead.")
@click.option("--allow-special", is_flag=True, help="Turn special-token strings in the text into their ids.")
@json_option
@db_option
def encode(
    ref: str, text: Optional[str], file: Optional[str], allow_special: bool, as_json: bool, db: Optional[str]
) -> None:
    """Encode TEXT (or --file, or stdin) with a version; print the ids.

    \b
    Example:
        tokreg encode gpt-mini@1 "hello world"
    """
    if file is not None and text is not None:
        raise InputError("give TEXT or --file, not both")
    if file is not None:
        try:
            with open(file, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            raise InputError(f"file {file!r} does not exist") from None
        except UnicodeDecodeError as e:
            raise InputError(f"file {file!r} is not UTF-8 at byte {e.start}") from None
    elif text is None:
        text = sys.stdin.read()
    tok = load(ref, db=db)
    ids = tok.encode(text, allowed_special="all" if allow_special else frozenset(), disallowed_special=())
    if as_json:
        echo_json(
            {
                "ref": tok.ref,
                "hash": tok.hash,
                "ids": ids,
                "tokens": [tok.token_bytes(i).decode("utf-8", "replace") for i in ids],
            }
        )
    else:
        click.echo(" ".join(map(str, ids)))


@cli.command()
@click.argument("ref")
@click.argument("ids", nargs=-1, required=True, type=int)
@db_option
def decode(ref: str, ids: tuple[int, ...], db: Optional[str]) -> None:
    """Decode token IDS with a version; print the text.

    \b
    Example:
        tokreg decode gpt-mini@1 31373 995
    """
    click.echo(load(ref, db=db).decode(list(ids)))


@cli.command()
@click.argument("query")
@click.option("--csv", "as_csv", is_flag=True, help="Print CSV.")
@json_option
@db_option
def sql(query: str, as_csv: bool, as_json: bool, db: Optional[str]) -> None:
    """Run a read-only SQL query against the registry (tables, and the views vocab and merges_view).

    \b
    Example:
        tokreg sql "SELECT text, count FROM vocab WHERE tokenizer = 'gpt-mini@1' ORDER BY count DESC LIMIT 20"
    """
    cols, rows = _registry(db).sql(query)
    if as_json:
        echo_json([dict(zip(cols, r)) for r in rows])
    elif as_csv:
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(cols)
        w.writerows([[_cell(c) for c in r] for r in rows])
        click.echo(buf.getvalue(), nl=False)
    else:
        echo_table(cols, rows)


@cli.group()
def db() -> None:
    """Manage the registry's schema (it is also upgraded automatically on open).

    \b
    Example:
        tokreg db current
    """


@db.command()
@db_option
def upgrade(db: Optional[str]) -> None:
    """Upgrade the registry's schema to the newest migration.

    \b
    Example:
        tokreg db upgrade --db team.db
    """
    reg = _registry(db)
    reg.upgrade()
    cur, _ = reg.schema_revision()
    click.echo(f"{reg.url}: schema at revision {cur} (newest)")


@db.command()
@db_option
def current(db: Optional[str]) -> None:
    """Print the registry's location and schema revision.

    \b
    Example:
        tokreg db current
    """
    reg = _registry(db)
    cur, head = reg.schema_revision()
    click.echo(f"{reg.url}: schema at revision {cur}" + (" (newest)" if cur == head else f" (newest is {head})"))


def main(argv: Optional[Sequence[str]] = None) -> None:
    cli.main(args=argv, prog_name="tokreg")


from . import (
    cli_import,  # noqa: E402,F401
    cli_versions,  # noqa: E402,F401
)
