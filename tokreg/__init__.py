"""tokreg: train subword tokenizers, keep every version in a SQL registry, and load a pinned
version through a fast Rust encoder.

The public API is this list:

- `load(ref, db=None) -> Tokenizer` — a version by ref: `name` (the latest, or the version pinned in
  the nearest tokreg.lock), `name@N`, `name@ALIAS`, or a hash prefix
- `Tokenizer` — `encode`, `encode_ordinary`, `encode_batch`, `encode_ordinary_batch`, `decode`,
  `decode_bytes`, `token_bytes`, `nbest`, `sample`, `vocab_size`, `special_tokens`, `ref`, `hash`;
  `Tokenizer.from_file(path)` loads an exported file with no registry
- `Registry(db=None)` — `train`, `add`, `import_*`, `versions`, `resolve`, `load`, `show`, `history`,
  `samples`, `tokens`, `token`, `aliases_by_ref`, `sql`; `tag`, `untag`, `aliases`, `log`, `remove`, `diff`,
  `pin`, `verify`, `export`, `reproduce`; `evaluate` (an `evaluate.Evaluation`) and `audit` (an
  `audit.AuditReport`), stored beside the versions; `Registry.read_only(db)` opens one that cannot write
- `BpeOptions`, `WordPieceOptions`, `UnigramOptions` — the options of a training run, per algorithm
- `TokregError` and its subclasses — every error tokreg raises on purpose
"""

from .algorithms import BpeOptions, UnigramOptions, WordPieceOptions
from .errors import InputError, IntegrityError, Interrupted, NotFoundError, ReadOnlyError, TokregError
from .package_version import __version__
from .registry import Registry, load
from .tokenizer import Tokenizer

__all__ = [
    "load",
    "Tokenizer",
    "Registry",
    "BpeOptions",
    "WordPieceOptions",
    "UnigramOptions",
    "TokregError",
    "InputError",
    "NotFoundError",
    "ReadOnlyError",
    "IntegrityError",
    "Interrupted",
    "__version__",
]
