"""Token datasets: a corpus and a pinned tokenizer version into training shards with a manifest
naming the tokenizer's hash (`tokreg tokenize`), read back as memory-mapped numpy arrays that
refuse another tokenizer (`open_dataset`), verified, merged, and recorded in the registry.

- options.py: every choice of a run (`TokenizeOptions`), the dtype rule
- documents.py: the corpus reader's inputs cut into documents, the bad-record policy
- encode.py: documents to ids in the dataset's dtype, with --bos/--eos/template
- formats/: the shard layouts (Megatron .bin/.idx, flat .bin + .docs, .npy)
- writer.py: the overlapped pipeline and the shards; resume.py: starting or resuming in a folder
- manifest.py: manifest.json, written atomically; the dataset hash
- reader.py: `open_dataset`; verify.py: `verify`; merge.py: joining the parts of `--shard-of`
- records.py: the registry's rows of datasets and shards
"""

from __future__ import annotations

from .options import TokenizeOptions
from .reader import Dataset, open_dataset
from .writer import Summary, tokenize

__all__ = ["Dataset", "Summary", "TokenizeOptions", "open_dataset", "tokenize"]
