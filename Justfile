# tokreg's everyday commands. `just` itself comes from PyPI (rust-just, in the test extra).

python := env_var_or_default("PYTHON", "python3")

# Run the test suites: the Rust core alone, then everything through Python, one pytest worker per
# core (pytest-xdist; each test module runs whole on one worker, so its fixtures are built once).
test:
    cargo test --quiet
    {{python}} -m pytest -q -n auto --dist loadfile --durations=30

# The fast lane (under 3 minutes on 2 cores): every test module's CI-sized slice, without the
# tests marked `slow` (the wheel build, the crash and interrupt sweeps, the whole-corpus and
# every-code-point comparisons) and without `cargo test` (a minute of its own). `just test`
# runs all of them.
test-fast *ARGS:
    {{python}} -m pytest -q -n auto --dist loadfile -m "not slow" {{ARGS}}

# Lint: formatting (ruff, cargo fmt), ruff, mypy (with the stub checked against the extension), cargo clippy.
lint:
    {{python}} -m ruff format --check tokreg tests benchmarks migrations tools
    cargo fmt --check
    {{python}} -m ruff check tokreg tests benchmarks migrations tools
    {{python}} -m mypy
    {{python}} -m mypy.stubtest tokreg._core
    cargo clippy --all-targets --quiet -- -D warnings
    cargo clippy --all-targets --features python --quiet -- -D warnings

# Benchmarks beside tiktoken, HF tokenizers and SentencePiece, on ../shared/data (or TOKREG_TEST_DATA).
bench *ARGS:
    {{python}} -m benchmarks {{ARGS}}

# Fuzz for a while (not part of `test`): the importers with mutated files of every format
# (tests/hostile.py, under a 4 GB memory limit and a hang watchdog), then the core's content
# parser, merge recovery and encoders with cargo-fuzz (installed on first use; nightly flags
# through RUSTC_BOOTSTRAP on the stable toolchain). SECONDS per part; prints what was tried.
fuzz seconds="300":
    #!/usr/bin/env bash
    set -euo pipefail
    {{python}} -m tests.hostile --seconds {{seconds}}
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
    cd fuzz
    for t in content merges_from_ranks encode; do
        log=$(mktemp)
        if ! RUSTC_BOOTSTRAP=1 cargo fuzz run "$t" -- -max_total_time={{seconds}} -rss_limit_mb=4096 -timeout=20 >"$log" 2>&1; then
            tail -40 "$log"; echo "cargo fuzz $t found a crash (the input is in fuzz/artifacts/$t)"; exit 1
        fi
        echo "cargo fuzz $t: $(grep -E '^Done [0-9]+ runs' "$log" | tail -1), $(grep -oE 'cov: [0-9]+' "$log" | tail -1) edges covered, no crash"
    done

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

# Write the CLI reference page (docs/cli.md) from the commands' own help; a test checks it is current.
docs:
    {{python}} -m tokreg.cli.reference > docs/cli.md

# Format the Python and the Rust code.
fmt:
    {{python}} -m ruff format tokreg tests benchmarks migrations tools
    cargo fmt

# Rebuild the extension in place after changing src/.
develop:
    {{python}} -m pip install -q -e '.[test]'
