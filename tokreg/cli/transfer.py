"""Other tools' files: `tokreg import FORMAT FILE --name NAME` registers one as the next version of
NAME (one subcommand per format, each a call to one Registry method), and `tokreg export` writes
a version to one file that needs no registry."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any, Optional

import click

from .. import algorithms
from ..algorithms import WordPieceOptions
from ..data import VersionInfo
from ..formats.hf_settings import NotCarried
from ..formats.tiktoken_file import parse_specials
from ..formats.tiktoken_presets import PRESETS
from ..formats.wordpiece_vocab import BERT_SPECIALS
from ..registry import Registry
from ..versions.import_export import EXPORT_FORMATS, ExportCheckSkipped
from .common import db_option, echo_json, json_option, open_registry, say_created


def _done(reg: Registry, v: VersionInfo, file: str, as_json: bool) -> None:
    say_created(reg)
    if as_json:
        echo_json(algorithms.version_json(v))
    else:
        click.echo(f"{v.ref}  {v.content_hash}  ({v.vocab_size:,} tokens, imported from {file})")


def _common(f: Any) -> Any:
    f = click.option("--name", required=True, help="Register as the next version of this name.")(f)
    f = click.option("--message", "-m", help="A note stored with the version.")(f)
    return db_option(json_option(f))


@click.group(name="import")
def import_() -> None:
    """Register a tokenizer from another tool's file as a new version.

    \b
    Example:
        tokreg import tiktoken cl100k_base.tiktoken --name cl100k_base --preset cl100k_base
    """


@import_.command(name="tiktoken")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option(
    "--preset",
    type=click.Choice(list(PRESETS)),
    help="A well-known encoding: its split pattern and every special token at its official id.",
)
@click.option("--pattern", help="The split pattern: cl100k, o200k, gpt2, or a regex (replaces the preset's).")
@click.option(
    "--special",
    "special",
    multiple=True,
    metavar="TOKEN=ID",
    help="A special token and its id; adds to the preset, or replaces its token of that name or id.",
)
@click.option("--expect-sha256", metavar="HEX", help="Refuse the file unless its sha256 (or its content's) is this.")
@_common
def import_tiktoken(
    file: str,
    preset: Optional[str],
    pattern: Optional[str],
    special: tuple[str, ...],
    expect_sha256: Optional[str],
    name: str,
    message: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Register a tiktoken .tiktoken rank file (plain, or gzip/xz/zstd); the merges are
    recovered from the ranks. The file holds neither the split pattern nor the special tokens:
    give --preset, or --pattern and --special. A preset is refused on another encoding's file.
    Llama 3 is Meta's original layout; for a later Llama 3.x file, rename its reserved slots
    with --special (3.1: --special '<|eom_id|>=128008').

    \b
    Example:
        tokreg import tiktoken cl100k_base.tiktoken --name cl100k_base --preset cl100k_base
    """
    reg = open_registry(db)
    v = reg.import_tiktoken(
        name,
        file,
        pattern=pattern,
        specials=parse_specials(special),
        preset=preset,
        expect_sha256=expect_sha256,
        message=message,
    )
    _done(reg, v, file, as_json)


