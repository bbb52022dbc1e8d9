//! Where tests find the shared corpora: the folder named by `TOKREG_TEST_DATA`, else
//! `../shared/data` (beside the crate), as the Python suite does. A test whose file is absent
//! skips that part rather than fail, so `cargo test` passes without the data too. Also the
//! random source the property tests share.

/// The text of a shared data file (`kjv.txt`, ...), `None` when it is absent.
pub fn read(name: &str) -> Option<String> {
    let dir = std::env::var_os("TOKREG_TEST_DATA").unwrap_or_else(|| "../shared/data".into());
    std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok()
}

/// A small deterministic random source for property tests: xorshift64, `next(m)` in `0..m`.
pub fn rng(mut seed: u64) -> impl FnMut(u64) -> u64 {
    move |m: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % m
    }
}
