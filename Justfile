# tokreg's everyday commands. `just` itself comes from PyPI (rust-just, in the test extra).

python := env_var_or_default("PYTHON", "python3")

# Run the test suites: the Rust core alone, then everything through Python.
test:
    cargo test --quiet
    {{python}} -m pytest -q

# Lint: formatting (ruff, cargo fmt), ruff, mypy (with the stub checked against the extension), cargo clippy.
lint:
    {{python}} -m ruff format --check tokreg tests benchmarks migrations
    cargo fmt --check
    {{python}} -m ruff check tokreg tests benchmarks migrations
    {{python}} -m mypy
    {{python}} -m mypy.stubtest tokreg._core
    cargo clippy --all-targets --quiet -- -D warnings
    cargo clippy --all-targets --features python --quiet -- -D warnings

# Benchmarks beside tiktoken, HF tokenizers and SentencePiece, on ../shared/data (or TOKREG_TEST_DATA).
bench *ARGS:
    {{python}} -m benchmarks {{ARGS}}

# The Rust core's own benchmarks: the hand-written pre-tokenizers against fancy-regex, WordPiece, the byte-level encoder.
bench-core:
    cargo bench --bench pretok
    cargo bench --bench wordpiece
    cargo bench --bench encode

# Train two versions on Python's own standard library, then list, show and query them.
demo db="/tmp/tokreg-demo.db":
    rm -f {{db}} {{db}}-wal {{db}}-shm
    tokreg train stdlib $({{python}} -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/[a-m]*.py --vocab-size 2000 --db {{db}}
    tokreg train stdlib $({{python}} -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/*.py --vocab-size 4000 --db {{db}}
    tokreg list --db {{db}}
    tokreg show stdlib@2 --db {{db}}
    tokreg sql "SELECT rank, left_text, right_text, count FROM merges_view WHERE tokenizer = 'stdlib@2' ORDER BY rank LIMIT 10" --db {{db}}

# Format the Python and the Rust code.
fmt:
    {{python}} -m ruff format tokreg tests benchmarks migrations
    cargo fmt

# Rebuild the extension in place after changing src/.
develop:
    {{python}} -m pip install -q -e '.[test]'
