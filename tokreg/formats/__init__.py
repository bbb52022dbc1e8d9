"""Other tools' files, as files: the tiktoken rank format, Hugging Face `tokenizer.json`, the
SentencePiece `.model` protobuf, BERT's `vocab.txt`, and tokreg's own single-file format. Each
module reads and writes syntax only; what a file means for an algorithm is that algorithm's
codec (algorithms/<family>/), and versions/import_export.py connects the two."""
