//! Rayon thread pools by size, for callers that ask for a thread count (batches, training).
//!
//! Pools are built once per thread count and kept: starting threads on every call would cost
//! more than encoding a batch of short texts. `threads == 0` means rayon's global pool (one
//! thread per core). Results never depend on the thread count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::CoreError;

/// The most threads a caller may ask for. Beyond it is a mistake (`threads=10**6` would try to
/// start a million threads and stall the machine), refused before any thread starts; the same
/// bound as the Python API's.
pub const MAX_THREADS: usize = 256;

/// Runs `f` in a pool of `threads` threads (its parallel iterators use that pool); with 0, on
/// the calling thread with the global pool.
pub fn install<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> Result<T, CoreError> {
    if threads == 0 {
        return Ok(f());
    }
    if threads > MAX_THREADS {
        return Err(CoreError::input(format!(
            "{threads} threads is more than tokreg runs ({MAX_THREADS} at most); ask for fewer, or 0 for one per core"
        )));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absurd_thread_counts_are_refused_before_any_thread_starts() {
        for n in [MAX_THREADS + 1, 1_000_000, usize::MAX] {
            assert!(matches!(install(n, || 1), Err(CoreError::Input(_))), "{n}");
        }
        assert_eq!(install(2, || 7).unwrap(), 7);
        assert_eq!(install(0, || 7).unwrap(), 7);
    }
}
