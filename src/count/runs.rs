//! Counting superword BPE's runs (`bpe::superword`): the same `Counts` as the shared `Counter`
//! fed `bpe::superword::count_runs` as its word split (same keys, counts and stats), found
//! without a key per occurrence.
//!
//! A run is a short sequence of pieces (at most `max_words`), and the pieces of a corpus are few
//! (about 100k distinct in 20 MB of English, against 800k distinct runs). So each parallel
//! task numbers the pieces it meets (bytes -> local id, each piece's bytes hashed once per
//! occurrence and copied once per task) and lists its runs as sequences of those ids. The
//! tasks are joined in two steps: their pieces into one table of global ids (in task order),
//! then their runs, translated to global ids, into `SHARDS` flat open-addressing tables by hash
//! (a run hashed and compared as a few `u32`s, no allocation per distinct run), the shards
//! filled in parallel, one block of input behind the splitting, so that the two overlap
//! (`RunCounter::count_block`). The counts are finished with the tables as they are (`Pending`): the
//! distinct runs are put in the order of their keys' bytes ("3,4;the cat", see
//! `bpe::superword`), as the `Counts` require, when the counts are first read in order, which
//! superword training does on another thread while its first stage trains on the pieces and
//! their counts alone (`Counts::early_pieces`). They are put in order without writing a key:
//! by numbers made of the pieces' ranks (`Order`: a sort of 16-byte numbers, not of keys
//! compared byte by byte through pointers). The runs in order are piece ids numbered in byte
//! order (`RunPieces`, `Counts::run_pieces`), which the superword trainer and the round trip
//! read; the keys are written from them only when something asks for them (a counts file, a
//! sum, the budget rule dropping runs), by parallel tasks, so `tokreg train` never writes them
//! (at 20 MB of English they were about a third of counting's time). A spilled table writes
//! its keys at once. (Training on the runs in the tables' own order, never putting them in
//! key order, was no faster: key order keeps runs that share pieces near each other in stage
//! 2's arena.)
//!
//! Ids are internal: they depend on the order pieces are met, hence on how the input is cut
//! into tasks, but nothing outside this file sees them; the counts are sums of 64-bit integers
//! keyed by the pieces' bytes, so neither the thread count nor the chunking changes a count.
//!
//! Memory: about 4 bytes per id of a distinct run plus 40 per run (ids, end, count, hash and
//! its slot at a load of at most one half), and each distinct piece's bytes plus 32: the
//! estimate the table budget is checked against (`RunCounter::estimate`). Over budget, the
//! table is written to disk as a sorted run of keys (`spill.rs`), as the shared counter does.
//! Besides the tables, the block waiting to be added: its runs as local ids, about its size.

use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;

