//! `Counter`: counts the pieces (or words) of a stream of line-aligned chunks, in parallel,
//! within a memory budget (spilling sorted runs to disk beyond it).
//!
//! Lines are the unit: every line (with its `\n`) is split on its own, so the counts are a
//! function of the multiset of lines of the inputs. Chunks may end anywhere: the unfinished
//! last line is kept until the next chunk, and `end_input` closes an input (its last line
//! need not end with `\n`, and never joins the next input's first line). A line longer than
//! `LONG_LINE` bytes is cut every `LONG_LINE` bytes (at a character boundary) so that a file
//! without line ends cannot hold the whole file in memory; the cuts depend only on the line.

use std::borrow::Cow;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};

use super::counts::{CountStats, Counts};
use super::lines::Lines;
use super::spill::{merge_runs, Run};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Sub-chunks counted by one task each: two per thread, of 1 to 8 MB. A bigger sub-chunk
/// repeats fewer of its distinct pieces in the table merge; two per thread balance the load.
/// (The size never changes a count.)
const SUB_CHUNK_MIN: usize = 1 << 20;
const SUB_CHUNK_MAX: usize = 8 << 20;
/// Shards of the table: filled in parallel, one task per shard.
const SHARDS: usize = 64;
/// Lines longer than this are cut (see the module header).
pub const LONG_LINE: usize = 16 << 20;
/// Estimated bytes of one table entry besides its key (hash slot, box header, count).
const ENTRY_OVERHEAD: usize = 48;

/// How a line becomes pieces.
pub enum Splitting {
    /// BPE: the pieces of a pre-tokenizer pattern; a byte that is not UTF-8 is a piece of its own.
    Pieces(Splitter),
    /// WordPiece, Unigram: the trainer's own normalization and word split of a line (bytes that
    /// are not UTF-8 become U+FFFD first).
    Words(WordSplit),
}

/// A trainer's own line splitter: calls `emit` with each word of a line.
pub type WordSplit = Box<dyn Fn(&str, &mut dyn FnMut(&str)) + Send + Sync>;

/// One sub-chunk's counts split by shard (short pieces as their `short` key, the others as
/// bytes), and its number of lines.
type Partitioned<'a> = (Vec<ShardPart<'a>>, u64);
/// One shard's part of a sub-chunk's counts: short pieces, then the others.
type ShardPart<'a> = (Vec<(u64, u64)>, Vec<(Cow<'a, [u8]>, u64)>);

/// Pieces of at most this many bytes are held as one number (`short`), not as bytes: most
/// pieces of prose and code are this short, and a number hashes and compares in one step where
/// bytes are hashed in a loop and compared through a call (a third of counting's time was those).
const SHORT: usize = 7;

/// A piece of at most `SHORT` bytes as one number: its bytes, then its length in the top byte
/// (so "a" and "a\0" differ). Which pieces are short never changes a count, only where it is kept.
#[inline]
pub(crate) fn short(piece: &[u8]) -> Option<u64> {
    let n = piece.len();
    if n > SHORT {
        return None;
    }
    // Two loads that may overlap (an overlapped byte is the same in both), not a copy through
    // memory, which costs a stalled store-to-load of the whole number.
    let bytes = if n >= 4 {
        let lo = u32::from_le_bytes([piece[0], piece[1], piece[2], piece[3]]) as u64;
        let hi = u32::from_le_bytes([piece[n - 4], piece[n - 3], piece[n - 2], piece[n - 1]]) as u64;
        lo | hi << ((n - 4) * 8)
    } else if n > 0 {
        piece[0] as u64 | (piece[n / 2] as u64) << (n / 2 * 8) | (piece[n - 1] as u64) << ((n - 1) * 8)
    } else {
        0
    };
    Some(bytes | (n as u64) << 56)
}

/// The bytes of a `short` key, and how many of them are the piece's.
#[inline]
fn short_bytes(key: u64) -> ([u8; 8], usize) {
    (key.to_le_bytes(), (key >> 56) as usize)
}

#[derive(Default)]
struct Shard {
    small: FxHashMap<u64, u64>,
    map: FxHashMap<Box<[u8]>, u64>,
    bytes: usize,
}

