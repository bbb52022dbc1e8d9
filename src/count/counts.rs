//! `Counts`: distinct pieces sorted by bytes, each with a 64-bit count; what the budget rule
//! dropped; the binary form; sums; the budget rule itself.
//!
//! Binary form (little endian), the body of a counts file (the Python side puts a JSON header
//! with the counting settings and this body's xxh3 in front of it):
//!
//! ```text
//! u64 n, then the stats as 6 x u64 (total, dropped_pieces, dropped_total, input_bytes, lines,
//! spilled_runs), then n x u32 piece lengths, n x u64 counts, then the piece bytes back to back
//! ```
//!
//! Pieces are strictly increasing by bytes and every count is at least 1; `from_bytes` checks it.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::Entry;
use crate::error::CoreError;

/// Estimated training memory of one piece besides its bytes (word record, pair index,
/// occurrence lists), and per byte of it: the budget rule's unit. Measured on the BPE
/// trainer, the hungriest of the three; see docs/training-at-scale.md.
pub const PIECE_OVERHEAD: usize = 96;
pub const PIECE_BYTE_COST: usize = 24;

/// Estimated training memory of a piece of `len` bytes.
pub fn piece_estimate(len: usize) -> usize {
    PIECE_OVERHEAD + PIECE_BYTE_COST * len
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountStats {
    /// Occurrences counted, the dropped ones included.
    pub total: u64,
    /// Distinct pieces the budget rule dropped, and their occurrences.
    pub dropped_pieces: u64,
    pub dropped_total: u64,
    /// Input bytes and lines counted.
    pub input_bytes: u64,
    pub lines: u64,
    /// Runs written to disk while counting (0: it fitted in memory).
    pub spilled_runs: u64,
    /// Lines longer than `LONG_LINE` cut while counting (each cut counts as a line break):
    /// known only to the counter that counted them (not kept in the binary form, which reads
    /// 0), for measuring a version on the pieces rather than the lines (`encode::round_trip`).
    pub cut_lines: u64,
}

impl CountStats {
    fn add(&mut self, o: &CountStats) {
        self.total += o.total;
        self.dropped_pieces += o.dropped_pieces;
        self.dropped_total += o.dropped_total;
        self.input_bytes += o.input_bytes;
        self.lines += o.lines;
        self.spilled_runs += o.spilled_runs;
        self.cut_lines += o.cut_lines;
    }
}

#[derive(Default)]
pub struct Counts {
    /// The counts (and keys) in the order of the keys' bytes: made with the counts, or, for
    /// counts the run counter finished without putting its runs in order, when first asked for
    /// (from `pending`; see `early_pieces`).
    ordered: std::sync::OnceLock<Ordered>,
    pending: std::sync::Mutex<Option<super::runs::Pending>>,
    len: usize,
    /// The length of the keys' bytes (known before they are written: the budget rule's estimate).
    key_bytes: usize,
    /// The occurrences of the pieces kept (known before they are in order).
    kept: u64,
    pub stats: CountStats,
}

/// The counts in key order, and the keys: written with them, or, for counts of superword runs
/// made by the run counter, from the runs' piece ids when first asked for (`Counts::keys`).
/// Training and measuring superword BPE read the piece ids, so `tokreg train` never writes them.
#[derive(Clone, Default)]
pub(crate) struct Ordered {
    pub(crate) counts: Vec<u64>,
    pub(crate) keys: std::sync::OnceLock<Keys>,
    /// The runs as piece ids beside their keys, when the run counter made these counts
    /// (`runs::RunPieces`; never part of equality, and never written to a file).
    pub(crate) runs: Option<std::sync::Arc<super::runs::RunPieces>>,
}

/// The pieces' bytes back to back, and the end of each (also the run counter's lists of
/// pieces in the order of their bytes, `runs::RunPieces` and `runs::EarlyPieces`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Keys {
    pub(crate) bytes: Vec<u8>,
    pub(crate) ends: Vec<usize>,
}

impl Keys {
    /// Room for `n` pieces of `bytes` bytes in all.
    pub(crate) fn with_capacity(n: usize, bytes: usize) -> Keys {
        Keys { bytes: Vec::with_capacity(bytes), ends: Vec::with_capacity(n) }
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    #[inline]
    pub(crate) fn push(&mut self, piece: &[u8]) {
        self.bytes.extend_from_slice(piece);
        self.ends.push(self.bytes.len());
    }

    /// The bytes of piece `i`.
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        &self.bytes[if i == 0 { 0 } else { self.ends[i - 1] }..self.ends[i]]
    }
}

impl PartialEq for Counts {
    fn eq(&self, o: &Counts) -> bool {
        self.stats == o.stats && self.same_pieces(o)
    }
}