use super::counter::short;
use super::counts::{CountStats, Counts, Keys, Ordered};
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

    /// Asks for the slot where hash `h` is looked for first, ahead of the lookup.
    #[inline]
    fn prefetch(&self, h: u64) {
        if !self.s.is_empty() {
            crate::memory::prefetch(&self.s[h as usize & (self.s.len() - 1)]);
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
    list: Keys,
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
        self.list.get(i as usize)
    }

    /// A new piece's id.
    #[inline]
    fn push(&mut self, p: &[u8]) -> u32 {
        self.list.push(p);
        (self.list.len() - 1) as u32
    }

    #[inline]
    fn id(&mut self, p: &[u8]) -> u32 {
        if let Some(k) = short(p) {
            let next = self.list.len() as u32;
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
        self.list.len()
    }
}

/// The bytes a piece of `len` bytes adds to its run's key: its length in decimal, a ',' or
/// ';', its bytes.
fn key_part(len: usize) -> usize {
    decimal(len, &mut [0; 20]).len() + 1 + len
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

/// One task's runs: its pieces, every run it met (not only its distinct ones) in its local
/// ids, and its lines. Runs are not summed per task: most runs of a task's few MB are met
/// once there (21 MB of English: 1.83M runs, 870k of them distinct), so a table of the task's
/// own would cost a probe per run and spare the shards few; the shards sum them once (counting
/// CPU about 0.93 -> 0.75 s there).
struct Local {
    pieces: Pieces,
    /// local piece ids, run after run, and where each run ends
    ids: Vec<u32>,
    ends: Vec<u32>,
    lines: u64,
}

/// Lists the runs of every line of `sub` (a line is cut as the shared counter's word split
/// cuts it: bytes that are not UTF-8 become U+FFFD first).
fn count_sub(sub: &[u8], splitter: &Splitter, max_words: usize) -> Local {
    // About a piece per 4 bytes and a run per 8 of English (sized once: grown from nothing, the
    // lists were copied about twice over, on fresh pages).
    let mut l = Local {
        pieces: Pieces::default(),
        ids: Vec::with_capacity(sub.len() / 4),
        ends: Vec::with_capacity(sub.len() / 8),
        lines: 0,
    };
    let mut cells = Vec::new();
    let mut line_runs = |l: &mut Local, text: &str| {
        let bytes = text.as_bytes();
        // The official patterns never fail; a custom regex that gives up counts nothing more
        // of the line (as the shared counter's split does).
        let _ = runs_in(text, splitter, max_words, &mut cells, |run| {
            for &(a, b) in run {
                l.ids.push(l.pieces.id(&bytes[a..b]));
            }
            l.ends.push(l.ids.len() as u32);
        });
    };
    match std::str::from_utf8(sub) {
        // Valid as a whole, so is every line: one check for the sub-chunk (as the shared
        // counter), not a call per line.
        Ok(text) => {
            for line in text.split_inclusive('\n') {
                l.lines += 1;
                line_runs(&mut l, line);
            }
        }
        Err(_) => {
            for line in sub.split_inclusive(|&b| b == b'\n') {
                l.lines += 1;
                // (a line that is UTF-8 as it is, borrowed; one that is not with U+FFFD)
                line_runs(&mut l, &String::from_utf8_lossy(line));
            }
        }
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

/// Adds counted tasks to the tables: their pieces numbered in `pieces` task after task (global
/// ids), then each task's runs, in global ids, split by shard, then each shard's runs added to
/// its table (the shards in parallel).
fn add_tasks(pieces: &mut Pieces, shards: &mut [RunTable], stats: &mut CountStats, locals: Vec<Local>) {
    if locals.is_empty() {
        return;
    }
    let mut global: Vec<Vec<u32>> = Vec::with_capacity(locals.len());
    for l in &locals {
        stats.lines += l.lines;
        global.push((0..l.pieces.len() as u32).map(|p| pieces.id(l.pieces.get(p))).collect());
    }
    // Per task and shard: the runs' ids, and where each run ends (its hash is found again
    // when it is added, rather than kept: 8 bytes a run met).
    type Parts = Vec<(Vec<u32>, Vec<u32>)>;
    let parts: Vec<Parts> = locals
        .into_par_iter()
        .zip(global)
        .map(|(l, to)| {
            // (sized once for an even spread, a quarter over)
            let (cells, runs) = (l.ids.len() / SHARDS * 5 / 4 + 16, l.ends.len() / SHARDS * 5 / 4 + 16);
            let mut parts: Parts = (0..SHARDS).map(|_| (Vec::with_capacity(cells), Vec::with_capacity(runs))).collect();
            let (mut ids, mut at) = (Vec::new(), 0);
            for &end in &l.ends {
                ids.clear();
                ids.extend(l.ids[at..end as usize].iter().map(|&p| to[p as usize]));
                at = end as usize;
                let (pi, pe) = &mut parts[shard_of(hash_ids(&ids))];
                // (id by id: `extend_from_slice` calls `memcpy` for a few ids)
                for &p in &ids {
                    pi.push(p);
                }
                pe.push(pi.len() as u32);
            }
            parts
        })
        .collect();
    shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
        for p in &parts {
            let (ids, ends) = &p[s];
            let run = |i: usize| &ids[if i == 0 { 0 } else { ends[i - 1] as usize }..ends[i] as usize];
            // Each run's hash found `AHEAD` runs before it is added, and its slot asked for then.
            const AHEAD: usize = 8;
            let mut ahead = [0u64; AHEAD];
            for (i, h) in ahead.iter_mut().enumerate().take(ends.len()) {
                *h = hash_ids(run(i));
                shard.slots.prefetch(*h);
            }
            for i in 0..ends.len() {
                let h = ahead[i % AHEAD];
                if i + AHEAD < ends.len() {
                    ahead[i % AHEAD] = hash_ids(run(i + AHEAD));
                    shard.slots.prefetch(ahead[i % AHEAD]);
                }
                shard.add(run(i), h, 1);
            }
        }
    });
}

/// The shard of a run's hash (its high bits; the low ones pick its slot in the shard).
#[inline]
fn shard_of(h: u64) -> usize {
    (h >> 40) as usize % SHARDS
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

/// Each piece's part of a key, ready to be stored as whole numbers: a key is written for every
/// distinct run (800k at 20 MB), and `push_key` spends a call to `memcpy` on each length and
/// each piece, most of them a few bytes.
struct KeyParts {
    /// its length in decimal, then ',' (little-endian, the first byte first), and how many
    /// bytes of it; 0 when the length has more than 7 digits
    head: Vec<(u64, u8)>,
    /// its bytes when it has at most 8 (zero-padded)
    word: Vec<u64>,
}

/// Bytes a key may write past its end (a whole number of 8 bytes) before the buffer is cut to it.
const SLACK: usize = 8;

impl KeyParts {
    fn new(pieces: &Pieces) -> KeyParts {
        let n = pieces.len() as u32;
        let head = (0..n)
            .map(|p| {
                let d = decimal(pieces.get(p).len(), &mut [0; 20]).to_vec();
                if d.len() > 7 {
                    return (0, 0);
                }
                let mut b = [0u8; 8];
                b[..d.len()].copy_from_slice(&d);
                b[d.len()] = b',';
                (u64::from_le_bytes(b), d.len() as u8 + 1)
            })
            .collect();
        let word = (0..n)
            .map(|p| {
                let mut b = [0u8; 8];
                let bytes = pieces.get(p);
                if bytes.len() <= 8 {
                    b[..bytes.len()].copy_from_slice(bytes);
                }
                u64::from_le_bytes(b)
            })
            .collect();
        KeyParts { head, word }
    }

    /// Writes the key of `run` (as `push_key` does) into `out` from `at` on, and returns where
    /// it ends; `out` may hold bytes past that (see `SLACK`), which the next key overwrites.
    #[inline]
    fn write(&self, out: &mut Vec<u8>, at: usize, pieces: &Pieces, run: &[u32]) -> usize {
        let size: usize = run.iter().map(|&p| pieces.get(p).len() + 9).sum::<usize>() + SLACK;
        if out.len() < at + size {
            out.resize((at + size).max(out.len() * 2), 0);
        }
        if run.iter().any(|&p| self.head[p as usize].1 == 0) {
            out.truncate(at);
            push_key(out, pieces, run);
            let end = out.len();
            out.resize(end + SLACK, 0);
            return end;
        }
        let mut at = at;
        for &p in run {
            let (h, n) = self.head[p as usize];
            out[at..at + 8].copy_from_slice(&h.to_le_bytes());
            at += n as usize;
        }
        out[at - 1] = b';';
        for &p in run {
            let bytes = pieces.get(p);
            if bytes.len() <= 8 {
                out[at..at + 8].copy_from_slice(&self.word[p as usize].to_le_bytes());
            } else {
                out[at..at + bytes.len()].copy_from_slice(bytes);
            }
            at += bytes.len();
        }
        at
    }
}

/// Every distinct run of a `Counts` as piece ids, beside the keys (`Counts::run_pieces`), so
/// that the superword trainer and the round trip need not parse each key and look its pieces
/// up again (a hash per piece of every run). The pieces are numbered in the order of their
/// bytes (the same ids whatever the chunking or thread count); run `k` of the counts is
/// `run(k)`. 4 bytes per piece of a distinct run and 4 per run, beside the keys (none when the
/// runs hold more than `u32::MAX` pieces in all).
pub struct RunPieces {
    /// the pieces in the order of their bytes (shared with `EarlyPieces` when they were asked
    /// for first)
    pieces: Arc<Keys>,
    ids: Vec<u32>,
    ends: Vec<u32>,
}

impl RunPieces {
    /// Distinct runs.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Distinct pieces.
    pub fn pieces(&self) -> usize {
        self.pieces.len()
    }

    /// The bytes of piece `p`.
    #[inline]
    pub fn piece(&self, p: u32) -> &[u8] {
        self.pieces.get(p as usize)
    }

    /// The piece ids of run `k`, in order.
    #[inline]
    pub fn run(&self, k: usize) -> &[u32] {
        &self.ids[self.start(k)..self.ends[k] as usize]
    }

    /// The piece ids of runs `a..b`, one run after another.
    pub fn runs(&self, a: usize, b: usize) -> &[u32] {
        &self.ids[self.start(a)..self.start(b)]
    }

    #[inline]
    fn start(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.ends[k - 1] as usize
        }
    }

    /// The runs' keys in their order (see `bpe::superword`: the pieces' lengths in decimal,
    /// joined by ',', then ';', then the run's bytes): each key's length found first, then the
    /// keys written by parallel tasks, each into its own part of one buffer.
    pub(crate) fn keys(&self) -> Keys {
        let part: Vec<usize> = (0..self.pieces() as u32).map(|p| key_part(self.piece(p).len())).collect();
        let mut ends: Vec<usize> =
            (0..self.len()).into_par_iter().map(|k| self.run(k).iter().map(|&p| part[p as usize]).sum()).collect();
        let mut at = 0;
        for e in ends.iter_mut() {
            at += *e;
            *e = at;
        }
        let mut bytes = vec![0u8; at];
        let tasks: Vec<std::ops::Range<usize>> =
            (0..self.len()).step_by(KEYS_PER_TASK).map(|a| a..(a + KEYS_PER_TASK).min(self.len())).collect();
        let mut slices = Vec::with_capacity(tasks.len());
        let mut rest: &mut [u8] = &mut bytes;
        for r in &tasks {
            let from = if r.start == 0 { 0 } else { ends[r.start - 1] };
            let (a, b) = std::mem::take(&mut rest).split_at_mut(ends[r.end - 1] - from);
            slices.push((r.clone(), a));
            rest = b;
        }
        slices.into_par_iter().for_each(|(range, out)| {
            let (mut at, mut digits) = (0, [0u8; 20]);
            for k in range {
                let run = self.run(k);
                for (i, &p) in run.iter().enumerate() {
                    let d = decimal(self.piece(p).len(), &mut digits);
                    out[at..at + d.len()].copy_from_slice(d);
                    at += d.len();
                    out[at] = if i + 1 == run.len() { b';' } else { b',' };
                    at += 1;
                }
                for &p in run {
                    let b = self.piece(p);
                    out[at..at + b.len()].copy_from_slice(b);
                    at += b.len();
                }
            }
        });
        Keys { bytes, ends }
    }
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
    /// The last block's tasks, counted, not yet added to the tables (see `count_block`).
    waiting: Vec<Local>,
}

/// Every distinct run and its count, in the order of their keys' bytes, the keys not yet
/// written: the runs are put in order by numbers (`Order`); the finished counts write the keys
/// from their `RunPieces` when asked, a spill writes them at once (`written`).
struct Sorted {
    pieces: Pieces,
    order: Order,
    runs: InOrder,
}

/// The runs in key order.
enum InOrder {
    /// Each run as its packed ranks (all of them: `Order::fits`) and its count: a key is
    /// written from its number alone, and the tables are freed before the sort.
    Packed(Vec<([u64; 2], u64)>),
    /// The tables, and (shard, index in shard) of each run in key order.
    Tables(Vec<RunTable>, Vec<(u32, u32)>),
}

impl Sorted {
    fn len(&self) -> usize {
        match &self.runs {
            InOrder::Packed(e) => e.len(),
            InOrder::Tables(_, o) => o.len(),
        }
    }

    /// The `k`th run in key order: its piece ids (in `ids`) and count.
    #[inline]
    fn run<'s>(&'s self, k: usize, ids: &'s mut Vec<u32>) -> (&'s [u32], u64) {
        match &self.runs {
            InOrder::Packed(e) => {
                let (v, n) = e[k];
                self.order.unpack(u128::from(v[0]) << 64 | u128::from(v[1]), ids);
                (ids, n)
            }
            InOrder::Tables(t, o) => {
                let (s, i) = o[k];
                let t = &t[s as usize];
                (t.get(i as usize), t.counts[i as usize])
            }
        }
    }

    /// The `k`th run in key order: its pieces' ranks appended to `ranks`; returns its count.
    #[inline]
    fn ranks(&self, k: usize, ranks: &mut Vec<u32>) -> u64 {
        match &self.runs {
            InOrder::Packed(e) => {
                let (v, n) = e[k];
                self.order.unpack_ranks(u128::from(v[0]) << 64 | u128::from(v[1]), ranks);
                n
            }
            InOrder::Tables(t, o) => {
                let (s, i) = o[k];
                let t = &t[s as usize];
                ranks.extend(t.get(i as usize).iter().map(|&p| self.order.rank[p as usize]));
                t.counts[i as usize]
            }
        }
    }

    /// Every key written, in order, with its count: in parallel tasks of `KEYS_PER_TASK`
    /// runs of the order, each into its own buffer (joined in task order).
    fn written(&self) -> Vec<Written> {
        let parts = KeyParts::new(&self.pieces);
        self.tasks()
            .into_par_iter()
            .map(|range| {
                let mut w = Written {
                    ends: Vec::with_capacity(range.len()),
                    counts: Vec::with_capacity(range.len()),
                    ..Default::default()
                };
                let (mut ids, mut at) = (Vec::new(), 0);
                for k in range {
                    let (run, count) = self.run(k, &mut ids);
                    at = parts.write(&mut w.bytes, at, &self.pieces, run);
                    w.ends.push(at);
                    w.counts.push(count);
                }
                w.bytes.truncate(at);
                w
            })
            .collect()
    }

    /// The runs of the order in parallel tasks of `KEYS_PER_TASK`.
    fn tasks(&self) -> Vec<std::ops::Range<usize>> {
        let n = self.len();
        (0..n).step_by(KEYS_PER_TASK).map(|a| a..(a + KEYS_PER_TASK).min(n)).collect()
    }

    /// The counts in order, with their runs as piece ids aside (`RunPieces`), which write the
    /// keys when they are first asked for, when the runs can be numbered in 32 bits; otherwise
    /// with their keys written now.
    fn ordered(&self, listed: Option<Arc<Keys>>) -> Ordered {
        let ids = match &self.runs {
            // (at most as many pieces as fit whole in 128 bits)
            InOrder::Packed(e) => e.len() * (128 / (self.order.elem_bits + self.order.rank_bits)) as usize,
            InOrder::Tables(t, _) => t.iter().map(|t| t.ids.len()).sum(),
        };
        if ids > u32::MAX as usize {
            let parts = self.written();
            let (mut keys, mut counts) = (Keys::default(), Vec::with_capacity(self.len()));
            keys.bytes.reserve_exact(parts.iter().map(|w| w.bytes.len()).sum());
            keys.ends.reserve_exact(self.len());
            for (k, n) in parts.iter().flat_map(Written::iter) {
                keys.bytes.extend_from_slice(k);
                keys.ends.push(keys.bytes.len());
                counts.push(n);
            }
            return Ordered { counts, keys: keys.into(), runs: None };
        }
        // Each run's pieces' ranks (their ids in `RunPieces`) and its count.
        // (per task: the ranks, each run's end among them, the counts)
        type Part = (Vec<u32>, Vec<u32>, Vec<u64>);
        let mut parts: Vec<Part> = self
            .tasks()
            .into_par_iter()
            .map(|range| {
                let (mut ranks, mut ends, mut counts) =
                    (Vec::new(), Vec::with_capacity(range.len()), Vec::with_capacity(range.len()));
                for k in range {
                    counts.push(self.ranks(k, &mut ranks));
                    ends.push(ranks.len() as u32);
                }
                (ranks, ends, counts)
            })
            .collect();
        let mut aside = RunPieces {
            pieces: listed.unwrap_or_else(|| Arc::new(in_byte_order(&self.pieces, &self.order.by_bytes))),
            ids: Vec::with_capacity(parts.iter().map(|p| p.0.len()).sum()),
            ends: Vec::with_capacity(self.len()),
        };
        let mut counts = Vec::with_capacity(self.len());
        // (each task's lists freed once copied)
        for (ranks, ends, c) in parts.iter_mut() {
            let base = aside.ids.len() as u32;
            aside.ids.extend_from_slice(&std::mem::take(ranks));
            aside.ends.extend(std::mem::take(ends).into_iter().map(|e| base + e));
            counts.extend_from_slice(&std::mem::take(c));
        }
        Ordered { counts, keys: Default::default(), runs: Some(Arc::new(aside)) }
    }

    /// Written to disk as a run of the shared counter's form (`spill.rs`).
    fn spill(&self, dir: &std::path::Path) -> Result<Run, CoreError> {
        let parts = self.written();
        let entries: Vec<(Box<[u8]>, u64)> =
            parts.iter().flat_map(Written::iter).map(|(k, n)| (Box::from(k), n)).collect();
        Run::write(dir, &entries)
    }
}

/// Runs of the order whose keys one task writes.
const KEYS_PER_TASK: usize = if cfg!(test) { 64 } else { 16_384 };

/// One task's keys, one after another in `bytes`, and their counts.
#[derive(Default)]
struct Written {
    bytes: Vec<u8>,
    ends: Vec<usize>,
    counts: Vec<u64>,
}

impl Written {
    fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        self.ends.iter().zip(&self.counts).scan(0, |at, (&end, &n)| {
            let k = &self.bytes[*at..end];
            *at = end;
            Some((k, n))
        })
    }
}

