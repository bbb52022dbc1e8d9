"""tokreg's benchmarks (`just bench`): tokreg beside tiktoken, Hugging Face tokenizers and
SentencePiece on the same input in the same run, printing MB/s and ratios. Kept out of the
test suite: speed is measured here, correctness is asserted there."""
