"""tokreg's exceptions: one hierarchy, each with the exit code the CLI uses for it.

Every message names the input, what was found, and what to do next, because the CLI prints
it as the one line a user sees. The Rust core raises these same classes (src/py.rs maps its
error enum onto them in one place), so no caller ever has to read a message to know what
went wrong.
"""

from __future__ import annotations

from typing import Optional


class TokregError(Exception):
    """Base class of every error tokreg raises on purpose."""

    exit_code = 1


class InputError(TokregError):
    """A corpus, file, option, text or import that tokreg cannot use as given."""


class VocabularySizeError(InputError):
    """A training vocabulary size out of reach: below the base alphabet (`needed` is the least
    that works) or above what the corpus yields (`reachable` is the most it gives). Raised by the
    core, which sets `requested` and one of the other two."""

    requested: int
    needed: Optional[int] = None
    reachable: Optional[int] = None


class SpecialTokenError(InputError):
    """A text holding a string that `encode`'s special-token rule refuses (by default, the text
    of any special token): `token` is the first found, `index` the text's place in a batch (None
    for one text). Raised by the core, which applies the rule."""

    def __init__(self, token: str, index: Optional[int] = None):
        where = "text" if index is None else f"text {index} of the batch"
        super().__init__(
            f"{where} contains the special token {token!r}; pass allowed_special={{{token!r}}} to encode it as a "
            "special token, or disallowed_special=() to encode it as text"
        )
        self.token = token
        self.index = index


class NotFoundError(TokregError):
    """A name, version, alias or hash prefix that the registry does not hold."""

    exit_code = 4


class ReadOnlyError(TokregError):
    """A statement given to `tokreg sql` that would change the registry."""


class IntegrityError(TokregError):
    """Content whose hash is not the one recorded or pinned. `expected` and `actual` are the two
    hash labels when the error is a hash mismatch."""

    exit_code = 3

    def __init__(self, message: str, *, expected: Optional[str] = None, actual: Optional[str] = None):
        super().__init__(message)
        self.expected = expected
        self.actual = actual


class Interrupted(TokregError):
    """Ctrl-C during a long operation."""

    exit_code = 130


class PinLabelWarning(UserWarning):
    """A registry holds the pinned content under another `name@N` than the lockfile records.
    (Defined here, not in versions/lockfile.py, which re-exports it: the CLI's group shows these
    warnings as lines and so names the class in every command, `tokreg train` included, which
    needs nothing else of the lockfile module.)"""
