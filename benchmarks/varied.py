"""`python -m benchmarks.varied SOURCE OUT [MB]`: writes MB megabytes (default 1000) of text
with randomly varied words, derived from SOURCE (the kernel corpus), deterministically.

Why: real corpora at web scale (and code) have far more distinct pieces than one book; this
text keeps the kernel's lines, spacing and punctuation but makes a third of its words into
new words, the way misspellings, identifiers, numbers and names do. Rule, per line `i` and
word `j` (words are runs between single spaces): a word of 3 or more bytes whose
`(31 * i + j) % 3 == 0` gets a suffix, one of 65,536 random strings of 2-5 lowercase letters
(`random.Random(0)`), chosen by `(i * 2654435761 + j * 40503) % 65536`. SOURCE is read
again from the start until MB megabytes are written (each pass shifts `i`, so no line
repeats its variation). The same SOURCE and MB give the same bytes.
"""

from __future__ import annotations

import random
import sys

ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def suffixes() -> list[bytes]:
    r = random.Random(0)
    return ["".join(r.choice(ALPHABET) for _ in range(r.randint(2, 5))).encode() for _ in range(65536)]


def main() -> None:
    source, out = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3] if len(sys.argv) > 3 else 1000) * 1_000_000
    sfx = suffixes()
    written = 0
    i = 0
    with open(out, "wb") as dst:
        while written < limit:
            with open(source, "rb") as src:
                for line in src:
                    words = line.split(b" ")
                    for j in range((-31 * i) % 3, len(words), 3):
                        w = words[j]
                        if len(w) >= 3:
                            words[j] = w + sfx[(i * 2654435761 + j * 40503) % 65536]
                    text = b" ".join(words)
                    if written + len(text) > limit:
                        text = text[: limit - written]
                    dst.write(text)
                    written += len(text)
                    i += 1
                    if written >= limit:
                        break


if __name__ == "__main__":
    main()