pub struct Counter {
    split: Splitting,
    /// Pieces longer than this are cut into pieces of at most this many bytes (0: no limit).
    max_piece_bytes: usize,
    shards: Vec<Shard>,
    /// Estimated bytes of the table above which it is spilled to a run on disk.
    table_budget: usize,
    spill_dir: PathBuf,
    runs: Vec<Run>,
    lines: Lines,
    stats: CountStats,
}

/// One task's counts: short pieces by their `short` key, the others by their bytes.
#[derive(Default)]
struct Local<'a> {
    small: FxHashMap<u64, u64>,
    long: FxHashMap<Cow<'a, [u8]>, u64>,
}

impl<'a> Local<'a> {
    /// Counts `piece` once more.
    #[inline(always)]
    fn bump(&mut self, piece: Cow<'a, [u8]>) {
        if let Some(k) = short(&piece) {
            *self.small.entry(k).or_insert(0) += 1;
            return;
        }
        match self.long.get_mut(piece.as_ref()) {
            Some(c) => *c += 1,
            None => {
                self.long.insert(piece, 1);
            }
        }
    }

    /// `bump` of a piece borrowed for this call only: copied when it is new.
    #[inline]
    fn bump_copy(&mut self, piece: &[u8]) {
        if let Some(k) = short(piece) {
            *self.small.entry(k).or_insert(0) += 1;
            return;
        }
        match self.long.get_mut(piece) {
            Some(c) => *c += 1,
            None => {
                self.long.insert(Cow::Owned(piece.to_vec()), 1);
            }
        }
    }
}

fn shard_of(key: &[u8]) -> usize {
    let mut h = FxHasher::default();
    key.hash(&mut h);
    // Bits the hash table itself does not use (it takes the lowest bits for the bucket and
    // the top 7 for its tag), so a shard's keys still spread over its table.
    ((h.finish() >> 40) as usize) % SHARDS
}

/// `shard_of` for a `short` key (any fixed function of the piece will do: the shards are
/// joined and sorted by bytes at the end).
fn shard_of_short(key: u64) -> usize {
    let mut h = FxHasher::default();
    h.write_u64(key);
    ((h.finish() >> 40) as usize) % SHARDS
}

/// The end of the longest prefix of `s` (at most `max` bytes, at least one character) that
/// ends at a character boundary.
pub(super) fn cut(s: &[u8], max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut end = max.max(1);
    // Continuation bytes are 0b10xx_xxxx: back off to the start of a character.
    while end > 0 && end < s.len() && (s[end] & 0xC0) == 0x80 {
        end -= 1;
    }
    if end == 0 {
        // One character longer than `max`: keep it whole.
        end = 1;
        while end < s.len() && (s[end] & 0xC0) == 0x80 {
            end += 1;
        }
    }
    end
}