@import_.command(name="hf")
@click.argument("file", type=click.Path())
@_common
def import_hf(file: str, name: str, message: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Register a Hugging Face tokenizer.json (BPE byte- or character-level, WordPiece, Unigram),
    or the one in a directory, with the transformers settings of the tokenizer_config.json and
    special_tokens_map.json beside it (roles, model_max_length, padding and truncation sides,
    model_input_names) and the file's padding and truncation; a warning names what is not carried.

    \b
    Example:
        tokreg import hf ./bert-base-uncased/ --name bert
    """
    reg = open_registry(db)
    with _warned(NotCarried):
        v = reg.import_hf(name, file, message=message)
    _done(reg, v, file, as_json)


@import_.command(name="tekken")
@click.argument("file", type=click.Path(dir_okay=False))
@_common
def import_tekken(file: str, name: str, message: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Register a Mistral tekken.json (ranks, pattern and special tokens); ids are
    mistral-common's (special tokens first, then the vocabulary).

    \b
    Example:
        tokreg import tekken tekken.json --name mistral-nemo
    """
    reg = open_registry(db)
    _done(reg, reg.import_tekken(name, file, message=message), file, as_json)


@import_.command(name="tokreg")
@click.argument("file", type=click.Path(dir_okay=False))
@_common
def import_tokreg(file: str, name: str, message: Optional[str], as_json: bool, db: Optional[str]) -> None:
    """Register a file written by `tokreg export --format tokreg` (its hash is checked, and the
    new version has the same hash).

    \b
    Example:
        tokreg import tokreg gpt-mini.tokreg.json --name gpt-mini
    """
    reg = open_registry(db)
    _done(reg, reg.import_tokreg(name, file, message=message), file, as_json)


@import_.command(name="wordpiece")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--lowercase", is_flag=True, help="The model is uncased: lowercase (and strip accents).")
@click.option("--strip-accents/--keep-accents", default=None, help="Override accent stripping.")
@click.option("--unk-token", default="[UNK]", show_default=True, help="The unknown token (must be in the file).")
@click.option("--prefix", default="##", show_default=True, help="The continuation prefix.")
@click.option(
    "--special",
    "special",
    multiple=True,
    metavar="TOKEN",
    help=f"Mark a token special (besides {' '.join(BERT_SPECIALS)}).",
)
@_common
def import_wordpiece(
    file: str,
    lowercase: bool,
    strip_accents: Optional[bool],
    unk_token: str,
    prefix: str,
    special: tuple[str, ...],
    name: str,
    message: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Register a bare WordPiece vocab.txt (one token per line) with BERT's text handling.

    \b
    Example:
        tokreg import wordpiece vocab.txt --name bert-uncased --lowercase
    """
    opts = WordPieceOptions(
        vocab_size=0,
        lowercase=lowercase,
        strip_accents=strip_accents,
        unk_token=unk_token,
        continuing_prefix=prefix,
    )
    reg = open_registry(db)
    _done(reg, reg.import_wordpiece(name, file, opts, specials=special, message=message), file, as_json)


@import_.command(name="sentencepiece")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--bos", is_flag=True, help="add_special_tokens=True adds the model's BOS piece (sentencepiece add_bos).")
@click.option("--eos", is_flag=True, help="add_special_tokens=True adds the model's EOS piece (sentencepiece add_eos).")
@_common
def import_sentencepiece(
    file: str, bos: bool, eos: bool, name: str, message: Optional[str], as_json: bool, db: Optional[str]
) -> None:
    """Register a SentencePiece .model file (Unigram or BPE); it encodes with the same ids as
    the sentencepiece library. Models with a normalization rule other than identity (nmt_nfkc,
    nfkc, ...) or with treat_whitespace_as_suffix are refused.

    \b
    Example:
        tokreg import sentencepiece tokenizer.model --name llama-sp
    """
    reg = open_registry(db)
    _done(reg, reg.import_sentencepiece(name, file, bos=bos, eos=eos, message=message), file, as_json)


@click.command()
@click.argument("ref")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(list(EXPORT_FORMATS)),
    default="tokreg",
    show_default=True,
    help="tokreg: one self-describing file for Tokenizer.from_file; hf: a Hugging Face tokenizer.json; "
    "tiktoken: a .tiktoken rank file (byte-level BPE); sentencepiece: a .model file (Unigram, SentencePiece BPE).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(),
    required=True,
    help="File to write; for hf, an existing directory gets tokenizer.json and tokenizer_config.json.",
)
@db_option
def export(ref: str, fmt: str, output: str, db: Optional[str]) -> None:
    """Write the version REF names to one file that needs no registry (for hf, to a directory
    that AutoTokenizer.from_pretrained loads).

    \b
    Example:
        tokreg export gpt-mini@prod --format hf -o tokenizer.json
    """
    reg = open_registry(db)
    # the check's library is not installed, or a file alone cannot hold a setting: one line each
    with _warned(ExportCheckSkipped, NotCarried):
        v = reg.export(ref, fmt, output)
    click.echo(f"wrote {v.ref} ({v.content_hash}) to {output} [{fmt}]")


@contextlib.contextmanager
def _warned(*kinds: type[Warning]) -> Iterator[None]:
    """Prints the warnings of these kinds raised inside as `tokreg: warning:` lines."""
    with warnings.catch_warnings(record=True) as said:
        for kind in kinds:
            warnings.simplefilter("always", kind)
        yield
    for w in said:
        if issubclass(w.category, kinds):
            click.echo(f"tokreg: warning: {w.message}", err=True)
