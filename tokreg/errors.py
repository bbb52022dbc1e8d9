"""tokreg's exceptions: one hierarchy, each with the exit code the CLI uses for it.

Every message names the input, what was found, and what to do next, because the CLI prints
it as the one line a user sees.
"""

from __future__ import annotations


class TokregError(Exception):
    """Base class of every error tokreg raises on purpose."""

    exit_code = 1


class InputError(TokregError):
    """A corpus, file, option or import that tokreg cannot use as given."""


class NotFoundError(TokregError):
    """A name, version, alias or hash prefix that the registry does not hold."""

    exit_code = 4


class ReadOnlyError(TokregError):
    """A statement given to `tokreg sql` that would change the registry."""


class IntegrityError(TokregError):
    """Stored content whose hash is not the one recorded or pinned."""

    exit_code = 3


class Interrupted(TokregError):
    """Ctrl-C during a long operation; nothing was written."""

    exit_code = 130
