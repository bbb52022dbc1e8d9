"""`Corpus`: what a run reads, as the user gave it, made once at the front door (`Registry`,
the CLI) and handed down unchanged to counting.

    Corpus(inputs=("corpus/",), glob="*.txt")            # files under a folder, counted here
    Corpus(inputs=("web.jsonl.zst",), field="text")       # one field of each JSON record
    Corpus(counts="all.counts")                           # counted already (`tokreg count`)
    Corpus(inputs=("corpus/",), engine="tcp://host:8786")  # counted on a Dask cluster
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional, Union

from .sources import Input, Source, expand

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


@dataclass(frozen=True)
class Corpus:
    """The inputs of a run and how to read them. `inputs`: files, folders, `-`, iterables of
    str; `glob`: in folders, the file names to read; `field`: the text field of JSON Lines and
    Parquet records; `counts`: a counts file to train from instead of inputs; `engine`: None to
    count on this machine, or a Dask scheduler's address to count there."""

    inputs: tuple[Input, ...] = ()
    glob: Optional[str] = None
    field: Optional[str] = None
    counts: Optional[PathLike] = None
    engine: Optional[str] = None

    @classmethod
    def of(
        cls,
        inputs: Sequence[Input] = (),
        *,
        glob: Optional[str] = None,
        field: Optional[str] = None,
        counts: Optional[PathLike] = None,
        engine: Optional[str] = None,
    ) -> Corpus:
        """From the inputs as `Registry` takes them: a sequence, or one path on its own."""
        given: tuple[Input, ...] = (inputs,) if isinstance(inputs, (str, os.PathLike)) else tuple(inputs)
        return cls(given, glob, field, counts, engine)

    def sources(self) -> list[Source]:
        """The inputs as sources to read, in order (folders expanded, `glob` applied)."""
        return expand(self.inputs, glob=self.glob, field=self.field)
