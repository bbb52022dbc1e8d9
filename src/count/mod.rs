//! Counting a corpus: the phase every trainer starts with, and the artifact between counting
//! and training (`Counts`), which can be written to a file, summed across machines, and
//! trained from.
//!
//! - `counter.rs`: `Counter`, fed line-aligned chunks of any size, one input at a time. Each
//!   chunk is cut into sub-chunks of about `SUB_CHUNK` bytes at line ends, counted in parallel
//!   into maps that borrow the chunk's bytes, and folded into a table split into `SHARDS`
//!   shards by hash, the shards filled in parallel. Counts are sums of 64-bit integers, so
//!   neither the thread count nor the chunk size can change a count.
//! - `lines.rs`: `Lines`, the line framing both counters share (a chunk's unfinished line
//!   carried to the next, an overlong one cut).
//! - `spill.rs`: when the table outgrows its memory budget it is written to a temporary file
//!   as a run sorted by bytes and emptied (counting out of core); `finish` merges the runs.
//! - `runs.rs`: `RunCounter`, superword BPE's runs counted as sequences of piece ids (the
//!   same `Counts` as `Counter` with `bpe::superword::count_runs` as its word split, cheaper).
//! - `counts.rs`: `Counts`, the finished result: distinct pieces sorted by bytes, each with its
//!   count, and what the budget rule dropped; its binary form, sums, and the budget rule.
//!
//! The budget rule (`Counts::keep_within`): when the pieces would not fit the training budget,
//! the most frequent pieces are kept (count descending, then bytes ascending), the longest
//! such prefix whose estimated memory fits; the rest are dropped and their number and total
//! count recorded. It depends only on the exact counts, so it is as deterministic as they are.

mod counter;
mod counts;
mod lines;
mod runs;
mod spill;

pub(crate) use counter::short;
pub use counter::{Counter, Splitting, WordSplit};
pub use runs::{AnyCounter, RunCounter, RunPieces};

/// One counted piece and its count, as runs and merges stream them.
pub type Entry = (Box<[u8]>, u64);
pub use counts::{CountStats, Counts, PIECE_OVERHEAD};

/// Counts whole inputs in memory (tests, benchmarks, small corpora): each input fed at once
/// and ended, no budget.
pub fn count_inputs(inputs: &[&[u8]], split: Splitting) -> Result<Counts, crate::error::CoreError> {
    let mut c = Counter::new(split, 0, usize::MAX, std::env::temp_dir());
    for input in inputs {
        c.feed(input)?;
        c.end_input()?;
    }
    c.finish(None)
}
