"""What every trainer shares: the options base class (its JSON form, as stored with the run,
and the metadata the CLI builds its per-algorithm flags from) and the progress callback type.
The run around a trainer (reading, counting, the run record) is tokreg/training/train_run.py."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, ClassVar, Optional, TypeVar

from ..errors import InputError
from . import template

# phase ("read", "finish", "merge", "em", "prune", ...), done, total -> None
Progress = Callable[[str, int, int], None]
OptionsT = TypeVar("OptionsT", bound="TrainOptions")

#: More threads than this is a mistake, not a machine (each is a real OS thread).
MAX_THREADS = 256


def flag(
    default: Any,
    *,
    help: str,
    name: Optional[str] = None,
    choices: Optional[tuple[str, ...]] = None,
    metavar: Optional[str] = None,
) -> Any:
    """A dataclass field that `tokreg train` offers as a command-line option of its algorithm:
    `--field-name` unless `name` says otherwise (`"--strip-accents/--keep-accents"` for an
    on/off pair), with `help` (the CLI adds the default)."""
    return dataclasses.field(
        default=default, metadata={"flag": name, "help": help, "choices": choices, "metavar": metavar}
    )


def check_vocab_size(size: int) -> None:
    """The one check (and message) that a vocabulary size asked for training is positive."""
    if size < 1:
        raise InputError(f"the vocabulary size must be at least 1, not {size}")


def below_alphabet(size: int, alphabet: str, fix: Optional[str] = None) -> InputError:
    """The one message for a `--vocab-size` below an algorithm's base alphabet, which each
    trainer describes (`alphabet`), with what to do (`fix`), e.g. "--vocab-size 100 is smaller
    than the base alphabet: the corpus has 256 bytes (+ 0 special tokens); raise --vocab-size to
    at least 256". (The core words its own, `CoreError::VocabTooSmall`, for its callers.)"""
    return InputError(
        f"--vocab-size {size} is smaller than the base alphabet: {alphabet}" + (f"; {fix}" if fix else "")
    )


class TrainOptions:
    """Base of each trainable algorithm's options dataclass. Fields made with `flag()` are that
    algorithm's own command-line options; the others (vocab_size, min_frequency, special,
    threads) are common to `tokreg train`. `run_name` is the algorithm as recorded in the
    training run's config, which `tokreg reproduce` reads back."""

    run_name: ClassVar[str]
    # Fields every subclass has (declared here for the type checker; the subclass defines them).
    vocab_size: int
    special: tuple[str, ...]
    template: Optional[str]
    threads: int
    memory_limit: Optional[int]
    max_piece_bytes: int
    sample_bytes: int

    def to_json(self) -> dict[str, Any]:
        """The options as stored with the training run (`special`, a tuple, as a list)."""
        d: dict[str, Any] = dataclasses.asdict(self)  # type: ignore[call-overload]
        d["special"] = list(d.get("special", ()))
        if d.get("template") is None:
            d.pop("template", None)  # runs without a template record what they always did
        return d

    @classmethod
    def fields(cls) -> tuple[dataclasses.Field[Any], ...]:
        return dataclasses.fields(cls)  # type: ignore[arg-type]  # every subclass is a dataclass

    @classmethod
    def field_names(cls) -> set[str]:
        return {f.name for f in cls.fields()}

    @classmethod
    def from_json(cls: type[OptionsT], d: dict[str, Any]) -> OptionsT:
        d = {k: v for k, v in d.items() if k != "run_sizes"}  # the sizes of the run, recorded beside them
        d["special"] = tuple(d.get("special", ()))
        unknown = sorted(set(d) - cls.field_names())
        if unknown:
            raise InputError(
                f"the recorded {cls.run_name} options have fields this tokreg does not know ({', '.join(unknown)}); "
                "upgrade tokreg"
            )
        return cls(**d)

    def check_common(self) -> None:
        """The checks every trainer makes before reading the corpus."""
        check_vocab_size(self.vocab_size)
        if not 0 <= self.threads <= MAX_THREADS:
            raise InputError(f"threads must be 0 (one per core) to {MAX_THREADS}, not {self.threads}")
        for s in self.special:
            if not s:
                raise InputError("a special token must not be empty")
        if self.template is not None:
            t = template.parse(self.template)
            missing = sorted(t.tokens - set(self.special)) if t else []
            if missing:
                raise InputError(
                    f"the template names {', '.join(missing)}, which must also be special tokens: add --special for it"
                )
        for name in ("max_piece_bytes", "sample_bytes"):
            if getattr(self, name) < 0:
                raise InputError(f"--{name.replace('_', '-')} must be 0 (no limit) or more")