/// The order of runs' keys by numbers, without writing a key. A key is its pieces' lengths
/// ("l1,l2,...,ln;", see `bpe::superword`) then its bytes. Each length with the character after
/// it (',' or ';') is one element; no element's string is a prefix of another's (each ends in
/// its one non-digit), so the header compares as the sequence of its elements, each by its
/// rank among those strings in byte order (',' < the digits < ';'). Two headers that compare
/// equal are the same lengths, so the bytes that follow split at the same places, and compare
/// as the sequence of the pieces, each by its rank among the pieces in byte order. A run's
/// ranks, the elements' then the pieces', are packed into a u128 from its top bit (`L` bits
/// per element, `P` per piece); bits past 128 are left off, and runs whose numbers are equal
/// are compared rank by rank (`exact`).
struct Order {
    /// per piece id: its length's element ranks with ',' and with ';' after it
    elem: Vec<[u32; 2]>,
    /// per piece id: its rank among the pieces in byte order
    rank: Vec<u32>,
    /// per rank: the piece id (`rank` inverted)
    by_bytes: Vec<u32>,
    /// per element rank: whether it ends a header (';')
    last: Vec<bool>,
    elem_bits: u32,
    rank_bits: u32,
}

fn bit_len(n: usize) -> u32 {
    usize::BITS - n.leading_zeros()
}