impl Clone for Counts {
    /// (the copy is put in order, as is the original)
    fn clone(&self) -> Counts {
        Counts {
            ordered: self.ordered().clone().into(),
            pending: Default::default(),
            len: self.len,
            key_bytes: self.key_bytes,
            kept: self.kept,
            stats: self.stats,
        }
    }
}

impl std::fmt::Debug for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Counts({} pieces, {:?})", self.len, self.stats)
    }
}

/// A piece ranked by the budget rule: more frequent first, then smaller bytes.
struct Ranked {
    count: u64,
    piece: Box<[u8]>,
}

impl Ranked {
    /// Greater = worse (dropped first), so a max-heap's top is the worst kept piece.
    fn worse(&self, o: &Ranked) -> Ordering {
        o.count.cmp(&self.count).then_with(|| self.piece.cmp(&o.piece))
    }
}
impl Ord for Ranked {
    fn cmp(&self, o: &Self) -> Ordering {
        self.worse(o)
    }
}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Ranked {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Ranked {}

fn damaged(what: &str) -> CoreError {
    CoreError::input(format!("the counts are damaged ({what}); count the corpus again"))
}

impl Counts {
    /// From (piece, count) pairs strictly increasing by piece.
    pub fn from_sorted<K: AsRef<[u8]>>(entries: impl Iterator<Item = (K, u64)>, stats: CountStats) -> Counts {
        let mut keys = Keys::default();
        let mut counts = Vec::new();
        for (k, n) in entries {
            keys.bytes.extend_from_slice(k.as_ref());
            keys.ends.push(keys.bytes.len());
            counts.push(n);
        }
        Counts::with_keys(keys, counts, stats)
    }

    pub(crate) fn with_keys(keys: Keys, counts: Vec<u64>, stats: CountStats) -> Counts {
        let (len, key_bytes, kept) = (counts.len(), keys.bytes.len(), counts.iter().sum());
        let ordered = Ordered { counts, keys: keys.into(), runs: None };
        Counts { ordered: ordered.into(), pending: Default::default(), len, key_bytes, kept, stats }
    }

    /// The run counter's counts of `len` distinct runs, their keys `key_bytes` long in all, put
    /// in order when first asked for (`runs::Pending::order`); nothing dropped (`stats.total`
    /// counts every run kept).
    pub(crate) fn of_pending(pending: super::runs::Pending, len: usize, key_bytes: usize, stats: CountStats) -> Counts {
        let pending = std::sync::Mutex::new(Some(pending));
        Counts { ordered: Default::default(), pending, len, key_bytes, kept: stats.total, stats }
    }

    fn ordered(&self) -> &Ordered {
        self.ordered.get_or_init(|| {
            let pending = self.pending.lock().unwrap_or_else(|e| e.into_inner()).take();
            pending.map(|p| p.order()).unwrap_or_default()
        })
    }

    /// The distinct pieces of the runs of counts not yet put in order, in the order of their bytes,
    /// and the count of each (summed over the runs that hold it): what superword BPE's first
    /// stage trains on while the runs are put in order on another thread. None once in order.
    pub(crate) fn early_pieces(&self) -> Option<super::runs::EarlyPieces> {
        if self.ordered.get().is_some() {
            return None;
        }
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).as_mut().map(|p| p.early())
    }

    /// Whether the keys are written (counts of runs write them when first asked for).
    #[cfg(test)]
    pub(crate) fn keys_written(&self) -> bool {
        self.ordered.get().is_some_and(|o| o.keys.get().is_some())
    }

    fn keys(&self) -> &Keys {
        let o = self.ordered();
        o.keys.get_or_init(|| match &o.runs {
            Some(runs) => runs.keys(),
            None => Keys::default(),
        })
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn piece(&self, i: usize) -> &[u8] {
        self.keys().get(i)
    }

    /// The count of piece i.
    pub fn count(&self, i: usize) -> u64 {
        self.ordered().counts[i]
    }

    /// The runs as piece ids, when the run counter made these counts (`runs::RunPieces`).
    pub fn run_pieces(&self) -> Option<&super::runs::RunPieces> {
        self.ordered().runs.as_deref().filter(|r| r.len() == self.len())
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64)> + '_ {
        let k = self.keys();
        k.ends.iter().zip(&self.ordered().counts).scan(0, |at, (&end, &n)| {
            let piece = &k.bytes[*at..end];
            *at = end;
            Some((piece, n))
        })
    }

    /// Occurrences of the kept pieces.
    pub fn kept_total(&self) -> u64 {
        self.kept
    }

    /// Same pieces and counts (the stats aside).
    pub fn same_pieces(&self, o: &Counts) -> bool {
        self.ordered().counts == o.ordered().counts && self.keys() == o.keys()
    }

    /// Estimated training memory of all the pieces (see `piece_estimate`).
    pub fn estimate(&self) -> usize {
        self.len() * PIECE_OVERHEAD + self.key_bytes * PIECE_BYTE_COST
    }

    /// The budget rule: keeps the longest prefix of the pieces ranked by (count descending,
    /// bytes ascending) whose estimated training memory fits `budget`; records what it drops.
    pub fn keep_within(self, budget: usize) -> Counts {
        if self.estimate() <= budget {
            return self;
        }
        let stats = self.stats;
        let entries: Vec<(Box<[u8]>, u64)> = self.iter().map(|(p, n)| (Box::from(p), n)).collect();
        drop(self);
        // The stats already count these pieces in `total`; `select` adds what it drops.
        // The entries are all `Ok`, so the selection cannot fail.
        Counts::select_from(entries.into_iter().map(Ok), stats, budget).unwrap_or_default()
    }

    /// The budget rule over a stream sorted by bytes (summed runs); see `keep_within`.
    pub fn select(
        entries: impl Iterator<Item = Result<Entry, CoreError>>,
        stats: CountStats,
        budget: usize,
    ) -> Result<Counts, CoreError> {
        let mut stats = stats;
        stats.total = 0;
        let mut counted = 0u64;
        let entries = entries.inspect(|e| {
            if let Ok((_, n)) = e {
                counted += n;
            }
        });
        let mut out = Counts::select_from(entries, stats, budget)?;
        out.stats.total += counted;
        Ok(out)
    }

    fn select_from(
        entries: impl Iterator<Item = Result<Entry, CoreError>>,
        stats: CountStats,
        budget: usize,
    ) -> Result<Counts, CoreError> {
        // A max-heap whose top is the worst kept piece. A piece ranked below the best dropped
        // one is dropped on arrival, so what is kept is always a prefix of the ranking.
        let mut heap: BinaryHeap<Ranked> = BinaryHeap::new();
        let mut used = 0usize;
        let mut best_dropped: Option<Ranked> = None;
        let mut stats = stats;
        let drop_one = |r: Ranked, best: &mut Option<Ranked>, stats: &mut CountStats| {
            stats.dropped_pieces += 1;
            stats.dropped_total += r.count;
            if best.as_ref().map_or(true, |b| r.worse(b) == Ordering::Less) {
                *best = Some(r);
            }
        };
        for e in entries {
            let (piece, count) = e?;
            let r = Ranked { count, piece };
            if best_dropped.as_ref().is_some_and(|b| r.worse(b) == Ordering::Greater) {
                drop_one(r, &mut best_dropped, &mut stats);
                continue;
            }
            used += piece_estimate(r.piece.len());
            heap.push(r);
            while used > budget {
                let Some(w) = heap.pop() else { break };
                used -= piece_estimate(w.piece.len());
                drop_one(w, &mut best_dropped, &mut stats);
            }
        }
        let mut kept: Vec<Ranked> = heap.into_vec();
        kept.sort_unstable_by(|a, b| a.piece.cmp(&b.piece));
        Ok(Counts::from_sorted(kept.into_iter().map(|r| (r.piece, r.count)), stats))
    }

    /// The sum of several counts (pieces in more than one add up); stats add up too.
    pub fn sum(parts: &[&Counts]) -> Counts {
        let mut stats = CountStats::default();
        for p in parts {
            stats.add(&p.stats);
        }
        let (mut keys, mut counts) = (Keys::default(), Vec::new());
        let mut at = vec![0usize; parts.len()];
        loop {
            let mut best: Option<&[u8]> = None;
            for (k, p) in parts.iter().enumerate() {
                if at[k] < p.len() {
                    let piece = p.piece(at[k]);
                    if best.map_or(true, |b| piece < b) {
                        best = Some(piece);
                    }
                }
            }
            let Some(piece) = best else { break };
            let mut n = 0u64;
            for (k, p) in parts.iter().enumerate() {
                if at[k] < p.len() && p.piece(at[k]) == piece {
                    n = n.saturating_add(p.count(at[k]));
                    at[k] += 1;
                }
            }
            keys.bytes.extend_from_slice(piece);
            keys.ends.push(keys.bytes.len());
            counts.push(n);
        }
        Counts::with_keys(keys, counts, stats)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let n = self.len();
        let keys = self.keys();
        let mut out = Vec::with_capacity(56 + n * 12 + keys.bytes.len());
        out.extend_from_slice(&(n as u64).to_le_bytes());
        let s = &self.stats;
        for v in [s.total, s.dropped_pieces, s.dropped_total, s.input_bytes, s.lines, s.spilled_runs] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        let mut prev = 0;
        for &e in &keys.ends {
            out.extend_from_slice(&((e - prev) as u32).to_le_bytes());
            prev = e;
        }
        for &c in &self.ordered().counts {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out.extend_from_slice(&keys.bytes);
        out
    }

    pub fn from_bytes(raw: &[u8]) -> Result<Counts, CoreError> {
        let u64_at = |at: usize| -> Result<u64, CoreError> {
            raw.get(at..at + 8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                .ok_or_else(|| damaged("truncated"))
        };
        let n = u64_at(0)? as usize;
        let head = 56usize;
        let lens_end = n.checked_mul(4).and_then(|x| x.checked_add(head)).ok_or_else(|| damaged("bad size"))?;
        let counts_end = n.checked_mul(8).and_then(|x| x.checked_add(lens_end)).ok_or_else(|| damaged("bad size"))?;
        if raw.len() < counts_end {
            return Err(damaged("truncated"));
        }
        let st = |k: usize| u64_at(8 + 8 * k);
        let stats = CountStats {
            total: st(0)?,
            dropped_pieces: st(1)?,
            dropped_total: st(2)?,
            input_bytes: st(3)?,
            lines: st(4)?,
            spilled_runs: st(5)?,
            cut_lines: 0,
        };
        let mut ends = Vec::with_capacity(n);
        let mut end = 0usize;
        for k in 0..n {
            let at = head + 4 * k;
            end += u32::from_le_bytes([raw[at], raw[at + 1], raw[at + 2], raw[at + 3]]) as usize;
            ends.push(end);
        }
        let counts: Vec<u64> = (0..n).map(|k| u64_at(lens_end + 8 * k)).collect::<Result<_, _>>()?;
        let bytes = raw[counts_end..].to_vec();
        if bytes.len() != end {
            return Err(damaged("the piece bytes do not match their lengths"));
        }
        let c = Counts::with_keys(Keys { bytes, ends }, counts, stats);
        for i in 0..n {
            if c.count(i) == 0 || c.piece(i).is_empty() {
                return Err(damaged("an empty piece or a zero count"));
            }
            if i > 0 && c.piece(i - 1) >= c.piece(i) {
                return Err(damaged("pieces out of order"));
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(e: &[(&str, u64)]) -> Counts {
        let total = e.iter().map(|x| x.1).sum();
        Counts::from_sorted(e.iter().map(|(p, n)| (p.as_bytes(), *n)), CountStats { total, ..Default::default() })
    }

    #[test]
    fn counts_past_two_to_the_32_do_not_overflow() {
        let big = 3u64 << 32;
        let a = counts(&[("a", big), ("b", 1)]);
        let b = counts(&[("a", big), ("c", u32::MAX as u64)]);
        let s = Counts::sum(&[&a, &b]);
        assert_eq!(
            s.iter().map(|(p, n)| (p.to_vec(), n)).collect::<Vec<_>>(),
            vec![(b"a".to_vec(), 6u64 << 32), (b"b".to_vec(), 1), (b"c".to_vec(), u32::MAX as u64)]
        );
        assert_eq!(s.stats.total, (6u64 << 32) + 1 + u32::MAX as u64);
        let back = Counts::from_bytes(&s.to_bytes()).unwrap();
        assert_eq!(back, s);
    }

    #[test]
    fn budget_keeps_the_most_frequent_prefix() {
        let c = counts(&[("a", 5), ("bb", 9), ("c", 5), ("d", 1), ("e", 7)]);
        // Ranking: bb 9, e 7, a 5, c 5, d 1. Room for three one-byte pieces' worth, about.
        let budget = piece_estimate(2) + piece_estimate(1) * 2;
        let kept = c.clone().keep_within(budget);
        assert_eq!(
            kept.iter().map(|(p, _)| p.to_vec()).collect::<Vec<_>>(),
            vec![b"a".to_vec(), b"bb".to_vec(), b"e".to_vec()]
        );
        assert_eq!((kept.stats.dropped_pieces, kept.stats.dropped_total), (2, 6));
        assert_eq!(kept.stats.total, 27);
        // Streamed (as from spilled runs), the same rule gives the same result.
        let streamed = Counts::select(c.iter().map(|(p, n)| Ok((Box::from(p), n))), c.stats, budget).unwrap();
        assert_eq!(streamed, kept);
        // Never a piece ranked below a dropped one, even when it would fit.
        let c = counts(&[("aaaa", 9), ("bbbb", 8), ("c", 1)]);
        let kept = c.keep_within(piece_estimate(4) + piece_estimate(1));
        assert_eq!(kept.len(), 1);
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let c = counts(&[("a", 1), ("b", 2)]);
        let mut raw = c.to_bytes();
        raw.pop();
        assert!(Counts::from_bytes(&raw).is_err());
        let swapped = counts(&[("b", 1), ("a", 2)]);
        assert!(Counts::from_bytes(&swapped.to_bytes()).is_err());
    }
}
