//! Where tests find the shared corpora: the folder named by `TOKREG_TEST_DATA`, else
//! `../shared/data` (beside the crate), as the Python suite does. A test whose file is absent
//! skips that part rather than fail, so `cargo test` passes without the data too.

/// The text of a shared data file (`kjv.txt`, ...), `None` when it is absent.
pub fn read(name: &str) -> Option<String> {
    let dir = std::env::var_os("TOKREG_TEST_DATA").unwrap_or_else(|| "../shared/data".into());
    std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok()
}
