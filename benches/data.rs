//! Where the benchmarks find the shared corpora: `TOKREG_TEST_DATA`, else `../shared/data`
//! (beside the crate), as the tests do. Included by each bench target with `mod data;`.

use std::time::Instant;

/// The text of a shared data file, `None` (with a note) when it is absent.
pub fn read(name: &str) -> Option<String> {
    let dir = std::env::var_os("TOKREG_TEST_DATA").unwrap_or_else(|| "../shared/data".into());
    let text = std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok();
    if text.is_none() {
        println!("{name}: not found (set TOKREG_TEST_DATA to the shared data folder), skipped");
    }
    text
}

/// Throughput in MB/s of `f` over `bytes` of input: at least `min_runs` runs and half a
/// second, best run wins (the machine is shared; the best run is the least disturbed).
pub fn mb_per_s(bytes: usize, min_runs: u32, f: &mut dyn FnMut() -> usize) -> f64 {
    let start = Instant::now();
    let mut runs = 0;
    let mut best = f64::MAX;
    while runs < min_runs || start.elapsed().as_secs_f64() < 0.5 {
        let t = Instant::now();
        std::hint::black_box(f());
        best = best.min(t.elapsed().as_secs_f64());
        runs += 1;
    }
    bytes as f64 / 1e6 / best
}
