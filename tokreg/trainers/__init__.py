"""Trainers: corpus + options -> `TokenizerData`. One module per algorithm."""

from .bpe import BpeOptions, train_bpe

__all__ = ["BpeOptions", "train_bpe"]
