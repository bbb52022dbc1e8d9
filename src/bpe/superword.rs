//! Superword BPE (SuperBPE, Liu et al., arXiv 2503.13423): what a "run" of pre-tokens is, how
//! a run is counted, and the encoder. The two-stage trainer is `superword_train.rs`.
//!
//! Stage 1 is byte-level BPE over the pieces of the pre-tokenizer pattern, up to the transition
//! point t (a number of tokens). Stage 2 goes on merging across piece boundaries, within runs:
//!
//! - A run is up to `max_words` consecutive pieces of the pattern, cut left to right. A piece
//!   holding a line break ('\n' or '\r') ends the run before it and is a run of its own, so
//!   no token spans lines, and a run never depends on what follows its line. ("a b c d e f",
//!   max_words 4 with GPT-2's pattern: runs "a b c d" and " e f".)
//! - Encoding a run: each piece by stage 1 alone (tiktoken's rank rule over the tokens below
//!   t, as a plain byte-level version encodes it), the pieces' ids put side by side, then the
//!   stage-2 merges applied by rank over the whole run (the lowest rank first; on one rank the
//!   leftmost pair first), which is the order stage 2 learned them in.
//!
//! Runs of bounded length are what keeps both stages bounded: the counter keeps distinct runs
//! (not documents, as the paper's implementation did; the counting of runs is that of "Faster
//! Superword Tokenization", Tanner et al., arXiv 2604.05192), and encoding stays linear in the
//! text (a run has at most `max_words` pieces; a long piece, `"a" * 100000`, is one piece of
//! stage 1's linear encoder and then one heap-driven merge pass, O(n log n)).
//!
//! A counted run is stored as one key: the byte lengths of its pieces in decimal, joined by
//! ',', then ';', then the run's bytes ("3,4;the cat"), so stage 1 can count the pieces and
//! stage 2 can segment them without splitting again.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::RankEncoder;
use crate::encode::{Encode, Kind};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Calls `f` with the byte ranges of the pieces of each run of `text`, in order.
pub fn runs(
    text: &str,
    splitter: &Splitter,
    max_words: usize,
    f: impl FnMut(&[(usize, usize)]),
) -> Result<(), CoreError> {
    runs_in(text, splitter, max_words, &mut Vec::new(), f)
}

/// `runs`, holding the run being cut in `run` (a buffer the caller keeps across lines).
pub(crate) fn runs_in(
    text: &str,
    splitter: &Splitter,
    max_words: usize,
    run: &mut Vec<(usize, usize)>,
    mut f: impl FnMut(&[(usize, usize)]),
) -> Result<(), CoreError> {
    let max_words = max_words.max(1);
    let bytes = text.as_bytes();
    run.clear();
    // The line breaks found ahead with memchr, not byte by byte in every piece: pieces come
    // in order, so a piece holds a break when the first break at or after its start is
    // before its end.
    let mut breaks = memchr::memchr2_iter(b'\n', b'\r', bytes);
    let mut next = breaks.next().unwrap_or(usize::MAX);
    splitter.split(text, |a, b| {
        while next < a {
            next = breaks.next().unwrap_or(usize::MAX);
        }
        if next < b {
            if !run.is_empty() {
                f(run);
                run.clear();
            }
            f(&[(a, b)]);
            return;
        }
        run.push((a, b));
        if run.len() == max_words {
            f(run);
            run.clear();
        }
    })?;
    if !run.is_empty() {
        f(run);
    }
    Ok(())
}

/// Calls `emit` with the counting key of each run of `line` (the counter's word split). The
/// key and the run are built in buffers each thread keeps, so a line allocates nothing.
pub fn count_runs(
    line: &str,
    splitter: &Splitter,
    max_words: usize,
    emit: &mut dyn FnMut(&str),
) -> Result<(), CoreError> {
    thread_local! {
        static BUFFERS: std::cell::RefCell<(String, Vec<(usize, usize)>)> = const {
            std::cell::RefCell::new((String::new(), Vec::new()))
        };
    }
    BUFFERS.with(|b| {
        let (key, run) = &mut *b.borrow_mut();
        runs_in(line, splitter, max_words, run, |r| {
            run_key(key, line, r);
            emit(key)
        })
    })
}

