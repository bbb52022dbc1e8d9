"""The counting phase per language, for a trainer that asks for it (`Trainer.languages`;
parity-aware BPE): each source of the corpus labelled with its language by the plan (a `--lang`
path equal to the source's, or the nearest folder above it), or each JSON Lines record by a
field of its own (`--lang-field`), each language's text counted apart, and each language's
development text (`--parallel`) counted the same way.

Every source must get a language and every `--lang` path must hold a source: anything else is
refused in one line, naming the file. The corpus is counted once more as a whole by the run
(its fingerprint and round trip); the per-language counts are this module's.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from .. import _core, algorithms
from ..algorithms.interfaces import check_languages
from ..errors import InputError
from . import counting_local
from .corpus import Corpus, Source, expand
from .corpus.decompress import open_decompressed
from .corpus.records import record_text


def label(sources: list[Source], plan: algorithms.LanguagePlan) -> dict[str, list[Source]]:
    """code -> its sources, in corpus order; the longest `--lang` path that is the source's
    own or a folder above it wins (so `--lang en=docs --lang ja=docs/ja` works)."""
    owners = sorted(((p, code) for code, paths in plan.train.items() for p in paths), key=lambda x: -len(x[0]))
    out: dict[str, list[Source]] = {code: [] for code in plan.train}
    for src in sources:
        if src.path is None:
            raise InputError(f"{src.name} has no language: parity-aware BPE reads files, each under a --lang CODE=PATH")
        path = os.path.abspath(src.path)
        code = next((c for p, c in owners if path == p or path.startswith(p.rstrip(os.sep) + os.sep)), None)
        if code is None:
            raise InputError(f"{src.name} has no language: give --lang CODE={src.name} (or --lang CODE=its folder)")
        out[code].append(src)
    empty = sorted(c for c, srcs in out.items() if not srcs)
    if empty:
        raise InputError(f"--lang {empty[0]} names no input of the corpus; give its files as INPUTS or drop it")
    return out


def count(
    corpus: Corpus,
    plan: algorithms.LanguagePlan,
    options: algorithms.TrainOptions,
    progress: Optional[counting_local.Progress] = None,
) -> tuple[dict[str, _core.Counts], dict[str, _core.Counts]]:
    """(code -> counts of its training text, code -> counts of its development text)."""
    spec = algorithms.trainer_for(options).counting(options)

    def counted(sources: list[Source]) -> _core.Counts:
        return counting_local.count_sources(
            sources, spec, threads=options.threads, memory_limit=options.memory_limit, progress=progress
        ).counts

    if plan.field is not None:
        records = by_field(corpus.sources(), plan.field)
        check_languages(records, plan.dev)
        by_language = {code: counted([Source(name=f"{code} records", texts=texts)]) for code, texts in records.items()}
    else:
        by_language = {code: counted(srcs) for code, srcs in label(corpus.sources(), plan).items()}
    dev = {code: counted(expand([path], glob=corpus.glob)) for code, path in plan.dev.items()}
    return by_language, dev


def by_field(sources: list[Source], field: str) -> dict[str, list[str]]:
    """code -> the texts of the JSON Lines records whose `field` holds that code (each a line of
    its language's corpus), codes sorted. The texts are held in memory until counted."""
    out: dict[str, list[str]] = {}
    for src in sources:
        if src.path is None or src.format != "jsonl":
            raise InputError(f"{src.name} is not a JSON Lines file: --lang-field reads each record's language")
        where = f"corpus file {src.path!r}"
        stream, _, _ = open_decompressed(src.path)
        with stream:
            for n, line in enumerate(stream, 1):
                if not line.strip():
                    continue
                text = record_text(line, n, where, src.field or "text")
                code = json.loads(line).get(field)
                if not isinstance(code, str) or not code:
                    raise InputError(f"{where} line {n} has no language in field {field!r} (a non-empty string)")
                out.setdefault(code, []).append(text if text.endswith("\n") else text + "\n")
    return {code: out[code] for code in sorted(out)}
