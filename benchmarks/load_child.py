"""One load in a fresh process: `python -m benchmarks.load_child tokreg|tokreg-file|tiktoken NAME
DB` (for tokreg-file, DB is the file `tokreg export --format tokreg` wrote)."""

from __future__ import annotations

import sys
import time

from benchmarks.common import report


def main() -> None:
    lib, name, db = sys.argv[1:4]
    if lib == "tokreg":
        import tokreg
        from tokreg import registry  # noqa: F401  (import cost is not load cost: tokreg imports lazily)

        if "://" in db:
            import sqlalchemy.dialects.postgresql.psycopg  # noqa: F401  (nor is the driver's)

        t = time.perf_counter()
        tok = tokreg.load(f"{name}@1", db=db)
        tok.encode_ordinary("warm")
    elif lib == "tokreg-file":
        import tokreg
        from tokreg.encoding import tokenizer  # noqa: F401  (import cost is not load cost)

        t = time.perf_counter()
        tokreg.Tokenizer.from_file(db).encode_ordinary("warm")
    else:
        import tiktoken  # noqa: F401  (import cost is not load cost)

        from benchmarks.vocabs import tiktoken_enc

        t = time.perf_counter()
        tiktoken_enc(name).encode_ordinary("warm")
    report(seconds=time.perf_counter() - t)


if __name__ == "__main__":
    main()