/// The counting key of one run (see the module's comment), written into `key` (cleared first).
pub fn run_key(key: &mut String, text: &str, run: &[(usize, usize)]) {
    key.clear();
    for (i, &(a, b)) in run.iter().enumerate() {
        if i > 0 {
            key.push(',');
        }
        push_decimal(key, b - a);
    }
    key.push(';');
    key.push_str(&text[run[0].0..run[run.len() - 1].1]);
}

/// Appends `n` in decimal (what `write!` gives, without its formatting machinery: keys are
/// built for every run of the corpus).
fn push_decimal(key: &mut String, n: usize) {
    for &d in decimal(n, &mut [0; 20]) {
        key.push(d as char);
    }
}

/// `n`'s decimal digits, written at the end of `digits`.
pub(crate) fn decimal(mut n: usize, digits: &mut [u8; 20]) -> &[u8] {
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &digits[at..];
        }
    }
}

/// Calls `f` with each piece of a counted run's key, in order, or gives an error naming a
/// damaged key (then `f` may have seen some of its pieces).
pub fn for_each_piece<'a>(key: &'a [u8], mut f: impl FnMut(&'a [u8])) -> Result<(), CoreError> {
    let bad = || CoreError::input("a superword count is damaged (count the corpus again)");
    let semi = key.iter().position(|&c| c == b';').ok_or_else(bad)?;
    let (lens, rest) = (&key[..semi], &key[semi + 1..]);
    let mut at = 0usize;
    for len in lens.split(|&c| c == b',') {
        if len.is_empty() || len.len() > 9 || !len.iter().all(u8::is_ascii_digit) {
            return Err(bad());
        }
        let n = len.iter().fold(0usize, |n, &d| n * 10 + (d - b'0') as usize);
        if n == 0 || at + n > rest.len() {
            return Err(bad());
        }
        f(&rest[at..at + n]);
        at += n;
    }
    if at != rest.len() {
        return Err(bad());
    }
    Ok(())
}

/// The pieces of a counted run's key, or an error naming a damaged key.
pub fn parse_key(key: &[u8]) -> Result<Vec<&[u8]>, CoreError> {
    let mut pieces = Vec::new();
    for_each_piece(key, |p| pieces.push(p))?;
    Ok(pieces)
}

#[inline]
fn pair(l: u32, r: u32) -> u64 {
    (l as u64) << 32 | r as u64
}

/// Stage-2 merges: (left, right) -> (rank, result), and a bit per token that is the left of
/// some merge, so that most pairs of a run are ruled out without a hash lookup.
#[derive(Default)]
pub struct StageTwo {
    map: FxHashMap<u64, (u32, u32)>,
    lefts: Vec<u64>,
}

impl StageTwo {
    /// Adds `left + right -> result` at `rank`, unless the pair already has a (lower) rank.
    pub fn insert(&mut self, left: u32, right: u32, rank: u32, result: u32) {
        self.map.entry(pair(left, right)).or_insert((rank, result));
        let (word, bit) = (left as usize / 64, left % 64);
        if self.lefts.len() <= word {
            self.lefts.resize(word + 1, 0);
        }
        self.lefts[word] |= 1 << bit;
    }

