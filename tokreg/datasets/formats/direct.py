"""A shard's ids file written past the page cache (`O_DIRECT`) where the system allows it.

Why: copying the ids into the kernel's page cache was the largest cost of `tokreg tokenize`
beside the encoder. On the 2-core VM measured, `write()` of 128 MB of ids took 0.03 s of CPU
when the kernel had recently freed pages to hand out, and 0.25-0.5 s when it had to take fresh
ones (each page's first touch costs the host a fault), which was the usual case in a run that
also reads 100 MB. With `O_DIRECT` the disk reads the ids from this process's own staging
buffer (mapped once and reused, so touched once): the only copy is into that buffer. A dataset
is written once and read later by a training job, so keeping it in the page cache buys
nothing; on a corpus larger than memory it would also push out what is worth keeping.

How: `write` copies the bytes into an aligned staging buffer (`STAGE` bytes, from `mmap`, so
page-aligned) and writes every whole `ALIGN`-byte block of it when it is full; `flush` drops
`O_DIRECT` from the descriptor and writes the remainder (under one block) the ordinary way.
Where `O_DIRECT` does not exist (macOS, Windows) or the file system refuses it (some refuse
the open, as tmpfs did before Linux 6.6; some the first write), the file is written the ordinary
way from the start or from that point on, with the same bytes. The caller fsyncs as before: the direct writes are on
the device already, the fsync flushes its cache and the tail.

Example: 10,000 bytes in two writes of 5,000 with `ALIGN` 4096: both are staged; at `flush`,
8,192 bytes go out directly and the last 1,808 through the page cache.
"""

from __future__ import annotations

import errno
import mmap
import os
from typing import Any

#: Direct writes start, and are a multiple of, this many bytes (a page: at least the logical
#: block size of the disks in use, which O_DIRECT requires).
ALIGN = 4096
#: Bytes staged before a direct write (one such buffer per open shard: see writer.memory_bound).
STAGE = 8 << 20


class IdsFile:
    """A new file at `path`, written in order (`write`), then `flush`, `fileno` (for fsync), `close`."""

    def __init__(self, path: str):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
        direct = getattr(os, "O_DIRECT", 0)
        self.fd = -1
        if direct:
            try:
                self.fd = os.open(path, flags | direct, 0o666)
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise
        self.direct = self.fd >= 0
        if not self.direct:
            self.fd = os.open(path, flags, 0o666)
        self.stage = mmap.mmap(-1, STAGE) if self.direct else None
        self.staged = 0

    def write(self, data: Any) -> None:
        """Appends `data` (bytes-like, one byte per item)."""
        view = memoryview(data)
        while len(view) and self.stage is not None:
            n = min(len(view), STAGE - self.staged)
            self.stage[self.staged : self.staged + n] = view[:n]
            self.staged += n
            view = view[n:]
            if self.staged == STAGE:
                self._spill()  # may end direct writes: the rest of `view` then goes below
        self._out(view)

    def _spill(self) -> None:
        """Writes the staged whole blocks directly; the rest moves to the buffer's start."""
        assert self.stage is not None
        whole = self.staged - self.staged % ALIGN
        done = 0
        while done < whole:
            try:
                done += os.write(self.fd, memoryview(self.stage)[done:whole])
            except OSError as e:
                if e.errno != errno.EINVAL:
                    raise
                break  # the file system takes no (more) direct writes: the rest goes as usual
        self.stage.move(0, done, self.staged - done)
        self.staged -= done
        if done < whole:
            self._ordinary()

    def _ordinary(self) -> None:
        """From here on, through the page cache, the staged bytes (none written yet) first."""
        import fcntl  # here: only systems with O_DIRECT get here, and they have fcntl

        if self.stage is None:
            return
        self.direct = False
        fcntl.fcntl(self.fd, fcntl.F_SETFL, fcntl.fcntl(self.fd, fcntl.F_GETFL) & ~os.O_DIRECT)
        stage, self.stage = self.stage, None
        self._out(memoryview(stage)[: self.staged])
        self.staged = 0
        stage.close()  # the views above are gone: _out's frame has returned

    def _out(self, view: memoryview) -> None:
        while len(view):
            n = os.write(self.fd, view)
            view = view[n:]

    def flush(self) -> None:
        """Everything written so far handed to the kernel (then no more direct writes)."""
        self._ordinary()

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        if self.stage is not None:
            self.stage.close()
            self.stage = None
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