impl Order {
    /// The order of `pieces`' runs; `by_bytes`: the piece ids in the order of their bytes, when
    /// known already.
    fn new(pieces: &Pieces, by_bytes: Option<Vec<u32>>) -> Order {
        let n = pieces.len();
        let by_bytes = by_bytes.unwrap_or_else(|| pieces_by_bytes(pieces));
        let mut rank = vec![0u32; n];
        for (r, &p) in by_bytes.iter().enumerate() {
            rank[p as usize] = r as u32;
        }
        // The elements' strings: every length with ',' and with ';' after it, in byte order.
        let mut lens: Vec<usize> = (0..n as u32).map(|p| pieces.get(p).len()).collect();
        lens.sort_unstable();
        lens.dedup();
        let mut strings: Vec<(Vec<u8>, usize, bool)> = Vec::with_capacity(2 * lens.len());
        for &len in &lens {
            for last in [false, true] {
                let mut s = decimal(len, &mut [0; 20]).to_vec();
                s.push(if last { b';' } else { b',' });
                strings.push((s, len, last));
            }
        }
        strings.sort_unstable();
        // (a length's two elements need not be neighbours: "1," < "10;" < "1;")
        let mut of_len: rustc_hash::FxHashMap<(usize, bool), u32> = Default::default();
        for (r, (_, len, last)) in strings.iter().enumerate() {
            of_len.insert((*len, *last), r as u32);
        }
        let elem = (0..n as u32)
            .map(|p| {
                let len = pieces.get(p).len();
                [of_len[&(len, false)], of_len[&(len, true)]]
            })
            .collect();
        let last = strings.iter().map(|s| s.2).collect();
        Order {
            elem,
            rank,
            by_bytes,
            last,
            elem_bits: bit_len(strings.len().max(2) - 1),
            rank_bits: bit_len(n.max(2) - 1),
        }
    }