    /// The (rank, result) of the merge of `left` and `right`, if there is one.
    #[inline]
    pub fn get(&self, left: u32, right: u32) -> Option<(u32, u32)> {
        let word = self.lefts.get(left as usize / 64)?;
        if word >> (left % 64) & 1 == 0 {
            return None;
        }
        self.map.get(&pair(left, right)).copied()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// Runs of at most this many ids are merged by scanning; longer ones through a heap.
const SCAN: usize = 48;
const NONE: u32 = u32::MAX;

/// Applies the stage-2 merges to `ids` (one run's stage-1 ids) in place: lowest rank first,
/// leftmost first on one rank.
pub fn apply_stage_two(merges: &StageTwo, ids: &mut Vec<u32>) {
    apply_stage_two_from(merges, ids, 0)
}

/// `apply_stage_two` on the run that fills `ids` from `from` on (what comes before is left
/// alone): a caller appends a run to its output and merges it there, without a copy.
pub fn apply_stage_two_from(merges: &StageTwo, ids: &mut Vec<u32>, from: usize) {
    let len = ids.len() - from.min(ids.len());
    if len < 2 || merges.is_empty() {
        return;
    }
    if len <= SCAN {
        // Each pair's (rank, result) kept beside it (NONE: not a merge), on the stack, so a
        // join looks up only the two pairs it makes.
        let run = &mut ids[from..];
        let none = (NONE, NONE);
        let mut ranks = [none; SCAN];
        let mut n = len - 1;
        for (i, r) in ranks[..n].iter_mut().enumerate() {
            *r = merges.get(run[i], run[i + 1]).unwrap_or(none);
        }
        // The lowest rank, the leftmost on a tie (`min_by_key` keeps the first minimum).
        while let Some((i, &(r, z))) = ranks[..n].iter().enumerate().min_by_key(|&(_, &(r, _))| r) {
            if r == NONE {
                break;
            }
            run[i] = z;
            run.copy_within(i + 2..n + 1, i + 1);
            ranks.copy_within(i + 1..n, i);
            n -= 1;
            if i > 0 {
                ranks[i - 1] = merges.get(run[i - 1], run[i]).unwrap_or(none);
            }
            if i < n {
                ranks[i] = merges.get(run[i], run[i + 1]).unwrap_or(none);
            }
        }
        // n pairs left: n + 1 ids
        ids.truncate(from + n + 1);
        return;
    }
    // The linked form: a dead cell holds NONE; a heap entry (rank, left cell) is checked when popped.
    let run = &mut ids[from..];
    let n = run.len();
    let mut next: Vec<u32> = (1..=n as u32).collect();
    next[n - 1] = NONE;
    let mut prev: Vec<u32> = (0..n as u32).map(|i| i.wrapping_sub(1)).collect();
    prev[0] = NONE;
    let mut heap = BinaryHeap::new();
    for i in 0..n - 1 {
        if let Some((r, _)) = merges.get(run[i], run[i + 1]) {
            heap.push(Reverse((r, i as u32)));
        }
    }
    while let Some(Reverse((r, i))) = heap.pop() {
        let i = i as usize;
        let j = next[i];
        if run[i] == NONE || j == NONE {
            continue;
        }
        let j = j as usize;
        let Some((rank, z)) = merges.get(run[i], run[j]) else { continue };
        if rank != r {
            continue;
        }
        run[i] = z;
        run[j] = NONE;
        next[i] = next[j];
        if next[j] != NONE {
            prev[next[j] as usize] = i as u32;
        }
        if prev[i] != NONE {
            let h = prev[i] as usize;
            if let Some((r2, _)) = merges.get(run[h], z) {
                heap.push(Reverse((r2, h as u32)));
            }
        }
        if next[i] != NONE {
            if let Some((r2, _)) = merges.get(z, run[next[i] as usize]) {
                heap.push(Reverse((r2, i as u32)));
            }
        }
    }
    let mut kept = from;
    for k in from..ids.len() {
        if ids[k] != NONE {
            ids[kept] = ids[k];
            kept += 1;
        }
    }
    ids.truncate(kept);
}

/// The encoder of a superword version.
pub struct SuperwordEncoder {
    /// Stage 1: the tokens below the transition point, tiktoken's rank rule per piece.
    stage1: RankEncoder,
    /// Every token (and the specials' texts), for decoding.
    full: RankEncoder,
    stage2: StageTwo,
    splitter: Splitter,
    max_words: usize,
}

impl SuperwordEncoder {
    /// `tokens`: (id, bytes) of every ordinary token; those with id < `transition` are stage 1's.
    /// `stage2`: the stage-2 merges (left, right, result) in rank order.
    pub fn new(
        tokens: Vec<(u32, &[u8])>,
        specials: Vec<(String, u32)>,
        pattern: &str,
        transition: u32,
        stage2: &[(u32, u32, u32)],
        max_words: usize,
    ) -> Result<SuperwordEncoder, CoreError> {
        let first: Vec<(u32, &[u8])> = tokens.iter().filter(|t| t.0 < transition).copied().collect();
        let stage1 = RankEncoder::new(first, vec![], Splitter::new(pattern)?)?;
        let full = RankEncoder::new(tokens, specials, Splitter::new(pattern)?)?;
        let mut map = StageTwo::default();
        for (rank, &(l, r, z)) in stage2.iter().enumerate() {
            if full.token_bytes(z).is_none() || full.token_bytes(l).is_none() || full.token_bytes(r).is_none() {
                return Err(CoreError::input(format!("superword merge {rank} names a token that does not exist")));
            }
            map.insert(l, r, rank as u32, z);
        }
        if max_words == 0 {
            return Err(CoreError::input("a superword version needs max_words of at least 1"));
        }
        Ok(SuperwordEncoder { stage1, full, stage2: map, splitter: Splitter::new(pattern)?, max_words })
    }
}

impl Encode for SuperwordEncoder {
    fn kind(&self) -> Kind {
        Kind::SuperwordBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let bytes = text.as_bytes();
        self.stage1.with_pieces(|piece| {
            runs(text, &self.splitter, self.max_words, |run| {
                let from = out.len();
                for &(a, b) in run {
                    piece(&bytes[a..b], out);
                }
                apply_stage_two_from(&self.stage2, out, from);
            })
        })
    }

    /// A counted run (its key, see the module's comment) as encoding segments it: its pieces
    /// by stage 1, then stage 2 over the run, as `encode_into` does for the run in its line.
    fn segment_counted<'k>(&self, key: &'k [u8], out: &mut Vec<u32>) -> Result<&'k [u8], CoreError> {
        let from = out.len();
        self.stage1.with_pieces(|piece| for_each_piece(key, |p| piece(p, out)))?;
        apply_stage_two_from(&self.stage2, out, from);
        let semi = key.iter().position(|&c| c == b';').unwrap_or(0); // for_each_piece found it
        Ok(&key[semi + 1..])
    }