impl Counter {
    /// `table_budget`: estimated bytes of counts held in memory before a spill to `spill_dir`.
    pub fn new(split: Splitting, max_piece_bytes: usize, table_budget: usize, spill_dir: PathBuf) -> Counter {
        Counter {
            split,
            max_piece_bytes,
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            table_budget: table_budget.max(4096),
            spill_dir,
            runs: Vec::new(),
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

    /// Bytes fed so far.
    pub fn input_bytes(&self) -> u64 {
        self.stats.input_bytes
    }

    /// Distinct pieces in memory now, and runs spilled so far.
    pub fn table_size(&self) -> (usize, usize) {
        (self.shards.iter().map(|s| s.map.len() + s.small.len()).sum(), self.runs.len())
    }

    /// The counts. With `keep_budget`, the budget rule keeps the most frequent pieces whose
    /// estimated training memory fits it (see `Counts::keep_within`).
    pub fn finish(mut self, keep_budget: Option<usize>) -> Result<Counts, CoreError> {
        self.end_input()?;
        let mut stats = self.stats;
        let mut table = self.take_sorted();
        if self.runs.is_empty() {
            stats.total = table.iter().map(|e| e.1).sum();
            let counts = Counts::from_sorted(table.into_iter(), stats);
            return Ok(match keep_budget {
                Some(b) => counts.keep_within(b),
                None => counts,
            });
        }
        if !table.is_empty() {
            self.runs.push(Run::write(&self.spill_dir, &table)?);
            table.clear();
        }
        stats.spilled_runs = self.runs.len() as u64;
        let merged = merge_runs(std::mem::take(&mut self.runs))?;
        Counts::select(merged, stats, keep_budget.unwrap_or(usize::MAX))
    }

    fn count_block(&mut self, block: &[u8]) -> Result<(), CoreError> {
        if block.is_empty() {
            return Ok(());
        }
        let per_thread = block.len() / (2 * rayon::current_num_threads().max(1));
        let subs = sub_chunks(block, per_thread.clamp(SUB_CHUNK_MIN, SUB_CHUNK_MAX));
        let split = &self.split;
        let max = self.max_piece_bytes;
        let locals: Vec<Result<Partitioned, CoreError>> = subs
            .par_iter()
            .map(|sub| {
                let mut local = Local::default();
                let mut lines = 0u64;
                match (split, std::str::from_utf8(sub)) {
                    // Valid as a whole, so is every line: one check for the sub-chunk rather than a
                    // call per (short) line, and lines found as text (kernel.txt 20 MB: 150M of
                    // counting's 1.4G instructions).
                    (Splitting::Pieces(splitter), Ok(text)) => {
                        for line in text.split_inclusive('\n') {
                            lines += 1;
                            splitter.split(line, |a, b| add(&mut local, Cow::Borrowed(&line.as_bytes()[a..b]), max))?;
                        }
                    }
                    _ => {
                        for line in sub.split_inclusive(|&b| b == b'\n') {
                            lines += 1;
                            count_line(split, max, line, &mut local)?;
                        }
                    }
                }
                let mut parts: Vec<ShardPart> = (0..SHARDS).map(|_| (Vec::new(), Vec::new())).collect();
                for (k, v) in local.small {
                    parts[shard_of_short(k)].0.push((k, v));
                }
                for (k, v) in local.long {
                    parts[shard_of(&k)].1.push((k, v));
                }
                Ok((parts, lines))
            })
            .collect();
        let mut parts = Vec::with_capacity(locals.len());
        for l in locals {
            let (p, lines) = l?;
            self.stats.lines += lines;
            parts.push(p);
        }
        self.shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
            for p in &parts {
                for &(k, v) in &p[s].0 {
                    match shard.small.get_mut(&k) {
                        Some(c) => *c += v,
                        None => {
                            shard.bytes += short_bytes(k).1 + ENTRY_OVERHEAD;
                            shard.small.insert(k, v);
                        }
                    }
                }
                for (k, v) in &p[s].1 {
                    match shard.map.get_mut(k.as_ref()) {
                        Some(c) => *c += v,
                        None => {
                            shard.bytes += k.len() + ENTRY_OVERHEAD;
                            shard.map.insert(Box::from(k.as_ref()), *v);
                        }
                    }
                }
            }
        });
        drop(parts);
        if self.shards.iter().map(|s| s.bytes).sum::<usize>() > self.table_budget {
            let table = self.take_sorted();
            self.runs.push(Run::write(&self.spill_dir, &table)?);
        }
        Ok(())
    }

    /// Empties the table into a list sorted by bytes.
    fn take_sorted(&mut self) -> Vec<(Box<[u8]>, u64)> {
        let mut all: Vec<(Box<[u8]>, u64)> =
            Vec::with_capacity(self.shards.iter().map(|s| s.map.len() + s.small.len()).sum());
        for s in &mut self.shards {
            all.extend(std::mem::take(&mut s.map));
            all.extend(std::mem::take(&mut s.small).into_iter().map(|(k, n)| {
                let (b, len) = short_bytes(k);
                (Box::from(&b[..len]), n)
            }));
            s.bytes = 0;
        }
        all.par_sort_unstable_by(|a, b| a.0.cmp(&b.0));
        all
    }
}

/// Cuts `block` into pieces of about `size` bytes that end just after a `\n` (or at the end).
fn sub_chunks(block: &[u8], size: usize) -> Vec<&[u8]> {
    let mut out = vec![];
    let mut start = 0;
    while start < block.len() {
        let mut end = (start + size).min(block.len());
        if end < block.len() {
            end = match block[end..].iter().position(|&b| b == b'\n') {
                Some(p) => end + p + 1,
                None => block.len(),
            };
        }
        out.push(&block[start..end]);
        start = end;
    }
    out
}