    /// The element rank of piece `p` at position `i` of a run of `n`.
    #[inline]
    fn element(&self, p: u32, i: usize, n: usize) -> u32 {
        self.elem[p as usize][(i + 1 == n) as usize]
    }

    /// A run's ranks packed from the top bit (see the struct's comment).
    #[inline]
    fn packed(&self, run: &[u32]) -> u128 {
        let (mut v, mut free) = (0u128, 128u32);
        let mut put = |x: u32, bits: u32| {
            if free >= bits {
                free -= bits;
                v |= (x as u128) << free;
            } else if free > 0 {
                v |= (x as u128) >> (bits - free);
                free = 0;
            }
        };
        let n = run.len();
        for (i, &p) in run.iter().enumerate() {
            put(self.element(p, i, n), self.elem_bits);
        }
        for &p in run {
            put(self.rank[p as usize], self.rank_bits);
        }
        v
    }

    /// Whether every run of up to `max_words` pieces packs whole into the 128 bits.
    fn fits(&self, max_words: usize) -> bool {
        max_words.saturating_mul((self.elem_bits + self.rank_bits) as usize) <= 128
    }

    /// The piece ids of a run packed whole (`fits`), into `ids`.
    #[inline]
    fn unpack(&self, v: u128, ids: &mut Vec<u32>) {
        ids.clear();
        self.unpack_ranks(v, ids);
        for p in ids.iter_mut() {
            *p = self.by_bytes[*p as usize];
        }
    }