    fn distinct(&self) -> Option<super::Distinct<'_>> {
        Some(super::Distinct::Runs(&self.stage1, &self.stage2, &self.full))
    }

    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        self.full.decode_bytes(ids)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.full.token_bytes(id)
    }

    fn concatenates(&self) -> bool {
        true
    }

    fn vocab_size(&self) -> usize {
        self.full.vocab_size()
    }

    fn id_bound(&self) -> usize {
        self.full.id_bound()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretok::GPT2;

    #[test]
    fn runs_cut_every_max_words_and_at_line_breaks() {
        let s = Splitter::new(GPT2).unwrap();
        let text = "a b c d e f\ng h";
        let mut got = Vec::new();
        runs(text, &s, 4, |r| got.push(text[r[0].0..r[r.len() - 1].1].to_string())).unwrap();
        assert_eq!(got, ["a b c d", " e f", "\n", "g h"]);
        let mut key = String::new();
        run_key(&mut key, "the cat", &[(0, 3), (3, 7)]);
        assert_eq!(key, "3,4;the cat");
        assert_eq!(parse_key(key.as_bytes()).unwrap(), [b"the".as_slice(), b" cat"]);
        assert!(parse_key(b"3,5;the cat").is_err());
    }

    #[test]
    fn stage_two_merges_by_rank_then_leftmost_and_the_heap_agrees_with_the_scan() {
        // 1+1 -> 5 (rank 0), 5+2 -> 6 (rank 1)
        let mut m = StageTwo::default();
        m.insert(1, 1, 0, 5);
        m.insert(5, 2, 1, 6);
        let mut ids = vec![1, 1, 1, 2];
        apply_stage_two(&m, &mut ids);
        assert_eq!(ids, [5, 1, 2]);
        let mut long: Vec<u32> = std::iter::repeat([1, 1, 2]).take(1000).flatten().collect();
        apply_stage_two(&m, &mut long);
        assert_eq!(long, std::iter::repeat(6).take(1000).collect::<Vec<_>>());
        let mut odd: Vec<u32> = vec![1; 1001];
        apply_stage_two(&m, &mut odd);
        assert_eq!(odd.len(), 501);
        assert_eq!(odd[500], 1);
        // behind ids that stay as they are, both forms give the same run
        for run in [vec![1, 1, 1, 2], vec![1, 2, 1, 1, 2, 1], [1, 1, 2].repeat(30), vec![1; 101], vec![2, 1]] {
            let mut alone = run.clone();
            apply_stage_two(&m, &mut alone);
            let mut behind = vec![1, 1, 7];
            behind.extend_from_slice(&run);
            apply_stage_two_from(&m, &mut behind, 3);
            assert_eq!(behind[..3], [1, 1, 7]);
            assert_eq!(behind[3..], alone[..], "{run:?}");
        }
    }
}
