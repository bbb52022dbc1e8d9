//! Rayon thread pools by size, for callers that ask for a thread count (batches, training).
//!
//! Pools are built once per thread count and kept: starting threads on every call would cost
//! more than encoding a batch of short texts. `threads == 0` means rayon's global pool (one
//! thread per core). Results never depend on the thread count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::CoreError;

/// Runs `f` in a pool of `threads` threads (its parallel iterators use that pool); with 0, on
/// the calling thread with the global pool.
pub fn install<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T, CoreError> {
    if threads == 0 {
        return Ok(f());
    }
    Ok(pool(threads)?.install(f))
}

fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, CoreError> {
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&threads) {
        return Ok(p.clone());
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CoreError::input(format!("cannot start {threads} threads ({e}); ask for fewer")))?;
    Ok(pools.entry(threads).or_insert(Arc::new(p)).clone())
}