    /// The pieces' ranks of a run packed whole (`fits`), appended to `ranks`.
    #[inline]
    fn unpack_ranks(&self, v: u128, ranks: &mut Vec<u32>) {
        let (le, lr) = (self.elem_bits, self.rank_bits);
        let (me, mr) = ((1u128 << le) - 1, (1u128 << lr) - 1);
        let mut at = 128;
        let mut n = 0;
        loop {
            at -= le;
            n += 1;
            if self.last[((v >> at) & me) as usize] {
                break;
            }
        }
        for _ in 0..n {
            at -= lr;
            ranks.push(((v >> at) & mr) as u32);
        }
    }

    /// Two runs in the order of their keys, rank by rank.
    fn exact(&self, a: &[u32], b: &[u32]) -> std::cmp::Ordering {
        let elems = |r: &[u32]| {
            let n = r.len();
            r.iter().enumerate().map(move |(i, &p)| self.element(p, i, n)).collect::<Vec<u32>>()
        };
        elems(a)
            .cmp(&elems(b))
            .then_with(|| a.iter().map(|&p| self.rank[p as usize]).cmp(b.iter().map(|&p| self.rank[p as usize])))
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
            waiting: Vec::new(),
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

    /// Distinct runs in the tables now (the blocks fed before the last), and runs of keys
    /// spilled so far.
    pub fn table_size(&self) -> (usize, usize) {
        (self.shards.iter().map(RunTable::len).sum(), self.spilled.len())
    }

    /// The counts. With `keep_budget`, the budget rule keeps the most frequent runs whose
    /// estimated training memory fits it (see `Counts::keep_within`).
    pub fn finish(mut self, keep_budget: Option<usize>) -> Result<Counts, CoreError> {
        self.end_input()?;
        self.flush()?;
        let mut stats = self.stats;
        if self.spilled.is_empty() {
            // Not put in order yet (`Pending`): superword training puts them in order beside
            // its first stage, which needs only the pieces.
            let pending = Pending {
                pieces: std::mem::take(&mut self.pieces),
                shards: std::mem::take(&mut self.shards),
                max_words: self.max_words,
                by_bytes: None,
                listed: None,
            };
            stats.total = pending.shards.iter().flat_map(|t| &t.counts).sum();
            let (len, key_bytes) = (pending.len(), pending.key_bytes());
            let counts = Counts::of_pending(pending, len, key_bytes, stats);
            return Ok(match keep_budget {
                Some(b) => counts.keep_within(b),
                None => counts,
            });
        }
        let sorted = self.take_sorted();
        if sorted.len() > 0 {
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
            + self.pieces.list.bytes.len()
            + self.pieces.len() * PIECE_OVERHEAD
    }

    /// Counts `block` on every thread while the previous block's tasks (`waiting`) are added to
    /// the tables beside it: the tables are filled one block behind, in the order the blocks
    /// came, so that the serial numbering of a block's pieces and the steps between the
    /// parallel ones overlap the next block's splitting (tokreg reads 4 MB a block). The
    /// tables go through the same states as when each block was added at once, and the budget
    /// is checked at each of them (one call later; the last by `finish`), so they spill where
    /// they did.
    fn count_block(&mut self, block: &[u8]) -> Result<(), CoreError> {
        if block.is_empty() {
            return Ok(());
        }
        let per_thread = block.len() / (2 * rayon::current_num_threads().max(1));
        let subs = sub_chunks(block, per_thread.clamp(SUB_CHUNK_MIN, SUB_CHUNK_MAX));
        let (splitter, max_words) = (&self.splitter, self.max_words);
        let waiting = std::mem::take(&mut self.waiting);
        let (pieces, shards, stats) = (&mut self.pieces, &mut self.shards, &mut self.stats);
        let (locals, ()) = rayon::join(
            || subs.par_iter().map(|sub| count_sub(sub, splitter, max_words)).collect::<Vec<Local>>(),
            || add_tasks(pieces, shards, stats, waiting),
        );
        self.waiting = locals;
        self.spill_if_over()
    }

    /// Adds the waiting block's tasks to the tables (see `count_block`).
    fn flush(&mut self) -> Result<(), CoreError> {
        let waiting = std::mem::take(&mut self.waiting);
        add_tasks(&mut self.pieces, &mut self.shards, &mut self.stats, waiting);
        self.spill_if_over()
    }

    fn spill_if_over(&mut self) -> Result<(), CoreError> {
        if self.estimate() > self.table_budget {
            let sorted = self.take_sorted();
            self.spilled.push(sorted.spill(&self.spill_dir)?);
        }
        Ok(())
    }

    /// Empties the tables into every distinct run and its count, in key order.
    fn take_sorted(&mut self) -> Sorted {
        let pieces = std::mem::take(&mut self.pieces);
        let shards: Vec<RunTable> = std::mem::take(&mut self.shards);
        self.shards = (0..SHARDS).map(|_| RunTable::default()).collect();
        sorted(pieces, shards, self.max_words, None)
    }
}

/// The run counter's tables when it finished in memory, its runs not yet in the order of their
/// keys (`Counts::of_pending`): put in order (`order`) when the counts are first read in
/// order, which superword training does beside its first stage, trained on the pieces and
/// their counts alone (`early`).
pub(crate) struct Pending {
    pieces: Pieces,
    shards: Vec<RunTable>,
    max_words: usize,
    /// The piece ids in the order of their bytes, and the pieces listed in it, once `early` has
    /// found them (putting the runs in order needs both).
    by_bytes: Option<Vec<u32>>,
    listed: Option<Arc<Keys>>,
}

/// The distinct pieces of counted runs, in the order of their bytes, and the count of each,
/// summed over the runs that hold it.
pub(crate) struct EarlyPieces {
    pieces: Arc<Keys>,
    pub(crate) counts: Vec<u64>,
}

impl EarlyPieces {
    /// The bytes of piece `p`.
    pub(crate) fn piece(&self, p: usize) -> &[u8] {
        self.pieces.get(p)
    }
}

/// `pieces` listed in the order `by_bytes`.
fn in_byte_order(pieces: &Pieces, by_bytes: &[u32]) -> Keys {
    let mut list = Keys::with_capacity(pieces.len(), pieces.list.bytes.len());
    for &p in by_bytes {
        list.push(pieces.get(p));
    }
    list
}

impl Pending {
    fn len(&self) -> usize {
        self.shards.iter().map(RunTable::len).sum()
    }

    /// The length of every run's key (see `bpe::superword`), in all.
    fn key_bytes(&self) -> usize {
        let part: Vec<usize> = (0..self.pieces.len() as u32).map(|p| key_part(self.pieces.get(p).len())).collect();
        self.shards.par_iter().map(|t| t.ids.iter().map(|&p| part[p as usize]).sum::<usize>()).sum()
    }

    pub(crate) fn order(self) -> Ordered {
        let Pending { pieces, shards, max_words, by_bytes, listed } = self;
        sorted(pieces, shards, max_words, by_bytes).ordered(listed)
    }

    pub(crate) fn early(&mut self) -> EarlyPieces {
        let n = self.pieces.len();
        let counts = self
            .shards
            .par_iter()
            .fold(
                || vec![0u64; n],
                |mut acc, t| {
                    for (e, &c) in t.counts.iter().enumerate() {
                        for &p in t.get(e) {
                            acc[p as usize] += c;
                        }
                    }
                    acc
                },
            )
            .reduce(
                || vec![0u64; n],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
                    a
                },
            );
        // In the order of their bytes, as the ordered runs number them: trained in that order,
        // pieces that share a beginning lie side by side in the merge loop's arena, which stage
        // 1 pays for in cache misses otherwise (about 25-80 ms of 150 at 20 MB of English).
        // (both kept for putting the runs in order, which numbers the pieces so too)
        let by_bytes = self.by_bytes.get_or_insert_with(|| pieces_by_bytes(&self.pieces));
        let listed = self.listed.get_or_insert_with(|| Arc::new(in_byte_order(&self.pieces, by_bytes)));
        EarlyPieces { pieces: listed.clone(), counts: by_bytes.iter().map(|&p| counts[p as usize]).collect() }
    }
}

/// The piece ids in the order of their bytes (compared by their first 8 bytes as one number
/// first: most pieces are shorter).
fn pieces_by_bytes(pieces: &Pieces) -> Vec<u32> {
    let head = |p: u32| {
        let b = pieces.get(p);
        let mut h = [0u8; 8];
        h[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
        u64::from_be_bytes(h)
    };
    let mut by_bytes: Vec<(u64, u32)> = (0..pieces.len() as u32).map(|p| (head(p), p)).collect();
    by_bytes.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| pieces.get(a.1).cmp(pieces.get(b.1))));
    by_bytes.into_iter().map(|e| e.1).collect()
}

