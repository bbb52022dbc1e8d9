"""tokreg: train subword tokenizers, keep every version in a SQL registry, and load a pinned
version through a fast Rust encoder.

The public API is this list:

- `load(ref, db=None) -> Tokenizer` — a version by ref: `name` (the latest, or the version pinned in
  the nearest tokreg.lock), `name@N`, `name@ALIAS`, or a hash prefix
- `Tokenizer` — `encode`, `encode_ordinary`, `encode_batch`, `decode`, `decode_bytes`, `token_bytes`,
  `vocab_size`, `ref`, `hash`; `Tokenizer.from_file(path)` loads an exported file with no registry
- `Registry(db=None)` — `train`, `add`, `versions`, `resolve`, `load`, `show`, `sql`; `tag`, `untag`,
  `aliases`, `log`, `remove`, `diff`, `pin`, `verify`, `export`, `import_hf`, `reproduce`
- `BpeOptions` — the options of a BPE training run
- `TokregError` and its subclasses — every error tokreg raises on purpose
"""

from .errors import InputError, IntegrityError, Interrupted, NotFoundError, ReadOnlyError, TokregError
from .registry import Registry, load
from .tokenizer import Tokenizer
from .trainers.bpe import BpeOptions
from .version import __version__

__all__ = [
    "load",
    "Tokenizer",
    "Registry",
    "BpeOptions",
    "TokregError",
    "InputError",
    "NotFoundError",
    "ReadOnlyError",
    "IntegrityError",
    "Interrupted",
    "__version__",
]
