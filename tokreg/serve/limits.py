"""What one request to `tokreg serve` may ask for. Past these a request gets a 4xx naming the
limit (a heavy one that finds no turn or runs past its budget, a 503 with Retry-After), so one
browser tab (or script) cannot make the server hold or compute without bound."""

import os

#: Request bodies (the playground's JSON, the diff and SQL forms).
MAX_BODY_BYTES = 1 << 20
#: Text given to the playground or the diff page, in UTF-8 bytes.
MAX_TEXT_BYTES = 200_000
#: Versions side by side in the playground.
MAX_VERSIONS = 4
#: A SQL statement, in characters.
MAX_SQL_CHARS = 20_000
#: Rows a SQL result keeps (the page shows the first SQL_ROWS_SHOWN; JSON and CSV have them all).
MAX_SQL_ROWS = 10_000
SQL_ROWS_SHOWN = 1_000
#: Wall-clock time one SQL statement may run.
SQL_SECONDS = 5.0
#: Tokens on one page of the token table.
MAX_PAGE_SIZE = 500
#: Examples per list on the diff page.
MAX_TOP = 200
#: Heavy requests (encoding, a diff on text, SQL) running at once; more wait their turn (work.py).
#: Half the cores: the other half keeps serving pages (on 2 cores, one heavy request at a time
#: kept the slowest page at 0.4 s under 16 maximal requests, two at 0.7-0.9 s).
HEAVY_WORKERS = max(1, (os.cpu_count() or 2) // 2)
#: Heavy requests waiting for a turn; one more is refused at once (503, Retry-After).
HEAVY_QUEUE = 8
#: How long a heavy request waits for its turn before it is refused (503, Retry-After).
HEAVY_WAIT_SECONDS = 10.0
#: The work one heavy request may do, checked between its steps (503 past it).
HEAVY_SECONDS = 10.0