/// Every distinct run of the tables and its count, in key order.
fn sorted(pieces: Pieces, shards: Vec<RunTable>, max_words: usize, by_bytes: Option<Vec<u32>>) -> Sorted {
    {
        let order = Order::new(&pieces, by_bytes);
        let by = &order;
        if order.fits(max_words) {
            // Whole numbers: distinct runs, distinct numbers, so sorting them is the one order.
            // (each shard writes its own part of one array, sized first)
            let mut runs: Vec<([u64; 2], u64)> = vec![([0; 2], 0); shards.iter().map(RunTable::len).sum()];
            let mut parts = Vec::with_capacity(shards.len());
            let mut rest = &mut runs[..];
            for t in &shards {
                let (a, b) = std::mem::take(&mut rest).split_at_mut(t.len());
                parts.push((t, a));
                rest = b;
            }
            parts.into_par_iter().for_each(|(t, out)| {
                for (i, e) in out.iter_mut().enumerate() {
                    let v = by.packed(t.get(i));
                    *e = ([(v >> 64) as u64, v as u64], t.counts[i]);
                }
            });
            drop(shards);
            runs.par_sort_unstable_by_key(|e| e.0);
            return Sorted { pieces, order, runs: InOrder::Packed(runs) };
        }
        let mut keys: Vec<(u128, u32, u32)> = shards
            .par_iter()
            .enumerate()
            .flat_map_iter(|(s, t)| (0..t.len()).map(move |i| (by.packed(t.get(i)), s as u32, i as u32)))
            .collect();
        // Keys are distinct, so the order is total and an unstable sort gives the one order.
        keys.par_sort_unstable_by(|x, y| {
            x.0.cmp(&y.0)
                .then_with(|| by.exact(shards[x.1 as usize].get(x.2 as usize), shards[y.1 as usize].get(y.2 as usize)))
        });
        let keys = keys.into_iter().map(|(_, s, i)| (s, i)).collect();
        Sorted { pieces, order, runs: InOrder::Tables(shards, keys) }
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
        // (K 16: runs too long to pack whole, sorted through the tables)
        for k in [1, 4, 16] {
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
    fn runs_ordered_by_numbers_as_their_keys_by_bytes() {
        // Lengths whose decimals are prefixes of each other ("1;" sorts after "10,"), pieces
        // of one length that differ in bytes, runs of one to three pieces.
        let mut pieces = Pieces::default();
        for p in ["a", "b", "ab", "xy", "0123456789", "abcdefghij", "abcdefghijk", &"z".repeat(100), "\u{e9}"] {
            pieces.id(p.as_bytes());
        }
        let n = pieces.len() as u32;
        let mut runs: Vec<Vec<u32>> = (0..n).map(|a| vec![a]).collect();
        for a in 0..n {
            for b in 0..n {
                runs.push(vec![a, b]);
                runs.extend((0..n).map(|c| vec![a, b, c]));
            }
        }
        let key = |r: &[u32]| {
            let mut k = Vec::new();
            push_key(&mut k, &pieces, r);
            k
        };
        let mut want = runs.clone();
        want.sort_by_key(|r| key(r));
        let by = Order::new(&pieces, None);
        assert!(by.fits(3));
        let mut got = runs.clone();
        got.sort_by_key(|r| by.packed(r));
        assert_eq!(got, want);
        let mut ids = Vec::new();
        for r in &runs {
            by.unpack(by.packed(r), &mut ids);
            assert_eq!(&ids, r);
        }
        // Numbers cut to their top 8 bits tie, and the exact comparison decides (as for runs
        // that do not fit); alone it gives the same order.
        let mut got = runs.clone();
        got.sort_by(|a, b| (by.packed(a) >> 120).cmp(&(by.packed(b) >> 120)).then_with(|| by.exact(a, b)));
        assert_eq!(got, want);
        got.sort_by(|a, b| by.exact(a, b));
        assert_eq!(got, want);
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
