//! Counting superword BPE's runs (`bpe::superword`): the same `Counts` as the shared `Counter`
//! fed `bpe::superword::count_runs` as its word split (same keys, counts and stats), found
//! without a key per occurrence.
//!
//! A run is a short sequence of pieces (at most `max_words`), and the pieces of a corpus are few
//! (about 100k distinct in 20 MB of English, against 800k distinct runs). So each parallel
//! task numbers the pieces it meets (bytes -> local id, each piece's bytes hashed once per
//! occurrence and copied once per task) and counts runs as sequences of those ids in a flat
//! open-addressing table (a run hashed and compared as a few `u32`s, no allocation per
//! distinct run). The tasks are joined in two steps: their pieces into one table of global ids
//! (in task order), then their runs, translated to global ids, into `SHARDS` tables by hash,
//! the shards filled in parallel. The keys ("3,4;the cat", see `bpe::superword`) are written
//! only once, when the counts are finished (or spilled), one per distinct run, and sorted by
//! their bytes as the `Counts` require.
//!
//! Ids are internal: they depend on the order pieces are met, hence on how the input is cut
//! into tasks, but nothing outside this file sees them; the counts are sums of 64-bit integers
//! keyed by the pieces' bytes, so neither the thread count nor the chunking changes a count.
//!
//! Memory: about 4 bytes per id of a distinct run plus 40 per run (ids, end, count, hash and
//! its slot at a load of at most one half), and each distinct piece's bytes plus 32: the
//! estimate the table budget is checked against (`RunCounter::estimate`). Over budget, the
//! table is written to disk as a sorted run of keys (`spill.rs`), as the shared counter does.

use std::path::PathBuf;

use rayon::prelude::*;

use super::counter::short;
use super::counts::{CountStats, Counts};
use super::lines::Lines;
use super::spill::{merge_runs, Run};
use crate::bpe::superword::{decimal, runs_in};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Sub-chunks counted by one task each: two per thread, of 1 to 8 MB (as the shared counter).
const SUB_CHUNK_MIN: usize = 1 << 20;
const SUB_CHUNK_MAX: usize = 8 << 20;
/// Run tables, filled in parallel, one task per shard.
const SHARDS: usize = 64;
/// Estimated bytes per distinct run besides its ids, and per distinct piece besides its bytes.
const RUN_OVERHEAD: usize = 40;
const PIECE_OVERHEAD: usize = 32;

#[inline]
fn hash_bytes(b: &[u8]) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(b)
}

