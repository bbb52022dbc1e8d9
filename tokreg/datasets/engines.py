"""Where the encoding stage of `tokenize` runs (`--engine`): this process (`local`, the core's
batch encoder on `--threads` threads) or the CPUs of a Ray cluster (`ray`, `--address`).

An engine does one thing: it takes batches in order (`submit`: a `Frame` of whole lines, or a
`Batch` of texts; documents.py) and gives back each batch's `Encoded` ids (`result`, in the
order submitted), with at most `window` batches in flight. Reading the inputs and writing the
shards stay in this process (writer.py), so the shard boundaries, and every byte written, are
the same whatever the engine: the engine never sees more than one batch and decides nothing
that depends on where it runs (a frame's documents are cut by the same core function).

An engine connects when it is made (`engine_for`): a cluster that cannot be reached is refused
before the run writes anything in its folder.

Ray: every task encodes one batch on one CPU. The tokenizer travels once, as its hash-checked
content (`ray.put`); each worker process compiles it once and keeps it (`_on_worker`). The
window is two batches per CPU of the cluster, at most `RAY_WINDOW`: this process then holds
at most that many batches (their texts in Ray's object store, their ids coming back) beyond
the local pipeline's bound (writer.memory_bound). Workers must have tokreg installed (a
cluster's runtime environment), as for any Ray task.

Another engine (Dask's `Client.submit` / `Future.result`, as counting_dask.py uses) joins by
implementing the same three members and one line in `engine_for`.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any, Optional, Protocol, Union

from .._core import count_byte
from ..errors import InputError
from .documents import Batch, Frame, LineBook
from .encode import Encoded, Encoder

ENGINES = ("local", "ray")
#: At most this many batches in flight on a Ray cluster (each about documents.BATCH_BYTES of text).
RAY_WINDOW = 64


class Engine(Protocol):
    #: Batches that may be in flight at once (submitted, result not yet taken).
    window: int

    def submit(self, item: Union[Batch, Frame]) -> Any: ...

    def result(self, handle: Any) -> Encoded:
        """The ids of a submitted batch."""
        ...

    def close(self) -> None: ...


class LocalEngine:
    """This process: each batch encoded when submitted, on the encoder's threads."""

    window = 1

    def __init__(self, encoder: Encoder):
        self.encoder = encoder

    def submit(self, item: Union[Batch, Frame]) -> Any:
        return self.encoder.encode(item)

    def result(self, handle: Any) -> Encoded:
        return handle  # type: ignore[no-any-return]

    def close(self) -> None:
        pass


def _ray() -> Any:
    try:
        import ray  # here, not at the top: ray is the ray extra's, not tokreg's
    except ImportError:
        raise InputError("--engine ray needs Ray: pip install 'tokreg[ray]' (or pip install ray)") from None
    return ray


#: On a Ray worker: the encoders it has compiled, by the tokenizer's hash and the encoder's settings.
_COMPILED: dict[Any, Encoder] = {}


def _on_worker(spec: tuple[bytes, str, str, tuple[Any, ...]], item: Union[Batch, Frame]) -> Encoded:
    """A Ray task: one batch encoded on one CPU, with the encoder compiled once per process."""
    content, content_hash, ref, settings = spec
    enc = _COMPILED.get((content_hash, settings))
    if enc is None:
        from ..encoding.tokenizer import Tokenizer  # on a worker, on its first batch only

        tok = Tokenizer(content, ref=ref, expect_hash=content_hash)
        enc = _COMPILED[(content_hash, settings)] = Encoder(tok, 1, *settings)
    # the ids travel back alone (pickled from their view), not the buffer under them
    return replace(enc.encode(item), buffer=None)


class RayEngine:
    """A Ray cluster's CPUs: one task per batch (see the module docstring)."""

    def __init__(self, encoder: Encoder, address: Optional[str]):
        ray = self.ray = _ray()
        self.started = not ray.is_initialized()
        if self.started:
            try:
                ray.init(address=address, logging_level="ERROR", log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = address or "a new local Ray instance"
                raise InputError(f"cannot connect to Ray at {where}: {e}; check --address (or RAY_ADDRESS)") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.window = max(2, min(2 * cpus, RAY_WINDOW))
        tok = encoder.tok
        # every field of the encoder but its threads (a task has one CPU): a stochastic draw too
        settings = (encoder.allowed, encoder.disallowed, encoder.prefix, encoder.suffix, encoder.dtype, encoder.draw)
        self.spec = ray.put((tok.content, tok.hash, tok.ref, settings))
        self.lines = LineBook()
        self.task = ray.remote(num_cpus=1, max_retries=3)(_on_worker)

    def submit(self, item: Union[Batch, Frame]) -> Any:
        if isinstance(item, Frame):
            # A task sees one frame: its first line is numbered here, where frames come in order,
            # and its bytes travel (a view of this process's memory map cannot).
            first = self.lines.first(item)
            self.lines.done(item, first, count_byte(item.buf, 10))
            item = replace(item, buf=bytes(item.buf), line=first)
        return self.task.remote(self.spec, item)

    def result(self, handle: Any) -> Encoded:
        try:
            return self.ray.get(handle)  # type: ignore[no-any-return]
        except self.ray.exceptions.RayTaskError as e:
            if isinstance(e.cause, InputError):  # a bad record with --on-bad-record fail: its one line
                raise InputError(str(e.cause)) from None
            raise

    def close(self) -> None:
        if self.started:
            self.ray.shutdown()


def engine_for(name: str, encoder: Encoder, address: Optional[str] = None) -> Engine:
    """The engine `--engine NAME` names. `address`: Ray's (`auto`, `ray://host:10001`, or None:
    RAY_ADDRESS, else a Ray instance started for this run and stopped after it)."""
    if name == "local":
        if address is not None:
            raise InputError("--address is for --engine ray")
        return LocalEngine(encoder)
    if name == "ray":
        return RayEngine(encoder, address or os.environ.get("RAY_ADDRESS") or None)
    raise InputError(f"--engine must be one of {', '.join(ENGINES)}, not {name!r}")
