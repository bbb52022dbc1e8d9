"""Token datasets: a corpus and a pinned tokenizer version into training shards with a manifest
naming the tokenizer's hash (`tokreg tokenize`), read back as memory-mapped numpy arrays that
refuse another tokenizer (`tokreg.open_dataset`), verified, and merged. May import encoding/
(the tokenizer) and training/ (the corpus reader); the registry's rows of datasets are the
store's (store/datasets.py), written through `Registry`.

- options.py: every choice of a run (`TokenizeOptions`), the dtype rule
- documents.py: the corpus reader's inputs cut into documents, the bad-record policy
- encode.py: documents to ids in the dataset's dtype, with --bos/--eos/template
- formats/: the shard layouts (Megatron .bin/.idx, flat .bin + .docs, .npy)
- writer.py: `tokenize`, the overlapped pipeline and the shards; resume.py: starting or resuming
- manifest.py: manifest.json, written atomically; the dataset hash
- reader.py: `open_dataset`; verify.py: `verify`; merge.py: joining the parts of `--shard-of`
"""
