"""The official vocabularies, loaded three ways for the encode benchmarks: registered in a
tokreg registry (imported from the .tiktoken file), as a tiktoken `Encoding`, and as a Hugging
Face tokenizer exported by tokreg."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from functools import cache
from typing import Any, Optional

import tokreg
from benchmarks.common import CL100K_SPECIALS, DATA, O200K_SPECIALS
from tokreg.patterns import BUILTIN

VOCABS = {"cl100k_base": ("cl100k", CL100K_SPECIALS), "o200k_base": ("o200k", O200K_SPECIALS)}


@cache
def _folder() -> str:
    """This run's own temp folder (removed at exit), so benchmarks running at the same time never
    share, delete or half-read each other's registry or exported files."""
    folder = tempfile.mkdtemp(prefix="tokreg-bench-vocabs-")
    atexit.register(shutil.rmtree, folder, True)
    return folder


@cache
def registry() -> tokreg.Registry:
    reg = tokreg.Registry(db_path(create=False))
    for name, (pattern, specials) in VOCABS.items():
        reg.import_tiktoken(name, DATA / f"{name}.tiktoken", pattern=pattern, specials=specials)
    return reg


def db_path(*, create: bool = True) -> str:
    """The registry's file; with `create`, the registry is made first (the vocabularies imported)."""
    if create:
        registry()
    return os.path.join(_folder(), "registry.db")


@cache
def tokreg_tok(name: str) -> tokreg.Tokenizer:
    return registry().load(f"{name}@1")


@cache
def tokreg_content(name: str) -> bytes:
    """The canonical content of the imported version (what a load compiles)."""
    return registry().stored(f"{name}@1").content


@cache
def tiktoken_enc(name: str) -> Any:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    pattern, specials = VOCABS[name]
    ranks = load_tiktoken_bpe(str(DATA / f"{name}.tiktoken"))
    return tiktoken.Encoding(name, pat_str=BUILTIN[pattern], mergeable_ranks=ranks, special_tokens=specials)


@cache
def hf_tok(name: str) -> Optional[Any]:
    """A `tokenizers.Tokenizer` of the same vocabulary, through tokreg's HF export."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    path = os.path.join(_folder(), f"{name}.json")
    registry().export(f"{name}@1", "hf", path)
    return Tokenizer.from_file(path)
