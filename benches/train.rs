//! Counting and BPE merging on a corpus, timed apart: `TOKREG_TRAIN_CORPUS=FILE cargo bench
//! --bench train` (default: the shared kjv.txt; TOKREG_TRAIN_PATTERN: gpt2, cl100k (default)
//! or o200k; TOKREG_TRAIN_VOCAB). Prints seconds per phase and distinct pieces, and the heap each
//! phase held at its peak (a counting allocator: live bytes, not resident pages).
//!
//! The corpus is fed in 4 MB chunks, as `tokreg train` reads it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use _core::bpe::{train_counts, CorpusConfig};
use _core::count::{Counter, Splitting};
use _core::pretok::{Splitter, CL100K, GPT2, O200K};

/// The system allocator, counting the bytes live now and the most live since the last `reset`.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

#[allow(unsafe_code)]
// SAFETY: every call is passed to the system allocator unchanged; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            PEAK.fetch_max(LIVE.fetch_add(l.size(), Relaxed) + l.size(), Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            if new >= l.size() {
                PEAK.fetch_max(LIVE.fetch_add(new - l.size(), Relaxed) + new - l.size(), Relaxed);
            } else {
                LIVE.fetch_sub(l.size() - new, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const MB: f64 = (1 << 20) as f64;

/// (live now, peak since the last call) in MB; the peak starts again from what is live.
fn phase() -> (f64, f64) {
    let live = LIVE.load(Relaxed);
    (live as f64 / MB, PEAK.swap(live, Relaxed) as f64 / MB)
}

fn main() {
    let path = std::env::var("TOKREG_TRAIN_CORPUS").unwrap_or_else(|_| "../shared/data/kjv.txt".into());
    let vocab: usize = std::env::var("TOKREG_TRAIN_VOCAB").ok().and_then(|v| v.parse().ok()).unwrap_or(32_000);
    let pattern = match std::env::var("TOKREG_TRAIN_PATTERN").as_deref() {
        Ok("gpt2") => GPT2,
        Ok("o200k") => O200K,
        _ => CL100K,
    };
    let data = std::fs::read(&path).expect("corpus");
    let (base, _) = phase();
    let t0 = Instant::now();
    let mut c = Counter::new(Splitting::Pieces(Splitter::new(pattern).unwrap()), 0, usize::MAX, std::env::temp_dir());
    for chunk in data.chunks(4 << 20) {
        c.feed(chunk).unwrap();
    }
    let (fed, feed_peak) = phase();
    let counts = c.finish(None).unwrap();
    let (counted, finish_peak) = phase();
    let t1 = Instant::now();
    let cfg = CorpusConfig::byte_level(vocab);
    let out = train_counts(&counts, &cfg, &mut |_, _, _| true).unwrap();
    let (trained, train_peak) = phase();
    let t2 = Instant::now();
    // A digest of the merges (std's SipHash, fixed keys): the same on every run of the same result.
    let digest = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        out.trained.merges.iter().for_each(|m| (m.left, m.right, m.result, m.count).hash(&mut h));
        out.trained.token_counts.hash(&mut h);
        h.finish()
    };
    println!(
        "{path}: {:.1} MB, {} distinct pieces, count {:.3} s, merge {:.3} s, {} merges (digest {digest:016x})",
        data.len() as f64 / 1e6,
        counts.len(),
        (t1 - t0).as_secs_f64(),
        (t2 - t1).as_secs_f64(),
        out.trained.merges.len()
    );
    // The corpus itself (`base`) is not counted in the phases: tokreg train reads it in chunks.
    let b = base;
    println!(
        "heap MB beyond the corpus, peak (then live): feeding {:.1} ({:.1}), finish {:.1} ({:.1}), \
         training {:.1} beside the counts ({:.1} with its output)",
        feed_peak - b,
        fed - b,
        finish_peak - b,
        counted - b,
        train_peak - counted,
        trained - counted
    );
}