/// A run's hash from its ids (FxHash's step, and a final mix so that the low bits, which pick
/// the slot, and the high bits, which pick the shard, both depend on every id).
#[inline]
fn hash_ids(ids: &[u32]) -> u64 {
    let mut h = ids.len() as u64;
    for &i in ids {
        h = (h.rotate_left(5) ^ i as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// Open addressing over entry indices (slot value = index + 1, 0 = empty), linear probing,
/// grown (rehashed from the entries' stored hashes) past a load of one half.
#[derive(Default)]
struct Slots {
    s: Vec<u32>,
}

impl Slots {
    /// The entry `eq` accepts among those with hash `h`, or the empty slot where it would go.
    #[inline]
    fn find(&self, h: u64, mut eq: impl FnMut(usize) -> bool) -> Result<usize, usize> {
        let mask = self.s.len() - 1;
        let mut i = h as usize & mask;
        loop {
            match self.s[i] {
                0 => return Err(i),
                e if eq(e as usize - 1) => return Ok(e as usize - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// Makes room for one more entry among `n` (rehashing from `hashes` when it grows).
    #[inline]
    fn reserve_one(&mut self, n: usize, hashes: &[u64]) {
        if (n + 1) * 2 <= self.s.len() {
            return;
        }
        let size = (self.s.len() * 2).max(64);
        self.s = vec![0; size];
        let mask = size - 1;
        for (e, &h) in hashes.iter().enumerate() {
            let mut i = h as usize & mask;
            while self.s[i] != 0 {
                i = (i + 1) & mask;
            }
            self.s[i] = e as u32 + 1;
        }
    }
}

/// Distinct pieces: bytes -> id (in order of first sight), the bytes copied once. A piece of
/// at most 7 bytes (most of them: words with their space) is found by its bytes as one number
/// (the shared counter's `short` key), which hashes and compares in one step, with the key in
/// the table; a longer one by the hash of its bytes in `slots`.
#[derive(Default)]
struct Pieces {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    short: rustc_hash::FxHashMap<u64, u32>,
    /// the long pieces' ids, and their hashes, in order of first sight (`slots` holds indices
    /// into these)
    long: Vec<u32>,
    hashes: Vec<u64>,
    slots: Slots,
}

impl Pieces {
    #[inline]
    fn get(&self, i: u32) -> &[u8] {
        let i = i as usize;
        &self.bytes[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }

    /// A new piece's id.
    #[inline]
    fn push(&mut self, p: &[u8]) -> u32 {
        self.bytes.extend_from_slice(p);
        self.ends.push(self.bytes.len());
        (self.ends.len() - 1) as u32
    }

    #[inline]
    fn id(&mut self, p: &[u8]) -> u32 {
        if let Some(k) = short(p) {
            let next = self.ends.len() as u32;
            let e = *self.short.entry(k).or_insert(next);
            if e == next {
                self.push(p);
            }
            return e;
        }
        let h = hash_bytes(p);
        self.slots.reserve_one(self.long.len(), &self.hashes);
        match self.slots.find(h, |j| self.hashes[j] == h && self.get(self.long[j]) == p) {
            Ok(j) => self.long[j],
            Err(slot) => {
                let e = self.push(p);
                self.long.push(e);
                self.hashes.push(h);
                self.slots.s[slot] = self.long.len() as u32;
                e
            }
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }
}

/// Whether two runs of ids are equal, compared in line: `==` on slices calls `memcmp`, a call
/// per probe for a few ids.
#[inline]
fn same(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Distinct runs as sequences of piece ids, each with its count.
#[derive(Default)]
struct RunTable {
    ids: Vec<u32>,
    ends: Vec<usize>,
    hashes: Vec<u64>,
    counts: Vec<u64>,
    slots: Slots,
}

impl RunTable {
    #[inline]
    fn get(&self, e: usize) -> &[u32] {
        &self.ids[if e == 0 { 0 } else { self.ends[e - 1] }..self.ends[e]]
    }

    #[inline]
    fn add(&mut self, run: &[u32], h: u64, n: u64) {
        self.slots.reserve_one(self.ends.len(), &self.hashes);
        match self.slots.find(h, |e| self.hashes[e] == h && same(self.get(e), run)) {
            Ok(e) => self.counts[e] += n,
            Err(slot) => {
                let e = self.ends.len();
                self.ids.extend_from_slice(run);
                self.ends.push(self.ids.len());
                self.hashes.push(h);
                self.counts.push(n);
                self.slots.s[slot] = e as u32 + 1;
            }
        }
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn estimate(&self) -> usize {
        self.ids.len() * 4 + self.len() * RUN_OVERHEAD
    }
}

/// One task's runs: its pieces and its runs in its local ids, and its lines.
struct Local {
    pieces: Pieces,
    runs: RunTable,
    lines: u64,
}

/// Counts the runs of every line of `sub` (a line is cut as the shared counter's word split
/// cuts it: bytes that are not UTF-8 become U+FFFD first).
fn count_sub(sub: &[u8], splitter: &Splitter, max_words: usize) -> Local {
    let mut l = Local { pieces: Pieces::default(), runs: RunTable::default(), lines: 0 };
    let (mut cells, mut ids) = (Vec::new(), Vec::new());
    for line in sub.split_inclusive(|&b| b == b'\n') {
        l.lines += 1;
        let text = String::from_utf8_lossy(line);
        let bytes = text.as_bytes();
        // The official patterns never fail; a custom regex that gives up counts nothing more
        // of the line (as the shared counter's split does).
        let _ = runs_in(&text, splitter, max_words, &mut cells, |run| {
            ids.clear();
            for &(a, b) in run {
                ids.push(l.pieces.id(&bytes[a..b]));
            }
            l.runs.add(&ids, hash_ids(&ids), 1);
        });
    }
    l
}

/// Cuts `block` into pieces of about `size` bytes that end just after a `\n` (or at the end).
fn sub_chunks(block: &[u8], size: usize) -> Vec<&[u8]> {
    let mut out = vec![];
    let mut start = 0;
    while start < block.len() {
        let mut end = (start + size).min(block.len());
        if end < block.len() {
            end = memchr::memchr(b'\n', &block[end..]).map_or(block.len(), |p| end + p + 1);
        }
        out.push(&block[start..end]);
        start = end;
    }
    out
}

/// The counting key of a run (see `bpe::superword`): its pieces' lengths in decimal joined by
/// ',', then ';', then its bytes.
fn push_key(out: &mut Vec<u8>, pieces: &Pieces, run: &[u32]) {
    for (i, &p) in run.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(decimal(pieces.get(p).len(), &mut [0; 20]));
    }
    out.push(b';');
    for &p in run {
        out.extend_from_slice(pieces.get(p));
    }
}

/// The first 16 bytes of a key as two big-endian numbers (zero-padded): keys that differ
/// there are ordered by these alone.
#[inline]
fn heads(k: &[u8]) -> (u64, u64) {
    let mut b = [0u8; 16];
    let n = k.len().min(16);
    b[..n].copy_from_slice(&k[..n]);
    (u64::from_be_bytes(b[..8].try_into().unwrap_or([0; 8])), u64::from_be_bytes(b[8..].try_into().unwrap_or([0; 8])))
}

/// A counter of superword runs, fed line-aligned chunks like the shared `Counter`.
pub struct RunCounter {
    splitter: Splitter,
    max_words: usize,
    pieces: Pieces,
    shards: Vec<RunTable>,
    table_budget: usize,
    spill_dir: PathBuf,
    spilled: Vec<Run>,
    lines: Lines,
    stats: CountStats,
}

/// Every distinct run's key and count, sorted by key.
struct Sorted {
    keys: Vec<Vec<u8>>,
    ends: Vec<Vec<usize>>,
    counts: Vec<Vec<u64>>,
    /// (heads, shard, index in shard), in key order
    order: Vec<(u64, u64, u32, u32)>,
}

impl Sorted {
    fn key(&self, s: u32, i: u32) -> &[u8] {
        let (s, i) = (s as usize, i as usize);
        &self.keys[s][if i == 0 { 0 } else { self.ends[s][i - 1] }..self.ends[s][i]]
    }

    fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.order.iter().map(|&(_, _, s, i)| (self.key(s, i), self.counts[s as usize][i as usize]))
    }

    /// Written to disk as a run of the shared counter's form (`spill.rs`).
    fn spill(&self, dir: &std::path::Path) -> Result<Run, CoreError> {
        let entries: Vec<(Box<[u8]>, u64)> = self.iter().map(|(k, n)| (Box::from(k), n)).collect();
        Run::write(dir, &entries)
    }
}

impl RunCounter {
    /// `table_budget`: estimated bytes of counts held in memory before a spill to `spill_dir`.
    pub fn new(splitter: Splitter, max_words: usize, table_budget: usize, spill_dir: PathBuf) -> RunCounter {
        RunCounter {
            splitter,
            max_words,
            pieces: Pieces::default(),
            shards: (0..SHARDS).map(|_| RunTable::default()).collect(),
            table_budget: table_budget.max(4096),
            spill_dir,
            spilled: Vec::new(),
            lines: Lines::default(),
            stats: CountStats::default(),
        }
    }

    /// Counts the complete lines of `data` (after the unfinished line of the previous chunk).
    pub fn feed(&mut self, data: &[u8]) -> Result<(), CoreError> {
        self.stats.input_bytes += data.len() as u64;
        let mut lines = std::mem::take(&mut self.lines);
        let cuts = lines.feed(data, |block| self.count_block(block));
        self.lines = lines;
        self.stats.cut_lines += cuts?;
        Ok(())
    }

    /// Ends one input: its last line is counted even without a final `\n`.
    pub fn end_input(&mut self) -> Result<(), CoreError> {
        let line = self.lines.end();
        self.count_block(&line)
    }

    pub fn input_bytes(&self) -> u64 {
        self.stats.input_bytes
    }

    /// Distinct runs in memory now, and runs of keys spilled so far.
    pub fn table_size(&self) -> (usize, usize) {
        (self.shards.iter().map(RunTable::len).sum(), self.spilled.len())
    }

    /// The counts. With `keep_budget`, the budget rule keeps the most frequent runs whose
    /// estimated training memory fits it (see `Counts::keep_within`).
    pub fn finish(mut self, keep_budget: Option<usize>) -> Result<Counts, CoreError> {
        self.end_input()?;
        let mut stats = self.stats;
        let sorted = self.take_sorted();
        if self.spilled.is_empty() {
            stats.total = sorted.counts.iter().flatten().sum();
            let counts = Counts::from_sorted(sorted.iter(), stats);
            drop(sorted);
            return Ok(match keep_budget {
                Some(b) => counts.keep_within(b),
                None => counts,
            });
        }
        if !sorted.order.is_empty() {
            self.spilled.push(sorted.spill(&self.spill_dir)?);
        }
        drop(sorted);
        stats.spilled_runs = self.spilled.len() as u64;
        let merged = merge_runs(std::mem::take(&mut self.spilled))?;
        Counts::select(merged, stats, keep_budget.unwrap_or(usize::MAX))
    }

    /// Estimated bytes of the tables (see the module's comment).
    fn estimate(&self) -> usize {
        self.shards.iter().map(RunTable::estimate).sum::<usize>()
            + self.pieces.bytes.len()
            + self.pieces.len() * PIECE_OVERHEAD
    }

    fn count_block(&mut self, block: &[u8]) -> Result<(), CoreError> {
        if block.is_empty() {
            return Ok(());
        }
        let per_thread = block.len() / (2 * rayon::current_num_threads().max(1));
        let subs = sub_chunks(block, per_thread.clamp(SUB_CHUNK_MIN, SUB_CHUNK_MAX));
        let (splitter, max_words) = (&self.splitter, self.max_words);
        let locals: Vec<Local> = subs.par_iter().map(|sub| count_sub(sub, splitter, max_words)).collect();
        // Pieces to global ids, task after task.
        let mut global: Vec<Vec<u32>> = Vec::with_capacity(locals.len());
        for l in &locals {
            self.stats.lines += l.lines;
            global.push((0..l.pieces.len() as u32).map(|p| self.pieces.id(l.pieces.get(p))).collect());
        }
        // Each task's runs in global ids, split by shard: (ids, (end, hash, count)) per shard.
        type Parts = Vec<(Vec<u32>, Vec<(usize, u64, u64)>)>;
        let parts: Vec<Parts> = locals
            .into_par_iter()
            .zip(global)
            .map(|(l, to)| {
                let mut parts: Parts = (0..SHARDS).map(|_| Default::default()).collect();
                let mut ids = Vec::new();
                for e in 0..l.runs.len() {
                    ids.clear();
                    ids.extend(l.runs.get(e).iter().map(|&p| to[p as usize]));
                    let h = hash_ids(&ids);
                    let (pi, pr) = &mut parts[(h >> 40) as usize % SHARDS];
                    pi.extend_from_slice(&ids);
                    pr.push((pi.len(), h, l.runs.counts[e]));
                }
                parts
            })
            .collect();
        self.shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
            for p in &parts {
                let (ids, runs) = &p[s];
                let mut at = 0;
                for &(end, h, n) in runs {
                    shard.add(&ids[at..end], h, n);
                    at = end;
                }
            }
        });
        drop(parts);
        if self.estimate() > self.table_budget {
            let sorted = self.take_sorted();
            self.spilled.push(sorted.spill(&self.spill_dir)?);
        }
        Ok(())
    }

    /// Empties the tables into every distinct run's key and count, sorted by key.
    fn take_sorted(&mut self) -> Sorted {
        let pieces = std::mem::take(&mut self.pieces);
        let shards: Vec<RunTable> = std::mem::take(&mut self.shards);
        self.shards = (0..SHARDS).map(|_| RunTable::default()).collect();
        // Each shard's keys, written in parallel (a shard's table freed as its keys are made).
        let built: Vec<(Vec<u8>, Vec<usize>, Vec<u64>)> = shards
            .into_par_iter()
            .map(|t| {
                let mut keys = Vec::with_capacity(t.ids.len() * 6 + t.len() * 2);
                let mut ends = Vec::with_capacity(t.len());
                for e in 0..t.len() {
                    push_key(&mut keys, &pieces, t.get(e));
                    ends.push(keys.len());
                }
                (keys, ends, t.counts)
            })
            .collect();
        drop(pieces);
        let mut s = Sorted { keys: Vec::new(), ends: Vec::new(), counts: Vec::new(), order: Vec::new() };
        for (k, e, c) in built {
            s.keys.push(k);
            s.ends.push(e);
            s.counts.push(c);
        }
        let mut order = Vec::with_capacity(s.counts.iter().map(Vec::len).sum());
        for (sh, ends) in s.ends.iter().enumerate() {
            for i in 0..ends.len() {
                let (a, b) = heads(s.key(sh as u32, i as u32));
                order.push((a, b, sh as u32, i as u32));
            }
        }
        // By the keys' bytes: their first 16 bytes decide most comparisons; keys are distinct.
        order.par_sort_unstable_by(|x, y| {
            (x.0, x.1).cmp(&(y.0, y.1)).then_with(|| s.key(x.2, x.3).cmp(s.key(y.2, y.3)))
        });
        s.order = order;
        s
    }
}

/// The shared counter or the run counter behind one face (what the binding holds).
pub enum AnyCounter {
    Shared(super::Counter),
    Runs(RunCounter),
}

impl AnyCounter {
    pub fn feed(&mut self, data: &[u8]) -> Result<(), CoreError> {
        match self {
            AnyCounter::Shared(c) => c.feed(data),
            AnyCounter::Runs(c) => c.feed(data),
        }
    }

    pub fn end_input(&mut self) -> Result<(), CoreError> {
        match self {
            AnyCounter::Shared(c) => c.end_input(),
            AnyCounter::Runs(c) => c.end_input(),
        }
    }

    pub fn input_bytes(&self) -> u64 {
        match self {
            AnyCounter::Shared(c) => c.input_bytes(),
            AnyCounter::Runs(c) => c.input_bytes(),
        }
    }

    pub fn table_size(&self) -> (usize, usize) {
        match self {
            AnyCounter::Shared(c) => c.table_size(),
            AnyCounter::Runs(c) => c.table_size(),
        }
    }

    pub fn finish(self, keep_budget: Option<usize>) -> Result<Counts, CoreError> {
        match self {
            AnyCounter::Shared(c) => c.finish(keep_budget),
            AnyCounter::Runs(c) => c.finish(keep_budget),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpe::superword::count_runs;
    use crate::count::{count_inputs, Splitting};
    use crate::pretok::{CL100K, GPT2};

    fn shared(inputs: &[&[u8]], max_words: usize) -> Counts {
        let s = Splitter::new(GPT2).unwrap();
        let split = Splitting::Words(Box::new(move |line: &str, emit: &mut dyn FnMut(&str)| {
            count_runs(line, &s, max_words, emit).unwrap();
        }));
        count_inputs(inputs, split).unwrap()
    }

    fn runs(inputs: &[&[u8]], max_words: usize, feed: usize, threads: usize, budget: usize) -> Counts {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut c = RunCounter::new(Splitter::new(GPT2).unwrap(), max_words, budget, std::env::temp_dir());
            for input in inputs {
                for chunk in input.chunks(feed) {
                    c.feed(chunk).unwrap();
                }
                c.end_input().unwrap();
            }
            c.finish(None).unwrap()
        })
    }

    fn text() -> Vec<u8> {
        let words = ["the", "cat", "sat", "on", "a", "mat", "by", "way", "of", "it", "is", "zebra", "1999", "été"];
        let mut s = Vec::new();
        let mut x = 3u64;
        for line in 0..30_000 {
            for _ in 0..(1 + line % 11) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                s.extend_from_slice(words[(x >> 33) as usize % words.len()].as_bytes());
                s.extend_from_slice(match x >> 61 {
                    0 => b",",
                    1 => b"  ",
                    2 => b"\r\n",
                    _ => b" ",
                });
            }
            if line % 997 == 0 {
                s.extend_from_slice(b"bad \xff\xfe bytes ");
            }
            s.push(b'\n');
        }
        s
    }

    #[test]
    fn the_same_counts_as_the_shared_counter_for_any_chunking_threads_and_budget() {
        let t = text();
        let inputs: [&[u8]; 3] = [&t, b"a tail without a newline", b"x"];
        for k in [1, 4] {
            let want = shared(&inputs, k);
            assert!(want.len() > if k == 1 { 30 } else { 1000 }, "{} runs", want.len());
            for (feed, threads, budget) in [(1 << 20, 1, usize::MAX), (4099, 3, usize::MAX), (100_000, 2, 1)] {
                let got = runs(&inputs, k, feed, threads, budget);
                assert!(got.same_pieces(&want), "K {k}, feed {feed}, threads {threads}, budget {budget}");
                let (g, w) = (got.stats, want.stats);
                assert_eq!((g.total, g.input_bytes, g.lines), (w.total, w.input_bytes, w.lines));
                assert_eq!(g.spilled_runs > 0, budget == 1 && k > 1);
            }
        }
    }

    #[test]
    fn keys_of_many_pieces_and_long_pieces_sort_by_their_bytes() {
        // Runs whose keys share long prefixes ("1,1,1,1;") and pieces of 10+ bytes (two-digit lengths).
        let mut t = String::new();
        for i in 0..2000 {
            t.push_str(&format!("a b c d {} {}\n", "x".repeat(1 + i % 13), i % 7));
        }
        let s = Splitter::new(CL100K).unwrap();
        let split = Splitting::Words(Box::new(move |line: &str, emit: &mut dyn FnMut(&str)| {
            count_runs(line, &s, 3, emit).unwrap();
        }));
        let want = count_inputs(&[t.as_bytes()], split).unwrap();
        let mut c = RunCounter::new(Splitter::new(CL100K).unwrap(), 3, usize::MAX, std::env::temp_dir());
        c.feed(t.as_bytes()).unwrap();
        assert!(c.finish(None).unwrap().same_pieces(&want));
    }
}
