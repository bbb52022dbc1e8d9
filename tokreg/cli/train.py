"""`tokreg train`: the common options, plus each algorithm's own, made from the `flag()` fields
of its options class (algorithms/), so an algorithm's options live in its module only. An
option given for another algorithm than `--algo` is refused, never ignored."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Optional

import click

from .. import algorithms
from ..errors import InputError
from ..progress import Progress
from .common import db_option, echo_json, json_option, open_registry, say_created

_COMMON = {"vocab_size", "min_frequency", "special", "threads"}


def _flags() -> dict[str, list[tuple[str, dataclasses.Field[Any], type]]]:
    """option name -> [(algorithm's CLI name, field, field type)], over every options class."""
    out: dict[str, list[tuple[str, dataclasses.Field[Any], type]]] = {}
    for cls in algorithms.option_types():
        hints = typing.get_type_hints(cls)
        for f in cls.fields():
            if f.name in _COMMON or "help" not in f.metadata:
                continue
            out.setdefault(f.name, []).append((cls.run_name, f, hints[f.name]))
    return out


FLAGS = _flags()


def _spec(name: str) -> str:
    return str(FLAGS[name][0][1].metadata["flag"] or "--" + name.replace("_", "-"))


def _given(name: str, value: Any) -> bool:
    """Whether the user gave the option: not None, and for a plain on-flag not False (an on/off
    pair such as --strip-accents/--keep-accents is given when it is True or False)."""
    return value is not None and (value is not False or "/" in _spec(name))


def _option(name: str, owners: list[tuple[str, dataclasses.Field[Any], type]]) -> Any:
    """A click option for one field name, shared by the algorithms in `owners`."""
    _, f, kind = owners[0]
    meta = f.metadata
    spec = _spec(name)
    defaults = [d for _, fld, _ in owners if (d := fld.default) not in (None, False, "")]
    shown = " / ".join(str(d) for d in defaults)
    help_ = f"[{', '.join(a for a, _, _ in owners)}] {meta['help']}" + (f" [default: {shown}]" if shown else "")
    attrs: dict[str, Any] = {"help": help_, "default": None}
    base = typing.get_args(kind)[0] if typing.get_origin(kind) is typing.Union else kind
    if "/" in spec:
        pass  # an on/off pair: None when neither is given
    elif base is bool:
        attrs.update(is_flag=True, default=False)
    elif meta["choices"]:
        attrs["type"] = click.Choice(list(meta["choices"]))
    else:
        attrs["type"] = base
    if meta["metavar"]:
        attrs["metavar"] = meta["metavar"]
    return click.option(spec, name, **attrs)


def _options_for(algo: str, given: dict[str, Any], common: dict[str, Any]) -> algorithms.TrainOptions:
    cls = next(c for c in algorithms.option_types() if c.run_name == algo)
    own = cls.field_names()
    for key, value in given.items():
        if _given(key, value) and key not in own:
            owners = " or ".join(a for a, _, _ in FLAGS[key])
            raise InputError(f"{_spec(key).split('/')[0]} applies to --algo {owners}, not {algo}")
    for key, value in common.items():
        if key not in own and value:
            takers = " or ".join(c.run_name for c in algorithms.option_types() if key in c.field_names())
            raise InputError(f"--{key.replace('_', '-')} applies to --algo {takers}, not {algo}")
    kwargs = {k: v for k, v in common.items() if k in own}
    kwargs.update({k: v for k, v in given.items() if k in own and _given(k, v)})
    return cls(**kwargs)


def _with_algorithm_options(f: Any) -> Any:
    for name in reversed(list(FLAGS)):
        f = _option(name, FLAGS[name])(f)
    return f


@click.command()
@click.argument("name")
@click.argument("files", nargs=-1, required=True, type=click.Path())
@click.option(
    "--algo",
    type=click.Choice(sorted(c.run_name for c in algorithms.option_types())),
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
@_with_algorithm_options
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
    opts = _options_for(
        algo,
        given,
        {"vocab_size": vocab_size, "min_frequency": min_frequency, "special": special, "threads": threads},
    )
    reg = open_registry(db)
    progress = Progress(enabled=False if quiet or as_json else None)
    try:
        v = reg.train(name, files, opts, message=message, progress=progress)
    finally:
        progress.clear()
    say_created(reg)
    if as_json:
        echo_json(v.to_json())
        return
    info = reg.show(v.ref, merges=0)
    run = info.get("training_run", {})
    kinds = ", ".join(f"{n:,} {k}" for k, n in sorted(info["tokens_by_kind"].items()))
    click.echo(f"{v.ref}  {v.content_hash}")
    merges = f", {info['merges']:,} merges" if info["merges"] else ""
    click.echo(f"  {info['title']}, {v.vocab_size:,} tokens ({kinds}){merges}")
    if run:
        click.echo(
            f"  corpus {run['corpus_bytes'] / 1e6:,.1f} MB in {len(run['corpus_files'])} file(s), "
            f"trained in {run['total_seconds']:.2f} s"
        )
