"""tokreg: train subword tokenizers, keep every version in a SQL registry, and load a pinned
version through a fast Rust encoder.

The public API is this list:

- `load(ref, db=None) -> Tokenizer` — a version by ref: `name` (the latest, or the version pinned in
  the nearest tokreg.lock), `name@N`, `name@ALIAS`, or a hash prefix
- `Tokenizer` — `encode` (`add_special_tokens=True`: the version's template), `encode_ordinary`,
  `encode_batch` (`as_numpy=True`), `encode_ordinary_batch`, `encode_batch_flat`, `count`,
  `count_batch`, `encode_with_offsets`, `decoder()` (streaming), `decode`, `decode_bytes`,
  `token_bytes`, `nbest`, `sample`, `to_hf`, `to_transformers`, `vocab_size`, `special_tokens`,
  `template`, `ref`, `hash`; `Tokenizer.from_file(path)` loads an exported file with no registry
- `Registry(db=None)` — `train`, `add`, `import_*` (tiktoken, hf, tekken, tokreg, wordpiece,
  sentencepiece), `versions`, `resolve`, `load`, `show`, `history`,
  `samples`, `tokens`, `token`, `aliases_by_ref`, `sql`, `sql_rows`; `tag`, `untag`, `aliases`, `log`, `remove`,
  `diff`, `pin`, `verify`, `export`, `reproduce`, `check_writable`, `grant_read`; `evaluate` (an
  `evaluate.Evaluation`) and `audit` (an `audit.AuditReport`), stored beside the versions;
  `Registry.read_only(db)` opens one that cannot write
- `BpeOptions`, `WordPieceOptions`, `UnigramOptions`, `SuperwordOptions` (SuperBPE), `ParityOptions`
  (parity-aware BPE), `PickyOptions` (PickyBPE) — the options of a training run, per algorithm
- `open_dataset(folder, tokenizer=REF_OR_HASH)` — a dataset `tokreg tokenize` wrote, as memory-mapped
  numpy arrays, refused when another tokenizer made it (tokreg/datasets/)
- `TokregError` and its subclasses — every error tokreg raises on purpose

The names are imported on first use (PEP 562), so `import tokreg` is instant and the `tokreg`
command can install its Ctrl-C handling before SQLAlchemy and the core are loaded; `load` and
`Tokenizer` never import SQLAlchemy or Alembic until a registry is opened (loading.py).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import lazy
from .errors import InputError, IntegrityError, Interrupted, NotFoundError, ReadOnlyError, TokregError

if TYPE_CHECKING:
    from .algorithms import (
        BpeOptions,
        ParityOptions,
        PickyOptions,
        SuperwordOptions,
        UnigramOptions,
        WordPieceOptions,
    )
    from .encoding.tokenizer import Tokenizer
    from .loading import load
    from .package_version import __version__
    from .registry import Registry

#: public name -> the module that defines it
_LAZY = {
    "load": "loading",
    "Registry": "registry",
    "Tokenizer": "encoding.tokenizer",
    "BpeOptions": "algorithms",
    "WordPieceOptions": "algorithms",
    "UnigramOptions": "algorithms",
    "SuperwordOptions": "algorithms",
    "ParityOptions": "algorithms",
    "PickyOptions": "algorithms",
    "__version__": "package_version",
}

__all__ = [
    "load",
    "Tokenizer",
    "Registry",
    "BpeOptions",
    "WordPieceOptions",
    "UnigramOptions",
    "SuperwordOptions",
    "ParityOptions",
    "PickyOptions",
    "TokregError",
    "InputError",
    "NotFoundError",
    "ReadOnlyError",
    "IntegrityError",
    "Interrupted",
    "open_dataset",
    "__version__",
]


def open_dataset(folder: Any, *, tokenizer: Any, db: Any = None) -> Any:
    """A dataset folder `tokreg tokenize` wrote, as memory-mapped numpy arrays (tokreg/datasets/
    reader.py), refused in one line naming both hashes unless `tokenizer` made it: a ref (loaded
    by `load`, so a pin in tokreg.lock counts), a content hash, a `Tokenizer`, or None (no check)."""
    # Imported on first use, like every public name here (see the module docstring).
    pinned = importlib.import_module(".versions.dataset_pins", __name__)  # dataset pins of tokreg.lock applied
    load_ref = importlib.import_module(".loading", __name__).load
    return pinned.open_dataset(folder, tokenizer=tokenizer, resolve=lambda ref: load_ref(ref, db=db).hash)


__getattr__ = lazy.attributes(__name__, _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
