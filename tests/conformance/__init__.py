"""The conformance suite of issue 23 ("How we will check"): each layout (layouts.py) built as real
files are, taken into tokreg, and compared with the reference library -- ids, decode, offsets,
every export in its target library, and `to_transformers()` against `AutoTokenizer` -- on the
shared corpora and on generated text (strategies.py). test_conformance.py asserts it;
tools/conformance_table.py prints it as issue 23's table."""
