"""Hand-made vocabularies for tests: a `.tiktoken` rank file of the 256 bytes plus chosen
tokens, so every id and every encoding can be worked out on paper."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path


def tiktoken_file(path: Path, extra: Sequence[bytes]) -> Path:
    """Writes ranks 0-255 for the bytes, then `extra` from 256 on, as a `.tiktoken` file."""
    tokens = [bytes([b]) for b in range(256)] + list(extra)
    path.write_text("".join(f"{base64.b64encode(t).decode()} {rank}\n" for rank, t in enumerate(tokens)))
    return path
