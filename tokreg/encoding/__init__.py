"""The encoding wing: a version's canonical content and hash in, a ready `Tokenizer` out.

tokenizer is the Tokenizer (encode, decode, batches, special tokens); stream_decoder gives text
from ids that arrive one at a time; flat_ids holds a batch's ids in two flat buffers;
content_cache keeps canonical content on disk by hash, so a load need not rebuild it;
hf_objects turns a Tokenizer into live `tokenizers` and `transformers` objects; stochastic checks
the options of a seeded stochastic encoding (BPE-dropout, StochasTok, Unigram sampling).

May import: algorithms/, formats/, the shared modules at the top (errors, data, content, files,
patterns) and the core. Never store/ (it is handed content and its hash), nor another wing.
"""