#[inline(always)]
fn add<'a>(local: &mut Local<'a>, piece: Cow<'a, [u8]>, max: usize) {
    if max > 0 && piece.len() > max {
        // Bounded pieces: cut every `max` bytes at character boundaries.
        let mut rest: &[u8] = &piece;
        while !rest.is_empty() {
            let end = cut(rest, max);
            let part = &rest[..end];
            match &piece {
                Cow::Borrowed(b) => {
                    let off = part.as_ptr() as usize - b.as_ptr() as usize;
                    local.bump(Cow::Borrowed(&b[off..off + end]));
                }
                Cow::Owned(_) => local.bump_copy(part),
            }
            rest = &rest[end..];
        }
        return;
    }
    local.bump(piece);
}

fn count_line<'a>(split: &Splitting, max: usize, line: &'a [u8], local: &mut Local<'a>) -> Result<(), CoreError> {
    match split {
        Splitting::Pieces(splitter) => {
            let mut line = line;
            while !line.is_empty() {
                let (valid, rest) = match std::str::from_utf8(line) {
                    Ok(s) => (s, &line[line.len()..]),
                    Err(e) => {
                        let (ok, bad) = line.split_at(e.valid_up_to());
                        // `ok` is exactly the prefix that from_utf8 validated.
                        (std::str::from_utf8(ok).unwrap_or(""), bad)
                    }
                };
                splitter.split(valid, |a, b| add(local, Cow::Borrowed(&valid.as_bytes()[a..b]), max))?;
                if rest.is_empty() {
                    break;
                }
                // One invalid byte becomes a piece of its own; continue after it.
                add(local, Cow::Borrowed(&rest[..1]), max);
                line = &rest[1..];
            }
        }
        Splitting::Words(words) => {
            let text = String::from_utf8_lossy(line);
            words(&text, &mut |w: &str| {
                if max == 0 || w.len() <= max {
                    local.bump_copy(w.as_bytes());
                } else {
                    add(local, Cow::Owned(w.as_bytes().to_vec()), max);
                }
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT2;

    fn counter(budget: usize) -> Counter {
        Counter::new(Splitting::Pieces(Splitter::new(GPT2).unwrap()), 0, budget, std::env::temp_dir())
    }

    fn count(inputs: &[&[u8]], feed: usize, threads: usize, budget: usize) -> Counts {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut c = counter(budget);
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
        let mut s = String::new();
        let mut x = 1u64;
        for i in 0..40_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            s.push_str(&format!("w{} the cat {} sat\n", x >> 50, i % 97));
            if i % 1000 == 0 {
                s.push_str("no newline at the end of this one, then a \u{e9}t\u{e9}");
            }
        }
        s.into_bytes()
    }

    #[test]
    fn same_counts_for_any_chunk_size_thread_count_and_budget() {
        let t = text();
        let a = count(&[&t, b"tail without newline"], 1 << 20, 1, usize::MAX);
        for (feed, threads, budget) in [(7, 2, usize::MAX), (4096, 3, usize::MAX), (100_000, 2, 1)] {
            let b = count(&[&t, b"tail without newline"], feed, threads, budget);
            assert_eq!(a.to_bytes().len(), b.to_bytes().len());
            assert!(a.same_pieces(&b), "feed {feed} threads {threads} budget {budget}");
        }
        // The last line of one input never joins the next input.
        let c = count(&[b"ab", b"cd"], 1, 1, usize::MAX);
        assert_eq!(c.iter().map(|(p, _)| p.to_vec()).collect::<Vec<_>>(), vec![b"ab".to_vec(), b"cd".to_vec()]);
    }

    #[test]
    fn invalid_utf8_bytes_are_pieces_of_their_own() {
        let c = count(&[b"ab\xffcd"], 100, 1, usize::MAX);
        let got: Vec<(Vec<u8>, u64)> = c.iter().map(|(p, n)| (p.to_vec(), n)).collect();
        assert_eq!(got, vec![(b"ab".to_vec(), 1), (b"cd".to_vec(), 1), (b"\xff".to_vec(), 1)]);
    }

    /// A chunk that is UTF-8 as a whole is split line by line without checking each line; one
    /// that is not goes line by line through the check. Chunked so that some chunks hold the
    /// invalid line and some do not, the counts are those of a line-by-line count.
    #[test]
    fn valid_and_invalid_chunks_count_alike() {
        let text: &[u8] = b"one two\n  three\xfe four\n\xffcd ab\n\t\tfive six\n\xe9t\xc3\xa9 x\n";
        let by_line = {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
            pool.install(|| {
                let mut c = counter(usize::MAX);
                for line in text.split_inclusive(|&b| b == b'\n') {
                    c.feed(line).unwrap();
                    c.end_input().unwrap();
                }
                c.finish(None).unwrap()
            })
        };
        let want: Vec<(Vec<u8>, u64)> = by_line.iter().map(|(p, n)| (p.to_vec(), n)).collect();
        assert!(want.iter().any(|(p, _)| p == b"\xff"));
        for feed in 1..=text.len() {
            let c = count(&[text], feed, 1, usize::MAX);
            let got: Vec<(Vec<u8>, u64)> = c.iter().map(|(p, n)| (p.to_vec(), n)).collect();
            assert_eq!(got, want, "feed {feed}");
        }
    }

    #[test]
    fn long_pieces_are_cut_at_character_boundaries() {
        let mut c = Counter::new(Splitting::Pieces(Splitter::new(GPT2).unwrap()), 4, 1 << 30, std::env::temp_dir());
        c.feed("abcdefghij \u{e9}\u{e9}\u{e9}".as_bytes()).unwrap();
        let got: Vec<String> =
            c.finish(None).unwrap().iter().map(|(p, _)| String::from_utf8(p.to_vec()).unwrap()).collect();
        assert_eq!(got, [" \u{e9}", "abcd", "efgh", "ij", "\u{e9}\u{e9}"]);
        assert!(got.iter().all(|p| p.len() <= 4));
    }

    #[test]
    fn short_and_long_pieces_count_alike() {
        // Pieces of 1 to 12 bytes (the short ones held as numbers, the rest as bytes), with NUL
        // bytes that a short key must tell from its padding; counted against a plain map.
        let words = ["a", "a\0", "\0", "\0\0", "abcdefg", "abcdefgh", "\0abcdef", "abcdef\0", "x\0\0\0\0\0\0\0y"];
        let mut line = String::new();
        let mut want: std::collections::BTreeMap<Vec<u8>, u64> = Default::default();
        for i in 0..500 {
            let w = words[i % words.len()];
            line.push_str(w);
            line.push('\n');
        }
        let bytes = line.into_bytes();
        let splitter = Splitter::new(GPT2).unwrap();
        for l in bytes.split_inclusive(|&b| b == b'\n') {
            splitter
                .split(std::str::from_utf8(l).unwrap(), |a, b| *want.entry(l[a..b].to_vec()).or_insert(0) += 1)
                .unwrap();
        }
        for threads in [1, 2] {
            let got: Vec<(Vec<u8>, u64)> =
                count(&[&bytes], 37, threads, usize::MAX).iter().map(|(p, n)| (p.to_vec(), n)).collect();
            assert_eq!(got, want.clone().into_iter().collect::<Vec<_>>(), "threads {threads}");
        }
        assert_eq!(short(b"a"), short(b"a").filter(|_| true));
        assert_ne!(short(b"a"), short(b"a\0"));
        assert_eq!(short(b"abcdefgh"), None);
        for n in 0..=SHORT {
            let piece: Vec<u8> = (1..=n as u8).map(|i| i.wrapping_mul(37)).collect();
            let mut b = [0u8; 8];
            b[..n].copy_from_slice(&piece);
            b[7] = n as u8;
            assert_eq!(short(&piece), Some(u64::from_le_bytes(b)), "{n} bytes");
            let (back, len) = short_bytes(short(&piece).unwrap());
            assert_eq!(&back[..len], &piece[..]);
        }
        let (b, len) = short_bytes(short(b"ab\0").unwrap());
        assert_eq!(&b[..len], b"ab\0");
    }

    #[test]
    fn cut_keeps_characters_whole() {
        assert_eq!(cut("\u{e9}\u{e9}".as_bytes(), 3), 2);
        assert_eq!(cut("\u{1F600}".as_bytes(), 2), 4);
        assert_eq!(cut(b"abc", 5), 3);
    }
}
