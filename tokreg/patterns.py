"""Pre-tokenizer patterns by name. The official regexes are defined once, in the Rust core."""

from __future__ import annotations

from . import _core
from .errors import InputError

BUILTIN: dict[str, str] = dict(_core.PATTERNS)


def resolve(pattern: str) -> tuple[str, str]:
    """(name, regex) for a built-in name or a custom regex. A regex that spells a built-in
    differently but splits identically (tiktoken's current spellings) becomes the built-in, so it
    takes the fast path and hashes the same; any other regex is named "custom"."""
    if pattern in BUILTIN:
        return pattern, BUILTIN[pattern]
    try:
        canonical = _core.check_pattern(pattern)
    except InputError as e:
        names = ", ".join(sorted(BUILTIN))
        raise InputError(f"--pattern {pattern!r} is neither a built-in name ({names}) nor a valid regex: {e}") from None
    return name_of(canonical), canonical


def canonical_regex(regex: str, what: str) -> str:
    """The canonical spelling of a regex read from a file (never a name: a file's regex `gpt2`
    matches the text "gpt2"); InputError "{what} ... is not a valid regex" when it does not compile."""
    try:
        return _core.check_pattern(regex)
    except InputError as e:
        raise InputError(f"{what} {regex[:80]!r} is not a valid regex for tokreg: {e}") from None


def name_of(regex: str) -> str:
    for name, r in BUILTIN.items():
        if r == regex:
            return name
    return "custom"
