//! The BPE merge loop: from counted words to an ordered list of merges.
//!
//! Phases:
//! 1. index: the distinct words' symbols are laid out in one arena (`Links`); every adjacent
//!    pair gets a slot (its count, weighted by word counts, and the positions where it starts).
//!    A large alphabet's pairs (SuperBPE's stage 2, character-level CJK) are indexed on every
//!    thread, a task per part of the pair table (`index_sharded`): the same merges. There the
//!    positions of pairs too rare to be merged are withheld, found in the arena if they are,
//!    and the pairs a sketch of the counts shows rarer still are left out of the tables
//!    (`pair_sketch`), found in the arena if the floor under the heap falls.
//! 2. merge: pop the best pair from a lazy max-heap of (count, slot), join the pair at each of
//!    its positions that still holds it, and apply the pair-count changes around the joins,
//!    gathered by neighbour token (`neighbours`) so that each neighbour's pairs are looked up
//!    once. A merge costs its occurrences, not its words' length (the arena is swept only for
//!    the pairs left out of the index: once if the floor falls, and for the pairs with an
//!    existing token that a merge onto it makes, a few times a run).
//! 3. finish: count how often each token is used in the final segmentation of the corpus
//!    (also at each requested snapshot size, for several vocabulary sizes from one run).
//!
//! Data structures, chosen for memory first (the number of distinct words is what grows with a
//! corpus): the words' symbols stay in one `u32` arena, words separated by an edge cell (4
//! bytes per symbol, no allocation per word, a symbol's word found from a mark every 16
//! cells); a joined symbol's cell is marked dead and neighbours are found by skipping dead
//! cells. A pair is a `u64` key (left << 32 | right) found through a table of 12-byte entries,
//! the key beside its slot (`pair_table`: one place to read, asked for ahead of the lookups);
//! per slot an `i64` count and its positions (`Positions`): those found when
//! indexing in one array laid out slot by slot (4 bytes each, read in one sweep), those made
//! by later merges in lists of 16-byte nodes of three in one pool; either may hold stale or repeated
//! entries (checked when used, deduplicated then), and the nodes of merged pairs are recycled.
//! Most positions go stale as the merges go on: when about half are, they are dropped
//! (`Positions::compact`), so the nodes stay near what is live. At indexing that is 8 bytes a
//! symbol beside the pair tables (the edges are laid out in the counted words' own arena). The heap holds
//! 12-byte (count, slot) entries, compares token bytes only on equal counts, and is rebuilt
//! from the current counts when it has doubled since it was last built (stale entries would
//! otherwise pile up). It starts with the pairs counted at least a floor of times (enough of
//! them for the merges asked for): on a large corpus most pairs are seen once or twice and never
//! merged; if the best pair in it ever falls below the floor, it is rebuilt with every pair.
//!
//! Tie rule (a total order over the pairs themselves, so the result depends on neither thread
//! count nor input order): the higher pair count wins; on equal counts the pair whose left
//! token's bytes are lexicographically smaller wins; then the smaller right token's bytes.
//! When the merged bytes already exist as a token (the same string reached by another split)
//! the merge is recorded with that token as its result and no new token is added.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

/// How often the merge loop reports progress at most: each report takes the caller's lock (the
/// GIL, to check for Ctrl-C), which another thread may be holding (`tokreg train` opens the
/// registry while it trains), so a report per few merges would keep the loop waiting for it.
const REPORT_EVERY: Duration = Duration::from_millis(25);

use rustc_hash::FxHashMap;

use super::neighbours::{Neighbours, BATCH};
use super::pair_sketch::{PairSketch, TOP};
use super::pair_table::{pair_hash, PairTable};
use crate::count::Counts;
use crate::error::CoreError;
use crate::memory::prefetch;

/// One learned merge: `left + right -> result`, chosen when the pair occurred `count` times.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    pub left: u32,
    pub right: u32,
    pub result: u32,
    pub count: u64,
}

/// The state at one requested vocabulary size: the first `merges` merges, and the use count
/// of each of the first `tokens` tokens in the segmentation they give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    pub tokens: usize,
    pub merges: usize,
    pub token_counts: Vec<u64>,
}

#[derive(Debug)]
pub struct TrainOutput {
    /// token id -> bytes (the alphabet first, then merge results in the order they appeared)
    pub tokens: Vec<Vec<u8>>,
    /// token id -> number of uses in the final segmentation of the training words
    pub token_counts: Vec<u64>,
    /// merges in rank order
    pub merges: Vec<Merge>,
    /// one per requested snapshot size, in the order asked
    pub snapshots: Vec<Snapshot>,
}

/// What to learn.
#[derive(Clone, Debug, Default)]
pub struct TrainConfig {
    /// Stop at this many tokens (alphabet + merge results).
    pub target_tokens: usize,
    /// Pairs seen fewer times than this are never merged.
    pub min_frequency: u64,
    /// Never make a token longer than this many bytes (0: no limit).
    pub max_token_bytes: usize,
    /// Smaller vocabulary sizes to snapshot on the way (see `Snapshot`).
    pub snapshots: Vec<usize>,
}

/// Distinct words as symbol ids, back to back, each with its count.
#[derive(Clone, Debug, Default)]
pub struct Words {
    pub arena: Vec<u32>,
    /// End of word i in `arena` (its start is the previous end).
    pub ends: Vec<usize>,
    pub counts: Vec<u64>,
}

impl Words {
    pub fn push(&mut self, syms: impl IntoIterator<Item = u32>, count: u64) {
        self.arena.extend(syms);
        self.ends.push(self.arena.len());
        self.counts.push(count);
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// The arena capacity that lets the trainer lay out `words` words of `symbols` symbols with
    /// an edge before and after each in place (see `Links::new`).
    pub fn edged_capacity(symbols: usize, words: usize) -> usize {
        symbols + words + 1
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[inline]
fn key(l: u32, r: u32) -> u64 {
    (l as u64) << 32 | r as u64
}

/// A binary max-heap of (count, slot) ordered by the tie rule; it needs the token bytes to
/// compare, which std's `BinaryHeap` cannot be given. Entries are 12 bytes (the count as two
/// `u32`s: a `(u64, u32)` would be padded to 16).
///
/// It is lazy: a pair whose count grew is pushed again, one whose count fell keeps its old
/// entry, and a popped entry whose count is no longer the pair's goes back with the current
/// count. Every mergeable pair so has an entry at least its count, so the first entry popped
/// at its pair's current count is the best pair by the tie rule, whatever stale entries the
/// heap holds: rebuilding it from the current counts changes nothing but its size.
struct Heap {
    v: Vec<Entry>,
}

type Entry = (u32, u32, u32);

#[inline]
fn pack(count: u64, slot: u32) -> Entry {
    ((count >> 32) as u32, count as u32, slot)
}

#[inline]
fn unpack(e: Entry) -> (u64, u32) {
    ((e.0 as u64) << 32 | e.1 as u64, e.2)
}

struct Order<'a> {
    tokens: &'a [Vec<u8>],
    /// Each token's `head`: most ties are told apart by these alone, without reaching for the
    /// bytes.
    heads: &'a [u64],
    pairs: &'a [u64],
}

/// A token's first 7 bytes as a big-endian number (zero-padded), its length (8 for 8 or more)
/// in the low byte. Heads order like the tokens' bytes whenever they differ, and two tokens
/// with the same head are the same, or both 8 bytes or longer with the same first 7: a
/// shorter token's padding can only equal a longer one's bytes when it is a prefix of it, and
/// then its length is the smaller. So the bytes are read only for long tokens that share 7.
fn head(t: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = t.len().min(7);
    b[..n].copy_from_slice(&t[..n]);
    u64::from_be_bytes(b) | t.len().min(8) as u64
}

impl Order<'_> {
    /// Whether `x` is a better merge than `y`.
    #[inline]
    fn better(&self, x: (u64, u32), y: (u64, u32)) -> bool {
        match x.0.cmp(&y.0) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => {
                let (kx, ky) = (self.pairs[x.1 as usize], self.pairs[y.1 as usize]);
                // Tokens are distinct byte strings: the same id is the same bytes (most ties
                // between pairs share their left token).
                let cmp = |a: u64, b: u64| {
                    if a == b {
                        return Ordering::Equal;
                    }
                    let (a, b) = (a as usize, b as usize);
                    self.heads[a]
                        .cmp(&self.heads[b])
                        .then_with(|| self.tokens[a].as_slice().cmp(self.tokens[b].as_slice()))
                };
                cmp(kx >> 32, ky >> 32).then_with(|| cmp(kx & 0xFFFF_FFFF, ky & 0xFFFF_FFFF)) == Ordering::Less
            }
        }
    }
}

impl Heap {
    fn push(&mut self, e: (u64, u32), o: &Order) {
        self.v.push(pack(e.0, e.1));
        let i = self.v.len() - 1;
        self.sift_up(i, e, o);
    }

    /// Moves `x`, which belongs at `i`, up to its place.
    fn sift_up(&mut self, mut i: usize, x: (u64, u32), o: &Order) {
        while i > 0 {
            let p = (i - 1) / 2;
            if !o.better(x, unpack(self.v[p])) {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = pack(x.0, x.1);
    }

    /// Takes the best entry out. The hole it leaves goes down to a leaf through the better child
    /// of each level (one comparison a level), and the last entry, put there, goes up (rarely
    /// far: it came from the bottom): about half the comparisons of sifting the last entry down
    /// from the root, which costs two a level. The comparisons are what costs (on equal counts
    /// they read the pairs' tokens): at 1 MB, where most pairs are counted once or twice, they
    /// were a third of the trainer's instructions. The entries end where sifting down would
    /// put them or elsewhere; either is a heap, and which entry pops first never depends on
    /// the layout (see `Heap`).
    fn pop(&mut self, o: &Order) -> Option<(u64, u32)> {
        let top = unpack(*self.v.first()?);
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(top);
        }
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && o.better(unpack(self.v[l + 1]), unpack(self.v[l])) { l + 1 } else { l };
            self.v[i] = self.v[c];
            i = c;
        }
        self.sift_up(i, unpack(last), o);
        Some(top)
    }

    fn sift_down(&mut self, mut i: usize, o: &Order) {
        let n = self.v.len();
        let x = unpack(self.v[i]);
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let c = if l + 1 < n && o.better(unpack(self.v[l + 1]), unpack(self.v[l])) { l + 1 } else { l };
            if !o.better(unpack(self.v[c]), x) {
                break;
            }
            self.v[i] = self.v[c];
            i = c;
        }
        self.v[i] = pack(x.0, x.1);
    }

    fn heapify(&mut self, o: &Order) {
        for i in (0..self.v.len() / 2).rev() {
            self.sift_down(i, o);
        }
    }
}

/// How many positions ahead the merge loop asks for the cells it will read (`prefetch`).
const LOOKAHEAD: usize = 8;

/// A cell whose symbol was joined into its left neighbour.
const DEAD: u32 = u32::MAX;
/// The cell before and after every word.
const EDGE: u32 = u32::MAX - 1;
/// No node (the end of a position list).
const NIL: u32 = u32::MAX;

/// Slot flags: a pair never to merge, one whose count the current merge raised, and one whose
/// positions found when indexing were not laid out (see `Index`).
const BANNED: u8 = 1;
const GROWN: u8 = 2;
const WITHHELD: u8 = 4;

/// The fewest nodes at which stale positions are dropped (`Positions::compact`): 64 MB of
/// them. Compacting pays a cache miss or two per position: from 1 MB of nodes on it cut the
/// peak of multilingual 20 MB by 9 MB (of 168) but cost it 10-20% more CPU in the merge loop,
/// where that size is short of time and not of memory; it is for the larger corpora.
const COMPACT_NODES: usize = 1 << 22;

/// Cells per mark (see `Links::marks`).
const MARK: usize = 16;

/// The words as one arena of cells: `EDGE`, word 0's symbols, `EDGE`, word 1's symbols, `EDGE`,
/// ... A join keeps the left cell and marks the right one `DEAD`, so a word's first cell is
/// always live, and a symbol's neighbours are the nearest live cells on either side (the scan
/// crosses only the dead tail of one token, a few cells). 4 bytes per symbol and a quarter
/// byte for the marks: linked `prev`/`next` arrays and a word id per cell would make it 16.
struct Links {
    sym: Vec<u32>,
    /// The number of edges before every `MARK`-th cell: the word of cell `p` is the number of
    /// edges before it, less one, found from the mark below `p` and a scan of at most
    /// `MARK - 1` cells (one or two cache lines).
    marks: Vec<u32>,
}

impl Links {
    /// Takes the words' arena (the words keep their counts), laying the edges out in it in
    /// place: each word moves right by the edges before it, the last word first. A second
    /// array beside it would cost 4 bytes a symbol more at indexing's peak, and freed memory is
    /// not always given back to the system (24 MB of 140 at multilingual 20 MB). The arena
    /// needs room for one cell more per word and one (see `Words::edged_capacity`), or it grows.
    fn new(words: &mut Words) -> Result<Links, CoreError> {
        let n = words.arena.len() + words.len() + 1;
        if n >= EDGE as usize {
            return Err(CoreError::input(
                "the counted pieces hold more than 4 billion symbols; lower --memory-limit so fewer are kept",
            ));
        }
        let ends = std::mem::take(&mut words.ends);
        let mut sym = std::mem::take(&mut words.arena);
        sym.resize(n, EDGE);
        // Word i (ending at ends[i] before the move) moves right by i + 1 cells: the edge
        // opening word 0 and the edge after each of the words before it.
        for i in (0..ends.len()).rev() {
            let start = if i == 0 { 0 } else { ends[i - 1] };
            let (end, shift) = (ends[i], i + 1);
            sym.copy_within(start..end, start + shift);
            sym[end + shift] = EDGE;
        }
        sym[0] = EDGE;
        drop(ends);
        let mut marks = Vec::with_capacity(n.div_ceil(MARK));
        let mut edges = 0u32;
        for block in sym.chunks(MARK) {
            marks.push(edges);
            edges += block.iter().filter(|&&x| x == EDGE).count() as u32;
        }
        Ok(Links { sym, marks })
    }

    /// The word of symbol cell `p`.
    #[inline]
    fn word(&self, p: usize) -> usize {
        self.edges_before(p) - 1
    }

    /// Calls `f(position, word, left, right)` for each adjacent pair of symbols within a word
    /// that starts in the cells `range`, in the cells' order (edges separate the words; the
    /// first cell, an edge, opens word 0). The pairs start at cells `0..sym.len() - 1`.
    #[inline(always)]
    fn each_pair(&self, range: std::ops::Range<usize>, mut f: impl FnMut(usize, usize, u32, u32)) {
        let sym = &self.sym;
        // the word of the cells from the range's start until the next edge
        let mut w = if range.is_empty() { 0 } else { self.edges_before(range.start).wrapping_sub(1) };
        for p in range {
            let (x, y) = (sym[p], sym[p + 1]);
            if x == EDGE {
                w = w.wrapping_add(1);
                continue;
            }
            if y != EDGE {
                f(p, w, x, y);
            }
        }
    }

    /// The number of edges before cell `p` (each opens the next word; the first, word 0).
    #[inline]
    fn edges_before(&self, p: usize) -> usize {
        let from = p / MARK * MARK;
        self.marks[p / MARK] as usize + self.sym[from..p].iter().filter(|&&x| x == EDGE).count()
    }

    /// How often each of `n` tokens is used in the words as they stand, each word counted
    /// `word_counts` times: a sweep of the cells, in parts on every thread of the pool for a
    /// large arena (the parts' counts are added: the same counts).
    fn token_counts(&self, word_counts: &[u64], n: usize) -> Vec<u64> {
        use rayon::prelude::*;
        let count = |range: std::ops::Range<usize>| {
            let mut tc = vec![0u64; n];
            if range.is_empty() {
                return tc;
            }
            let mut edges = self.edges_before(range.start);
            for &x in &self.sym[range] {
                if x == EDGE {
                    edges += 1;
                } else if x < EDGE {
                    tc[x as usize] += word_counts[edges - 1];
                }
            }
            tc
        };
        let len = self.sym.len();
        let parts = if len >= PARALLEL_INDEX_CELLS * 16 { 2 * rayon::current_num_threads() } else { 1 };
        let step = len.div_ceil(parts);
        (0..parts).into_par_iter().map(|j| count((j * step).min(len)..((j + 1) * step).min(len))).reduce(
            || vec![0u64; n],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        )
    }

    /// The nearest live cell after `p`: a symbol, or the `EDGE` closing the word.
    #[inline]
    fn after(&self, p: usize) -> usize {
        let mut q = p + 1;
        while self.sym[q] == DEAD {
            q += 1;
        }
        q
    }

    /// The nearest live cell before `p`: a symbol, or the `EDGE` opening the word.
    #[inline]
    fn before(&self, p: usize) -> usize {
        let mut q = p - 1;
        while self.sym[q] == DEAD {
            q -= 1;
        }
        q
    }
}

/// Pair key -> slot (`PairTable`s). The entries are split over a power of two of tables by bits
/// 40 and up of the key's hash (which a table does not use for its places, the lowest bits), so
/// that the index can fill them in parallel, a table per task (`index_sharded`); one table when
/// indexed on one thread.
struct SlotMap {
    t: Vec<PairTable>,
    /// tables - 1
    mask: usize,
}

#[inline]
fn hash(k: impl std::hash::Hash) -> u64 {
    use std::hash::BuildHasher;
    rustc_hash::FxBuildHasher.hash_one(k)
}

/// The table of a key's hash among `mask + 1` (see `SlotMap`).
#[inline]
fn table_of(h: u64, mask: usize) -> usize {
    (h >> 40) as usize & mask
}

impl SlotMap {
    fn one() -> SlotMap {
        SlotMap { t: vec![PairTable::default()], mask: 0 }
    }

    #[inline]
    fn get(&self, k: u64) -> Option<u32> {
        let h = pair_hash(k);
        self.t[table_of(h, self.mask)].get(k, h)
    }

    /// Adds slot `s`, whose key `k` is not in the table.
    #[inline]
    fn insert(&mut self, k: u64, s: u32) {
        let h = pair_hash(k);
        self.t[table_of(h, self.mask)].insert_unique(k, h, s);
    }

    /// Asks for the place of key `k` ahead of its lookup (see `PairTable`).
    #[inline]
    fn prefetch(&self, k: u64) {
        let h = pair_hash(k);
        self.t[table_of(h, self.mask)].prefetch(h);
    }
}

/// The slot of pair `k`, a new one (counted 0, no positions, no flags) when it has none.
#[inline]
fn slot_for(
    k: u64,
    slot_of: &mut SlotMap,
    pairs: &mut Vec<u64>,
    counts: &mut Vec<i64>,
    head: &mut Vec<u32>,
    flags: &mut Vec<u8>,
) -> usize {
    match slot_of.get(k) {
        Some(s) => s as usize,
        None => {
            pairs.push(k);
            counts.push(0);
            head.push(NIL);
            flags.push(0);
            slot_of.insert(k, (pairs.len() - 1) as u32);
            pairs.len() - 1
        }
    }
}

/// What indexing gives the merge loop: every adjacent pair's slot (`slot_of`, `pairs`), its
/// count weighted by the words' counts, and its positions (`first`, slot by slot, ascending
/// within a slot; slot `s`'s are `first[first_range[s].0..first_range[s].1]`).
///
/// Which slot a pair gets is of no consequence: the merge loop picks pairs by the tie rule, a
/// total order over the pairs themselves, and reads a slot's positions as a set in ascending
/// order. So the serial index (slots in order of first sight) and the parallel one (slots by
/// table, then first sight within it) give the same merges, counts and snapshots.
///
/// The parallel index lays out only the positions of the pairs counted at least the heap's
/// first `floor` times: the others' are withheld (their ranges empty; `withheld_below` is the
/// floor, 0 when nothing is withheld). On a large alphabet most pairs are counted once or twice
/// and never merged (SuperBPE's stage 2 at 32k: 784k pairs, 13k of them at the floor of 24 or
/// above, with a third of the positions), so most cells skip the pair's second lookup and the
/// scattered write. A withheld pair can still be merged: one raised by a merge onto an existing
/// token, or any pair once the floor falls; the merge loop then finds its positions in the
/// arena (see `live_positions`, `recover`).
///
/// The parallel index also leaves out of its tables the pairs that a sketch of the counts
/// (`PairSketch`) shows are counted fewer times than `untracked_below` (0: none left out), a
/// bound at or below the floor: those pairs have no slot and no count, and a merge that lowers
/// one leaves it out (its count only falls, so it stays below the floor). A merge that makes
/// a pair with a new token leaves it out too when it is counted fewer times than the floor
/// (only a merge onto an existing token can raise such a pair again: the pairs with that token
/// it touches are then counted in the arena, `recount_new`). Should the floor fall, every pair
/// left out gets its slot, count and positions from a sweep of the arena (`recover`), and the
/// merge loop goes on as if they had been there all along: the pair chosen is the same.
struct Index {
    slot_of: SlotMap,
    pairs: Vec<u64>,
    counts: Vec<i64>,
    first: Vec<u32>,
    first_range: Vec<(u32, u32)>,
    /// The heap's first floor (see `heap_floor`).
    floor: u64,
    withheld_below: u64,
    /// How many positions were withheld.
    withheld: usize,
    untracked_below: u64,
}

/// Cells from which a large alphabet's pairs are indexed on every thread of the pool (below,
/// the tasks would cost more than they save; few in tests, so that small inputs take that path).
const PARALLEL_INDEX_CELLS: usize = if cfg!(test) { 64 } else { 1 << 16 };

/// Phase 1, the index (see `Index`). A small alphabet goes through its direct table on one
/// thread (a lookup there is a cache hit: byte-level BPE); a large one through the hash tables,
/// which cost a hash, a probe and a cache miss or two per cell, on every thread of the pool.
/// `floor(counts)` is the heap's first floor for the pairs' counts.
fn index(
    links: &Links,
    word_counts: &[u64],
    alphabet: usize,
    wanted: u64,
    floor: impl Fn(&mut dyn Iterator<Item = i64>) -> u64,
) -> Index {
    let threads = rayon::current_num_threads();
    if alphabet > DIRECT_ALPHABET && threads > 1 && links.sym.len() >= PARALLEL_INDEX_CELLS {
        return index_sharded(links, word_counts, threads.next_power_of_two(), wanted, floor);
    }
    let mut slot_of = SlotMap::one();
    let mut pairs: Vec<u64> = Vec::new();
    let mut counts: Vec<i64> = Vec::new();
    // Two passes over the cells: the first finds every pair's slot, its count and its number
    // of positions; the second lays the positions out slot by slot (a counting sort), looking
    // each pair up again rather than keeping a slot per cell (4 bytes a cell at the peak).
    let mut sizes: Vec<u32> = Vec::new();
    let mut direct = Direct::new(alphabet);
    links.each_pair(0..links.sym.len() - 1, |_, w, x, y| {
        let k = key(x, y);
        let at = direct.at(x, y);
        let known = match at {
            Some(i) => Some(direct.slot[i]).filter(|&s| s != NIL),
            None => slot_of.get(k),
        };
        let s = match known {
            Some(s) => s as usize,
            None => {
                pairs.push(k);
                counts.push(0);
                sizes.push(0);
                match at {
                    Some(i) => direct.slot[i] = (pairs.len() - 1) as u32,
                    None => slot_of.insert(k, (pairs.len() - 1) as u32),
                }
                pairs.len() - 1
            }
        };
        counts[s] += word_counts[w] as i64;
        sizes[s] += 1;
    });
    let mut first_range = Vec::with_capacity(sizes.len());
    let mut start = 0u32;
    for n in sizes.iter_mut() {
        first_range.push((start, start + *n));
        start += std::mem::replace(n, start);
    }
    let mut first = vec![0u32; start as usize];
    links.each_pair(0..links.sym.len() - 1, |p, _, x, y| {
        let s = match direct.at(x, y) {
            Some(i) => direct.slot[i],
            None => slot_of.get(key(x, y)).expect("every pair has its slot from the first pass"),
        } as usize;
        first[sizes[s] as usize] = p as u32;
        sizes[s] += 1;
    });
    drop(sizes);
    // The merge loop finds every pair through the hash table.
    for &s in direct.slot.iter().filter(|&&s| s != NIL) {
        slot_of.insert(pairs[s as usize], s);
    }
    let floor = floor(&mut counts.iter().copied());
    Index { slot_of, pairs, counts, first, first_range, floor, withheld_below: 0, withheld: 0, untracked_below: 0 }
}

/// One table's share of the parallel index: its pairs in order of first sight (local slots),
/// their counts, and their numbers of positions (then the first pass's task's next place for
/// each in `first`), and for each cut of the cells between the second pass's tasks, the
/// numbers of positions before it.
struct Shard {
    t: PairTable,
    pairs: Vec<u64>,
    counts: Vec<i64>,
    sizes: Vec<u32>,
    before: Vec<Vec<u32>>,
}

/// The most tasks of the index's second pass (see `index_sharded`): each but the first costs
/// 4 bytes a pair while indexing.
const SECOND_PASS_TASKS: usize = 4;
/// `index` on `tables` tasks (a power of two), task `s` taking the pairs of table `s` (see
/// `SlotMap`): each reads every cell (a sequential sweep, and a hash per cell) but looks up
/// and counts only its own pairs, the part that costs. Its slots follow the tables before it,
/// so nothing is merged after. The second pass lays out only the positions of pairs at the
/// floor or above (see `Index`), split by cell: each task sweeps its part of the cells and
/// writes a slot's positions after those of the parts before it, which the first pass counted
/// as it crossed the cuts; a cell is looked up only when its pair's hash has its bit set in a
/// bit set of the kept pairs' hashes, small enough to stay in cache. The positions are those
/// of the serial index, slot by slot in the cells' order. Before both, a sketch of the counts
/// (one sweep on every thread) tells which pairs are left out (see `Index`): most of them,
/// which then cost the first pass a hash and a read of the sketch, not a place in a table.
fn index_sharded(
    links: &Links,
    word_counts: &[u64],
    tables: usize,
    wanted: u64,
    floor: impl Fn(&mut dyn Iterator<Item = i64>) -> u64,
) -> Index {
    use rayon::prelude::*;
    let mask = tables - 1;
    // The sketch, and the bound below which pairs are left out: the floor its buckets give for
    // twice the pairs the heap starts with (a bucket is at least its pairs' count, and shared
    // ones add up: so that the pairs at the heap's own floor are kept), if above 1.
    let last = links.sym.len().saturating_sub(1);
    let sketch = PairSketch::build(last, |range, f| {
        links.each_pair(range, |_, w, x, y| f(pair_hash(key(x, y)), word_counts[w]));
    });
    let histogram = sketch.histogram();
    let bound = floor_of(&histogram, wanted.saturating_mul(8));
    let untracked_below = if bound >= 2 { bound } else { 0 };
    // (nothing left out: no read of the sketch a cell)
    let tracked = |h: u64| untracked_below == 0 || sketch.bound(h) >= untracked_below;
    // Calls `f(position, word, key, hash, ahead)` for each pair of table `s` that starts in the
    // cells `range`, in the cells' order, with the hash of the pair `LOOKAHEAD` calls later (if
    // any in its block of cells), so that `f` asks for its place in the table ahead (see
    // `PairTable`).
    type Each<'f> = &'f mut dyn FnMut(usize, usize, u64, u64, Option<u64>);
    let each = |s: usize, range: std::ops::Range<usize>, f: Each| {
        const BLOCK: usize = 1024;
        let mut block: Vec<(u32, u32, u64, u64)> = Vec::with_capacity(BLOCK);
        let mut flush = |block: &mut Vec<(u32, u32, u64, u64)>| {
            for (i, &(p, w, k, h)) in block.iter().enumerate() {
                f(p as usize, w as usize, k, h, block.get(i + LOOKAHEAD).map(|x| x.3));
            }
            block.clear();
        };
        links.each_pair(range, |p, w, x, y| {
            let k = key(x, y);
            let h = pair_hash(k);
            if table_of(h, mask) == s && tracked(h) {
                block.push((p as u32, w as u32, k, h));
                if block.len() == BLOCK {
                    flush(&mut block);
                }
            }
        });
        flush(&mut block);
    };
    // About how many pairs each table will hold (the keys' hashes spread them evenly), so that
    // the tables and their slots' arrays are sized once (a quarter over: buckets shared by
    // pairs kept count once, and a bucket holds at most one pair in most cases). The
    // estimate sizes them and nothing else: no slot, count or position depends on it.
    let expected = if untracked_below > 0 {
        histogram[untracked_below as usize..].iter().sum::<u64>() as usize
    } else {
        sketch.distinct(&histogram)
    };
    let per_table = (expected + expected / 4) / tables;
    // The second pass's parts of the cells (by the position of a pair's first cell).
    let parts = rayon::current_num_threads().clamp(1, SECOND_PASS_TASKS);
    let cuts: Vec<usize> = (0..=parts).map(|j| j * last / parts).collect();
    let mut shards: Vec<Shard> = (0..tables)
        .into_par_iter()
        .map(|s| {
            let mut d = Shard {
                t: PairTable::with_capacity(per_table),
                pairs: Vec::with_capacity(per_table),
                counts: Vec::with_capacity(per_table),
                sizes: Vec::with_capacity(per_table),
                before: Vec::with_capacity(parts - 1),
            };
            // Part after part, the positions counted so far kept at each cut.
            for j in 0..parts {
                if j > 0 {
                    d.before.push(d.sizes.clone());
                }
                each(s, cuts[j]..cuts[j + 1], &mut |_, w, k, h, ahead| {
                    if let Some(ah) = ahead {
                        d.t.prefetch(ah);
                    }
                    let i = match d.t.get(k, h) {
                        Some(i) => i as usize,
                        None => {
                            d.pairs.push(k);
                            d.counts.push(0);
                            d.sizes.push(0);
                            let i = d.pairs.len() - 1;
                            d.t.insert_unique(k, h, i as u32);
                            i
                        }
                    };
                    d.counts[i] += word_counts[w] as i64;
                    d.sizes[i] += 1;
                });
            }
            d
        })
        .collect();
    // (At the bound or above: the floor among the pairs kept is the floor among all when it is
    // there; below it, pairs left out might be needed at once, so it is the bound.)
    let floor = floor(&mut shards.iter().flat_map(|d| d.counts.iter().copied())).max(untracked_below);
    drop(sketch);
    let kept = |c: i64| c as u64 >= floor;
    let mut withheld = 0usize;
    // 32 bits per kept pair, so that few other pairs share one, and at most 1 MB, a core's L2
    // (with more kept pairs than that holds, more cells are looked up for nothing).
    let kept_pairs = shards.iter().map(|d| d.counts.iter().filter(|&&c| kept(c)).count()).sum::<usize>();
    let bits = (kept_pairs * 32).next_power_of_two().clamp(64, 1 << 23);
    let mut kept_hashes = vec![0u64; bits / 64];
    let bit = |h: u64| (h as usize) & (bits - 1);
    for d in &shards {
        for (&k, _) in d.pairs.iter().zip(&d.counts).filter(|&(_, &c)| kept(c)) {
            let b = bit(pair_hash(k));
            kept_hashes[b / 64] |= 1 << (b % 64);
        }
    }
    let maybe_kept = |h: u64| {
        let b = bit(h);
        kept_hashes[b / 64] & 1 << (b % 64) != 0
    };
    // Slots laid out table after table, and each kept pair's positions in a range of `first`,
    // part after part; `place[j][s]`: task j's next place for the local slots of table s.
    let n: usize = shards.iter().map(|d| d.pairs.len()).sum();
    let mut first_range = Vec::with_capacity(n);
    let mut place: Vec<Vec<Vec<u32>>> = (0..parts).map(|_| Vec::with_capacity(tables)).collect();
    let mut start = 0u32;
    for d in shards.iter_mut() {
        let (mut sizes, mut before) = (std::mem::take(&mut d.sizes), std::mem::take(&mut d.before));
        for b in before.iter_mut() {
            b.resize(sizes.len(), 0);
        }
        for (i, (size, &c)) in sizes.iter_mut().zip(&d.counts).enumerate() {
            if !kept(c) {
                withheld += *size as usize;
                *size = 0;
            }
            let at = start;
            start += *size;
            first_range.push((at, start));
            *size = at;
            for b in before.iter_mut() {
                b[i] += at;
            }
        }
        place[0].push(sizes);
        for (j, b) in before.into_iter().enumerate() {
            place[j + 1].push(b);
        }
    }
    let first: Vec<AtomicU32> = (0..start).map(|_| AtomicU32::new(0)).collect();
    place.into_par_iter().enumerate().for_each(|(j, mut place)| {
        // (position, key, hash) of the candidates of a block of cells, looked up `LOOKAHEAD`
        // after their place in the table was asked for
        const BLOCK: usize = 1024;
        let mut block: Vec<(u32, u64, u64)> = Vec::with_capacity(BLOCK);
        let mut flush = |block: &mut Vec<(u32, u64, u64)>| {
            for (i, &(p, k, h)) in block.iter().enumerate() {
                if let Some(&(_, _, ah)) = block.get(i + LOOKAHEAD) {
                    shards[table_of(ah, mask)].t.prefetch(ah);
                }
                let s = table_of(h, mask);
                let d = &shards[s];
                // (a pair left out has no slot: one whose hash shares a bit with kept ones)
                let Some(i) = d.t.get(k, h) else { continue };
                let i = i as usize;
                if kept(d.counts[i]) {
                    let at = &mut place[s][i];
                    first[*at as usize].store(p, AtomicOrdering::Relaxed);
                    *at += 1;
                }
            }
            block.clear();
        };
        links.each_pair(cuts[j]..cuts[j + 1], |p, _, x, y| {
            let k = key(x, y);
            let h = pair_hash(k);
            if maybe_kept(h) {
                block.push((p as u32, k, h));
                if block.len() == BLOCK {
                    flush(&mut block);
                }
            }
        });
        flush(&mut block);
    });
    let first: Vec<u32> = first.into_iter().map(AtomicU32::into_inner).collect();
    // Local slots to global ones (the tables' hashes are of the keys, which do not move).
    let mut offset = 0u32;
    let offsets: Vec<u32> = shards
        .iter()
        .map(|d| {
            let o = offset;
            offset += d.pairs.len() as u32;
            o
        })
        .collect();
    shards.par_iter_mut().zip(offsets).for_each(|(d, off)| {
        for i in d.t.slots_mut() {
            *i += off;
        }
    });
    // One slot array from the tables': the first table's grown (in place where the allocator
    // can) and each other's freed once appended, rather than a copy beside them all (16 bytes
    // a pair more at the peak).
    let mut shards = shards.into_iter();
    let d = shards.next().expect("at least one table");
    let (mut pairs, mut counts, mut t) = (d.pairs, d.counts, vec![d.t]);
    pairs.reserve_exact(n - pairs.len());
    counts.reserve_exact(n - counts.len());
    for d in shards {
        pairs.extend_from_slice(&d.pairs);
        counts.extend_from_slice(&d.counts);
        t.push(d.t);
    }
    // What the tasks freed (the tables' and arrays' smaller sizes as they grew, the tables'
    // counts of positions) stays in their threads' malloc arenas, which the merge loop, on this
    // thread, does not allocate from: given back, so that its memory does not come on top.
    crate::memory::give_back_memory();
    let withheld_below = if withheld > 0 { floor } else { 0 };
    Index {
        slot_of: SlotMap { t, mask },
        pairs,
        counts,
        first,
        first_range,
        floor,
        withheld_below,
        withheld,
        untracked_below,
    }
}

/// Alphabets up to this size index their pairs in a direct table (`Direct`) rather than the hash
/// table: byte-level BPE's 256 bytes (a 256 KB table), or a character-level alphabet of Latin
/// text.
const DIRECT_ALPHABET: usize = 1024;

/// The slots of the pairs of two symbols of the alphabet, `x * n + y` -> slot (`NIL`: none yet),
/// while indexing: every cell looks its pair up twice there, and a table of at most a few MB
/// answers from cache where the hash table costs a hash, a probe and a key compare (a third of
/// indexing's time at 20 MB of prose). Afterwards its slots go to the hash table.
struct Direct {
    n: usize,
    slot: Vec<u32>,
}

impl Direct {
    fn new(alphabet: usize) -> Direct {
        let n = if alphabet <= DIRECT_ALPHABET { alphabet } else { 0 };
        Direct { n, slot: vec![NIL; n * n] }
    }

    /// The entry of pair (x, y), if both are symbols of the alphabet.
    #[inline]
    fn at(&self, x: u32, y: u32) -> Option<usize> {
        let (x, y) = (x as usize, y as usize);
        (x < self.n && y < self.n).then_some(x * self.n + y)
    }
}

/// Token bytes -> id, 4 bytes an entry: the bytes are read from the tokens themselves rather
/// than copied into the table's keys.
#[derive(Default)]
struct TokenIds {
    t: hashbrown::HashTable<u32>,
}

impl TokenIds {
    fn get(&self, bytes: &[u8], tokens: &[Vec<u8>]) -> Option<u32> {
        self.t.find(hash(bytes), |&i| tokens[i as usize] == bytes).copied()
    }

    /// Maps token `id`'s bytes to `id` (a later token with the same bytes replaces an earlier one).
    fn put(&mut self, id: u32, tokens: &[Vec<u8>]) {
        let bytes = &tokens[id as usize];
        match self.t.find_mut(hash(bytes), |&i| tokens[i as usize] == *bytes) {
            Some(i) => *i = id,
            None => {
                self.t.insert_unique(hash(bytes), id, |&i| hash(&tokens[i as usize]));
            }
        }
    }
}

/// Every pair's positions. Those found when indexing lie slot by slot in one array of 4-byte
/// positions (`first`, in ascending order within a slot: a merge reads them in one sequential
/// sweep); those a merge creates later go to lists of 16-byte nodes (`Node`) in one pool, a list per
/// slot, and the nodes of a merged pair go back to a free list that the next pushes reuse.
/// (Recycling also the lists of pairs whose count fell to zero saved 2-4% of the peak and cost
/// 15-25% of the merge time: not done.) One `Vec` per pair would cost a 24-byte header and an
/// allocation each, for pairs most of which hold one or two; linked nodes for every position
/// (as before) cost twice the memory of `first` and a cache miss per position.
struct Positions {
    /// The positions found when indexing, slot by slot.
    first: Vec<u32>,
    /// slot -> its range in `first` (slots made after indexing have none; emptied when drained)
    first_range: Vec<(u32, u32)>,
    /// Positions held in nodes, and about how many of them, and of `first`'s, have gone stale
    /// since they were last compacted (counted as the pair counts fall: a guess, used only to
    /// tell when compacting is worth its cost).
    held: usize,
    stale_nodes: usize,
    stale_first: usize,
    /// node -> up to `PER_NODE` positions (`NIL` past the last), then the next node
    nodes: Vec<Node>,
    /// slot -> first node
    head: Vec<u32>,
    free: u32,
}

/// A node of a position list: `PER_NODE` positions filled in order (`NIL` where empty), then
/// the next node. Walking a list costs a cache miss per node, and a merge of a pair made by
/// earlier merges walks its list first: three positions a node make a third of the misses of
/// one (multilingual 20 MB: a third of the merge loop's time was that walk), for the same 8
/// bytes a position in a full node (a list's newest node may be part empty).
type Node = [u32; PER_NODE + 1];
const PER_NODE: usize = 3;

impl Positions {
    fn push(&mut self, slot: usize, pos: u32) {
        self.held += 1;
        let h = self.head[slot];
        if h != NIL {
            let node = &mut self.nodes[h as usize];
            if let Some(room) = node[..PER_NODE].iter_mut().find(|p| **p == NIL) {
                *room = pos;
                return;
            }
        }
        let mut node = [NIL; PER_NODE + 1];
        node[0] = pos;
        node[PER_NODE] = h;
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize][PER_NODE];
            self.nodes[i as usize] = node;
            i
        } else {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        };
        self.head[slot] = i;
    }

    /// Empties a slot's positions into `out`, its nodes to the free list. They come in
    /// ascending runs: those found when indexing, then those of each merge that pushed to the
    /// slot, oldest first (a merge pushes in ascending order, and a node fills in order), so
    /// that they are most often one run, in order already. `chain` is scratch.
    fn drain(&mut self, slot: usize, out: &mut Vec<u32>, chain: &mut Vec<u32>) {
        if let Some(r) = self.first_range.get_mut(slot) {
            let (a, b) = std::mem::take(r);
            self.stale_first += (b - a) as usize;
            out.extend_from_slice(&self.first[a as usize..b as usize]);
        }
        self.drain_nodes(slot, out, chain);
    }

    /// `n` occurrences of the pair of `slot` are gone: their positions went stale.
    #[inline]
    fn went_stale(&mut self, slot: usize, n: usize) {
        if slot < self.first_range.len() {
            self.stale_first += n;
        } else {
            self.stale_nodes += n;
        }
    }

    /// `drain` of the positions in a slot's nodes only.
    #[inline]
    fn drain_nodes(&mut self, slot: usize, out: &mut Vec<u32>, chain: &mut Vec<u32>) {
        chain.clear();
        let mut i = std::mem::replace(&mut self.head[slot], NIL);
        while i != NIL {
            chain.push(i);
            i = self.nodes[i as usize][PER_NODE];
        }
        let before = out.len();
        for &i in chain.iter().rev() {
            out.extend(self.nodes[i as usize][..PER_NODE].iter().copied().filter(|&p| p != NIL));
        }
        self.held -= out.len() - before;
        for &i in chain.iter() {
            self.nodes[i as usize][PER_NODE] = self.free;
            self.free = i;
        }
    }

    /// Drops the positions that no longer hold their slot's pair, keeping the others in their
    /// order: a slot counted zero times holds none (its list is freed unread), and the others'
    /// are checked one by one by `live(slot, position)`. Most stored positions go stale as the
    /// merges go on (multilingual 20 MB at 32k: 0.1% of those found when indexing and 11% of
    /// the others were still live at the end), and without this they were most of the
    /// trainer's memory at its peak. A stale position stays stale (a cell's symbol only ever
    /// grows longer, and a dead cell stays dead), so what a merge finds live is the same with
    /// or without it. `first` (then given back to the system at once) when `with_first`, the
    /// nodes when `with_nodes`.
    fn compact(
        &mut self,
        counts: &[i64],
        (with_first, with_nodes): (bool, bool),
        live: impl Fn(usize, u32) -> bool,
        touch: impl Fn(u32),
        scratch: &mut Vec<u32>,
        chain: &mut Vec<u32>,
    ) {
        if with_first {
            // Ranges lie in slot order, so each moves only left (or stays) as the array shrinks.
            let mut w = 0usize;
            for (s, r) in self.first_range.iter_mut().enumerate() {
                let (a, b) = (r.0 as usize, r.1 as usize);
                let start = w;
                if counts[s] > 0 {
                    for i in a..b {
                        if i + LOOKAHEAD < b {
                            touch(self.first[i + LOOKAHEAD]);
                        }
                        let p = self.first[i];
                        if live(s, p) {
                            self.first[w] = p;
                            w += 1;
                        }
                    }
                }
                *r = (start as u32, w as u32);
            }
            // A copy of the live part, so that the whole old array is freed at once.
            self.first = self.first[..w].to_vec();
            self.stale_first = 0;
        }
        if !with_nodes {
            return;
        }
        // Slot after slot, each list's first node asked for `2 * LOOKAHEAD` slots ahead and
        // its positions' cells `LOOKAHEAD` ahead, so that the cache misses overlap (most lists
        // are one node).
        let n = self.head.len();
        for s in 0..n {
            if let Some(&h) = self.head.get(s + 2 * LOOKAHEAD).filter(|&&h| h != NIL) {
                prefetch(&self.nodes[h as usize]);
            }
            if let Some(&h) = self.head.get(s + LOOKAHEAD).filter(|&&h| h != NIL) {
                if counts[s + LOOKAHEAD] > 0 {
                    self.nodes[h as usize][..PER_NODE].iter().filter(|&&p| p != NIL).for_each(|&p| touch(p));
                }
            }
            if self.head[s] == NIL {
                continue;
            }
            scratch.clear();
            self.drain_nodes(s, scratch, chain);
            if counts[s] <= 0 {
                continue;
            }
            scratch.retain(|&p| live(s, p));
            for &p in scratch.iter() {
                self.push(s, p);
            }
        }
        self.stale_nodes = 0;
    }
}

/// Learns merges until there are `cfg.target_tokens` tokens, no pair is left, or the best
/// pair occurs fewer than `cfg.min_frequency` times.
///
/// `alphabet`: bytes of the base tokens (ids 0..alphabet.len()). `words`: every distinct word.
/// `progress(done, total)` is called every few merges; `false` stops with `CoreError::Interrupted`.
pub fn train(
    alphabet: Vec<Vec<u8>>,
    words: Words,
    cfg: &TrainConfig,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<TrainOutput, CoreError> {
    train_refusing(alphabet, words, cfg, &|_| false, progress)
}

/// `train`, never making a new token whose bytes `refused` says no to (the pair is skipped, as
/// one over `max_token_bytes` is). Continued training uses it to keep a text's encoding.
pub fn train_refusing(
    alphabet: Vec<Vec<u8>>,
    words: Words,
    cfg: &TrainConfig,
    refused: &dyn Fn(&[u8]) -> bool,
    progress: &mut dyn FnMut(u64, u64) -> bool,
) -> Result<TrainOutput, CoreError> {
    let mut compactions = Compactions { fewest_nodes: COMPACT_NODES, ..Default::default() };
    train_compacting(alphabet, words, cfg, refused, progress, &mut compactions)
}

/// When stale positions are dropped (from `fewest_nodes` nodes on, and `always` there rather
/// than when about half are stale; see `Positions::compact`), and how often they were: a test
/// compacts at every chance to see that the result does not change. Also how often withheld
/// positions (see `Index`) were looked for in the arena: for one pair (`scanned`) and for all
/// (`recovered`, of which `untracked` with the pairs left out), and how often pairs were left
/// out by a merge (`left_out`) or counted after one onto an existing token (`recounted`),
/// which tests see happen.
#[derive(Default)]
struct Compactions {
    fewest_nodes: usize,
    always: bool,
    first: usize,
    nodes: usize,
    scanned: usize,
    recovered: usize,
    untracked: usize,
    left_out: usize,
    recounted: usize,
}

/// Withheld pairs merged, each found by a sweep of the arena, after which the positions of
/// every withheld pair are found in one (each sweep costs a few ms at 20 MB of text; SuperBPE's
/// stage 2 merges one to four such pairs at 32k-64k).
const SCANS_BEFORE_RECOVERY: usize = 8;

/// Appends the live positions of pair (`a`, `b`) to `out`, in ascending order.
fn live_positions(links: &Links, a: u32, b: u32, out: &mut Vec<u32>) {
    for (p, &x) in links.sym.iter().enumerate() {
        if x == a && links.sym[links.after(p)] == b {
            out.push(p as u32);
        }
    }
}

/// The slot arrays a sweep of the arena adds to (see `recover`).
struct Slots<'a> {
    of: &'a mut SlotMap,
    pairs: &'a mut Vec<u64>,
    counts: &'a mut Vec<i64>,
    flags: &'a mut Vec<u8>,
}

/// Gives every withheld pair still counted its live positions (in its nodes, where a merge
/// finds them as it finds those made since; the pairs counted 0 times hold none), and clears
/// the WITHHELD flags; with `untracked`, also every pair left out of the index (see `Index`)
/// its slot, its count and its positions: a sweep of the arena, with a lookup per cell.
fn recover(links: &Links, word_counts: &[u64], slots: &mut Slots, pos: &mut Positions, untracked: bool) {
    let sym = &links.sym;
    let from = slots.pairs.len();
    let mut w = usize::MAX; // the word of the cells since the last edge (the first cell is one)
    for (p, &x) in sym.iter().enumerate() {
        if x == EDGE {
            w = w.wrapping_add(1);
            continue;
        }
        if x == DEAD {
            continue;
        }
        let y = sym[links.after(p)];
        if y == EDGE {
            continue;
        }
        let k = key(x, y);
        let s = match slots.of.get(k) {
            Some(s) => s as usize,
            None if untracked => slot_for(k, slots.of, slots.pairs, slots.counts, &mut pos.head, slots.flags),
            None => continue,
        };
        if s >= from {
            slots.counts[s] += word_counts[w] as i64;
            pos.push(s, p as u32);
        } else if slots.flags[s] & WITHHELD != 0 && slots.counts[s] > 0 {
            pos.push(s, p as u32);
        }
    }
    for f in slots.flags.iter_mut() {
        *f &= !WITHHELD;
    }
}

/// After a merge onto the existing token `z` while pairs are left out of the index (see
/// `Index`): the pairs with `z` that the merge gave slots (`from` on), some of which may have
/// been left out with counts of their own, get their counts and positions from a sweep of the
/// arena (the positions the merge gave them are dropped first).
#[allow(clippy::too_many_arguments)]
fn recount_new(
    links: &Links,
    word_counts: &[u64],
    z: u32,
    from: usize,
    slot_of: &SlotMap,
    counts: &mut [i64],
    pos: &mut Positions,
    chain: &mut Vec<u32>,
) {
    let mut dropped = Vec::new();
    for (s, c) in counts.iter_mut().enumerate().skip(from) {
        *c = 0;
        dropped.clear();
        pos.drain_nodes(s, &mut dropped, chain);
    }
    let sym = &links.sym;
    let mut add = |k: u64, p: usize, w: usize| {
        if let Some(s) = slot_of.get(k).map(|s| s as usize).filter(|&s| s >= from) {
            counts[s] += word_counts[w] as i64;
            pos.push(s, p as u32);
        }
    };
    // The cells holding `z`, found a block at a time (a compare the compiler does on several
    // cells at once; most blocks hold none), each one's word from the marks.
    const BLOCK: usize = 64;
    for (b, block) in sym.chunks(BLOCK).enumerate() {
        if !block.iter().fold(false, |any, &x| any | (x == z)) {
            continue;
        }
        for (i, _) in block.iter().enumerate().filter(|&(_, &x)| x == z) {
            let p = b * BLOCK + i;
            let w = links.word(p);
            // (l, z) at the live cell before; (z, z) there is met as that cell's (z, r)
            let q = links.before(p);
            let l = sym[q];
            if l != EDGE && l != z {
                add(key(l, z), q, w);
            }
            let r = sym[links.after(p)];
            if r != EDGE {
                add(key(z, r), p, w);
            }
        }
    }
}

fn train_compacting(
    alphabet: Vec<Vec<u8>>,
    mut words: Words,
    cfg: &TrainConfig,
    refused: &dyn Fn(&[u8]) -> bool,
    progress: &mut dyn FnMut(u64, u64) -> bool,
    compactions: &mut Compactions,
) -> Result<TrainOutput, CoreError> {
    let mut tokens: Vec<Vec<u8>> = alphabet;
    let mut heads: Vec<u64> = tokens.iter().map(|t| head(t)).collect();
    let mut by_bytes = TokenIds::default();
    for i in 0..tokens.len() {
        by_bytes.put(i as u32, &tokens);
    }
    let mut merges = Vec::new();

    // 1. index: pair slots, their counts and the positions where they start.
    let mut links = Links::new(&mut words)?;
    let wanted = cfg.target_tokens.saturating_sub(tokens.len()) as u64;
    let first_floor = |counts: &mut dyn Iterator<Item = i64>| heap_floor(counts, wanted).max(cfg.min_frequency);
    let index = index(&links, &words.counts, tokens.len(), wanted, first_floor);
    let Index { mut slot_of, mut pairs, mut counts, first, first_range, .. } = index;
    // Room for as many pairs again as indexed, for the pairs the merges will make (SuperBPE's
    // stage 2 at 32k indexes 39k of its 784k pairs and gives slots to 7k of the 331k its merges
    // make; with every pair indexed, 784k and 331k), so that the slots' arrays are not copied
    // as they grow (the room a run does not use is never touched, so never resident).
    let room = 2 * pairs.len();
    pairs.reserve_exact(room - pairs.len());
    counts.reserve_exact(room - counts.len());
    let mut pos = Positions {
        first,
        first_range,
        nodes: Vec::new(),
        head: {
            let mut head = Vec::with_capacity(room);
            head.resize(pairs.len(), NIL);
            head
        },
        free: NIL,
        held: 0,
        stale_nodes: 0,
        stale_first: 0,
    };
    // Per slot: BANNED (never merged: too long or refused), GROWN (raised by this merge),
    // WITHHELD (its positions found when indexing are in the arena only).
    let mut flags: Vec<u8> = Vec::with_capacity(room);
    flags.extend(counts.iter().map(|&c| if (c as u64) < index.withheld_below { WITHHELD } else { 0 }));
    let mut withheld = index.withheld;
    let mut untracked_below = index.untracked_below;
    let too_long = |k: u64, tokens: &[Vec<u8>]| {
        cfg.max_token_bytes > 0
            && tokens[(k >> 32) as usize].len() + tokens[(k & 0xFFFF_FFFF) as usize].len() > cfg.max_token_bytes
    };
    // Every pair that could be merged, counted at least `floor` times, at its current count
    // (also after each compaction).
    let fresh = |counts: &[i64], flags: &[u8], floor: u64| {
        (0..counts.len() as u32)
            .filter(|&s| {
                counts[s as usize] > 0 && counts[s as usize] as u64 >= floor && flags[s as usize] & BANNED == 0
            })
            .map(|s| pack(counts[s as usize] as u64, s))
            .collect::<Vec<_>>()
    };
    // Most pairs of a large corpus are seen a few times and never merged: those below `floor`
    // stay out of the heap at first (a smaller heap, fewer ties to compare by bytes). The first
    // time the best pair in the heap is below the floor, the floor falls to `min_frequency` and
    // the heap is rebuilt with every pair, so the pair chosen is always the best of all. Until
    // then a pair a merge raises goes into the heap only at the floor or above.
    let mut floor = index.floor;
    let mut heap = Heap { v: fresh(&counts, &flags, floor) };
    heap.heapify(&Order { tokens: &tokens, heads: &heads, pairs: &pairs });
    let mut compact_at = (2 * heap.v.len()).max(1 << 16);

    // 2. merge
    let mut pending: Vec<usize> = cfg.snapshots.clone();
    pending.sort_unstable();
    pending.dedup();
    let mut taken: FxHashMap<usize, Snapshot> = FxHashMap::default();
    let segment_counts = |links: &Links, n: usize| links.token_counts(&words.counts, n);
    let mut reported = Instant::now();
    if pending.first() == Some(&tokens.len()) {
        let size = pending.remove(0);
        taken.insert(size, Snapshot { tokens: size, merges: 0, token_counts: segment_counts(&links, size) });
    }
    // The positions of the pair merged, and the pairs whose count a merge raised (their slots).
    let mut positions: Vec<u32> = Vec::new();
    let mut grown: Vec<u32> = Vec::new();
    let mut chain: Vec<u32> = Vec::new();
    let mut near = Neighbours::default();
    let mut left_out = 0usize;
    let mut compact_nodes_at = compactions.fewest_nodes;
    while tokens.len() < cfg.target_tokens {
        // Stale positions are dropped when the nodes have grown by half since they were last
        // looked at and about half their positions are stale (see `Positions::compact`), and
        // those found when indexing at the same time once about half of them are.
        if pos.nodes.len() >= compact_nodes_at {
            // (Withheld positions go stale too as their pairs' counts fall: counted with `first`.)
            let with = (2 * pos.stale_first >= (pos.first.len() + withheld).max(1), 2 * pos.stale_nodes >= pos.held);
            let with = if compactions.always { (true, true) } else { with };
            if with.0 || with.1 {
                let sym = &links;
                pos.compact(
                    &counts,
                    with,
                    |s, p| {
                        let k = pairs[s];
                        let p = p as usize;
                        sym.sym[p] == (k >> 32) as u32 && sym.sym[sym.after(p)] == (k & 0xFFFF_FFFF) as u32
                    },
                    |p| prefetch(&sym.sym[p as usize]),
                    &mut positions,
                    &mut chain,
                );
                compactions.first += with.0 as usize;
                compactions.nodes += with.1 as usize;
            }
            // Nodes in use: the positions held, three a node, or more when lists end part full.
            compact_nodes_at = (pos.nodes.len() + pos.nodes.len() / 2).max(compactions.fewest_nodes);
        }
        // The lazy heap keeps an entry per push; when most are stale, it is rebuilt from the
        // current counts (the pair chosen is the same: see `Heap`).
        if heap.v.len() >= compact_at {
            heap.v.clear();
            heap.v.extend(fresh(&counts, &flags, floor));
            heap.heapify(&Order { tokens: &tokens, heads: &heads, pairs: &pairs });
            compact_at = (2 * heap.v.len()).max(1 << 16);
        }
        let popped = heap.pop(&Order { tokens: &tokens, heads: &heads, pairs: &pairs });
        let below = match popped {
            None => true,
            Some((count, s)) => count == counts[s as usize].max(0) as u64 && count < floor,
        };
        if below && floor > cfg.min_frequency {
            // Every pair left in the heap is below the floor; one out of it may be better, and
            // may be one whose positions were withheld or one left out: all of them are found now.
            if withheld > 0 || untracked_below > 0 {
                let mut slots = Slots { of: &mut slot_of, pairs: &mut pairs, counts: &mut counts, flags: &mut flags };
                recover(&links, &words.counts, &mut slots, &mut pos, untracked_below > 0);
                compactions.untracked += (untracked_below > 0) as usize;
                (withheld, untracked_below, compactions.recovered) = (0, 0, compactions.recovered + 1);
            }
            floor = cfg.min_frequency;
            heap.v.clear();
            heap.v.extend(fresh(&counts, &flags, floor));
            heap.heapify(&Order { tokens: &tokens, heads: &heads, pairs: &pairs });
            compact_at = (2 * heap.v.len()).max(1 << 16);
            continue;
        }
        let Some((count, s)) = popped else { break };
        let s = s as usize;
        let current = counts[s].max(0) as u64;
        if current != count {
            if current >= floor.max(1) && flags[s] & BANNED == 0 {
                heap.push((current, s as u32), &Order { tokens: &tokens, heads: &heads, pairs: &pairs });
            }
            continue;
        }
        if current == 0 || current < cfg.min_frequency {
            break;
        }
        let k = pairs[s];
        if too_long(k, &tokens) {
            flags[s] |= BANNED;
            continue;
        }
        let (a, b) = ((k >> 32) as u32, (k & 0xFFFF_FFFF) as u32);
        let mut joined = tokens[a as usize].clone();
        joined.extend_from_slice(&tokens[b as usize]);
        let existing = by_bytes.get(&joined, &tokens);
        if existing.is_none() && refused(&joined) {
            flags[s] |= BANNED;
            continue;
        }
        let z = match existing {
            Some(id) => id,
            None => {
                let id = tokens.len() as u32;
                heads.push(head(&joined));
                tokens.push(joined);
                by_bytes.put(id, &tokens);
                id
            }
        };
        merges.push(Merge { left: a, right: b, result: z, count: current });

        // Left to right, so that in a run like `a a a` the leftmost pair is joined first.
        positions.clear();
        pos.drain(s, &mut positions, &mut chain);
        if flags[s] & WITHHELD != 0 {
            // A pair below the floor when indexing, raised since by merges onto existing tokens
            // (no other merge raises an old pair): those its positions were withheld from are
            // found in the arena, among its live ones (the others are in its nodes as well, and
            // go with the duplicates). After this merge none of them holds the pair.
            flags[s] &= !WITHHELD;
            live_positions(&links, a, b, &mut positions);
            compactions.scanned += 1;
            if compactions.scanned >= SCANS_BEFORE_RECOVERY && withheld > 0 {
                let mut slots = Slots { of: &mut slot_of, pairs: &mut pairs, counts: &mut counts, flags: &mut flags };
                recover(&links, &words.counts, &mut slots, &mut pos, false);
                (withheld, compactions.recovered) = (0, compactions.recovered + 1);
            }
        }
        // Ascending runs (see `Positions::drain`): often one (a pair made by one merge, or
        // found only when indexing), then no sort is needed. (The stable sort, which merges
        // runs, allocates a scratch copy of them: more memory at the peak.)
        if !positions.windows(2).all(|w| w[0] <= w[1]) {
            positions.sort_unstable();
        }
        positions.dedup();
        grown.clear();
        // Pairs left out of the index (see `Index`) stay out: one this merge lowers (unless it
        // holds `z`: then it is one the merge made, or `z` is an existing token), and one it
        // makes with a new `z` in a single batch of joins (all its count known when looked up)
        // below the floor. Onto an existing `z`, every pair with `z` it gives a slot is
        // counted in the arena after (`recount_new`).
        let untracking = untracked_below > 0;
        let leave_out_made = untracking && existing.is_none() && positions.len() < BATCH;
        let slots_before = pairs.len();
        // Each join lowers the pairs around it and raises the pairs it makes (the pair merged
        // itself excepted: it is emptied below), and a pair it makes gets the position. The
        // joins are gathered by neighbour (`Neighbours`), a batch at a time, so that each
        // neighbour's pairs are looked up once a batch rather than once a join: the counts
        // after the merge are the same either way, and a pair's new positions are pushed in
        // ascending order, as they are met.
        let mut apply = |near: &mut Neighbours| {
            // A neighbour's pair lowered and pair made; their places in the table are asked for
            // `LOOKAHEAD` neighbours ahead (see `PairTable`).
            let pairs_of =
                |side: usize, t: u32| if side == 0 { (key(t, a), key(t, z)) } else { (key(b, t), key(z, t)) };
            for side in 0..2 {
                for i in 0..near.near[side].len() {
                    if let Some(e) = near.near[side].get(i + LOOKAHEAD) {
                        let (lowered, made) = pairs_of(side, e.token);
                        slot_of.prefetch(lowered);
                        slot_of.prefetch(made);
                    }
                    let e = &mut near.near[side][i];
                    let (lowered, made) = pairs_of(side, e.token);
                    if lowered != k {
                        let ls = if untracking && e.token != z {
                            slot_of.get(lowered).map(|s| s as usize)
                        } else {
                            Some(slot_for(lowered, &mut slot_of, &mut pairs, &mut counts, &mut pos.head, &mut flags))
                        };
                        if let Some(ls) = ls {
                            counts[ls] -= e.count;
                            pos.went_stale(ls, e.joins as usize);
                        }
                    }
                    let ms = match slot_of.get(made) {
                        Some(ms) => ms as usize,
                        None if leave_out_made && (e.count as u64) < floor => {
                            e.slot = NIL;
                            left_out += 1;
                            continue;
                        }
                        None => slot_for(made, &mut slot_of, &mut pairs, &mut counts, &mut pos.head, &mut flags),
                    };
                    counts[ms] += e.count;
                    if flags[ms] & GROWN == 0 {
                        flags[ms] |= GROWN;
                        grown.push(ms as u32);
                    }
                    e.slot = ms as u32;
                }
                for &(e, at) in &near.made[side] {
                    let slot = near.near[side][e as usize].slot;
                    if slot != NIL {
                        pos.push(slot as usize, at);
                    }
                }
            }
            near.clear();
        };
        for (i, &p) in positions.iter().enumerate() {
            // The positions are far apart in a large arena: each costs a cache miss for its
            // cell and its mark, asked for a few positions ahead so that they overlap.
            if let Some(&ahead) = positions.get(i + LOOKAHEAD) {
                prefetch(&links.sym[ahead as usize]);
                prefetch(&links.marks[ahead as usize / MARK]);
            }
            let p = p as usize;
            // A stale position: an earlier join changed this symbol or its neighbour.
            if links.sym[p] != a {
                continue;
            }
            let q = links.after(p);
            if links.sym[q] != b {
                continue;
            }
            let c = words.counts[links.word(p)] as i64;
            let (left, right) = (links.before(p), links.after(q));
            let l = links.sym[left];
            if l != EDGE {
                near.add(0, l, c, left as u32);
            }
            let r = links.sym[right];
            if r != EDGE {
                near.add(1, r, c, p as u32);
            }
            links.sym[p] = z;
            links.sym[q] = DEAD;
            if near.joined() {
                apply(&mut near);
            }
        }
        if !near.is_empty() {
            apply(&mut near);
        }
        if untracking && existing.is_some() && pairs.len() > slots_before {
            recount_new(&links, &words.counts, z, slots_before, &slot_of, &mut counts, &mut pos, &mut chain);
            compactions.recounted += 1;
            for (ns, f) in flags.iter_mut().enumerate().skip(slots_before) {
                if *f & GROWN == 0 {
                    *f |= GROWN;
                    grown.push(ns as u32);
                }
            }
        }
        counts[s] = 0;
        // A pair raised several times is pushed once (its GROWN flag), in the order first
        // raised: the order of pushes never changes which entry pops first (the tie rule is a
        // total order over the pairs). One raised and lowered again by the same merge may be
        // pushed at its current count, which the lazy heap allows (see `Heap`). One still below
        // the floor is not pushed: the heap is for the pairs at the floor or above until it
        // falls (most pairs a merge makes are counted once or twice: SuperBPE's stage 2 at 32k
        // pushes 3k of the 331k pairs its merges make, and its heap is never rebuilt).
        for &ps in &grown {
            flags[ps as usize] &= !GROWN;
            let c = counts[ps as usize];
            if c as u64 >= floor.max(1) && flags[ps as usize] & BANNED == 0 {
                heap.push((c as u64, ps), &Order { tokens: &tokens, heads: &heads, pairs: &pairs });
            }
        }
        if pending.first() == Some(&tokens.len()) {
            let size = pending.remove(0);
            let token_counts = segment_counts(&links, tokens.len());
            taken.insert(size, Snapshot { tokens: size, merges: merges.len(), token_counts });
        }
        let done = merges.len() as u64;
        if done % 256 == 0 && reported.elapsed() >= REPORT_EVERY {
            reported = Instant::now();
            if !progress(done, wanted) {
                return Err(CoreError::Interrupted);
            }
        }
    }
    if !progress(merges.len() as u64, wanted) {
        return Err(CoreError::Interrupted);
    }
    compactions.left_out += left_out;
    // 3. finish (the counts of a snapshot taken after the last merge are these: not swept twice)
    let token_counts = match taken.values().find(|s| s.tokens == tokens.len() && s.merges == merges.len()) {
        Some(s) => s.token_counts.clone(),
        None => segment_counts(&links, tokens.len()),
    };
    // Sizes the corpus did not reach end where training ended.
    let snapshots = cfg
        .snapshots
        .iter()
        .map(|size| {
            taken.get(size).cloned().unwrap_or_else(|| Snapshot {
                tokens: tokens.len(),
                merges: merges.len(),
                token_counts: token_counts.clone(),
            })
        })
        .collect();
    Ok(TrainOutput { tokens, token_counts, merges, snapshots })
}

/// The heap's first floor (see `train_refusing`): the highest count (up to 64) that at least
/// 4 × `wanted` pairs reach, so the heap starts with plenty of pairs for the merges asked for;
/// 0 when there are not that many pairs. A guess, never a rule: whether it was too high only
/// costs a rebuild of the heap.
fn heap_floor(counts: impl IntoIterator<Item = i64>, wanted: u64) -> u64 {
    let mut at_least = [0u64; TOP + 1]; // at_least[c]: pairs counted c times (TOP: TOP or more)
    for c in counts {
        at_least[(c.max(0) as usize).min(TOP)] += 1;
    }
    floor_of(&at_least, wanted.saturating_mul(4))
}

/// The highest count (up to `TOP`) that at least `need` of the pairs reach, from how many
/// pairs are counted each number of times (`[TOP]`: `TOP` or more); 0 when not that many.
fn floor_of(at_least: &[u64; TOP + 1], need: u64) -> u64 {
    let mut reached = 0u64;
    for c in (1..=TOP).rev() {
        reached += at_least[c];
        if reached >= need {
            return c as u64;
        }
    }
    0
}

/// Byte-level words: the alphabet is the 256 bytes (id = byte value), a word per counted
/// piece, in the counts' order (sorted by bytes).
pub fn byte_words(counts: &Counts) -> (Vec<Vec<u8>>, Words) {
    let alphabet: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
    let mut words = Words::default();
    words.arena.reserve_exact(Words::edged_capacity(counts.iter().map(|(p, _)| p.len()).sum(), counts.len()));
    words.ends.reserve_exact(counts.len());
    words.counts.reserve_exact(counts.len());
    for (p, c) in counts.iter() {
        words.push(p.iter().map(|&b| b as u32), c);
    }
    (alphabet, words)
}

/// Character-level words: the alphabet is every character of the corpus plus the optional
/// end-of-word symbol, sorted by their UTF-8 bytes; each word ends with that symbol.
pub fn char_words(counts: &Counts, end_of_word: Option<&str>) -> Result<(Vec<Vec<u8>>, Words), CoreError> {
    let mut alphabet: Vec<String> = Vec::new();
    let mut seen: rustc_hash::FxHashSet<char> = Default::default();
    for (p, _) in counts.iter() {
        let s = std::str::from_utf8(p).map_err(|e| {
            CoreError::input(format!("character-level BPE needs UTF-8 text, and the corpus is not ({e}); convert it"))
        })?;
        for ch in s.chars() {
            if seen.insert(ch) {
                alphabet.push(ch.to_string());
            }
        }
    }
    if let Some(e) = end_of_word {
        alphabet.push(e.to_string());
    }
    alphabet.sort_unstable();
    alphabet.dedup();
    let ids: FxHashMap<&str, u32> = alphabet.iter().enumerate().map(|(i, s)| (s.as_str(), i as u32)).collect();
    let eow = end_of_word.map(|e| ids[e]);
    let mut words = Words::default();
    // Bytes bound characters: room for every symbol, the end-of-word symbols and the edges.
    let bytes: usize = counts.iter().map(|(p, _)| p.len()).sum();
    words.arena.reserve_exact(Words::edged_capacity(bytes + counts.len(), counts.len()));
    let mut buf = [0u8; 4];
    for (p, c) in counts.iter() {
        let s = std::str::from_utf8(p).unwrap_or("");
        let syms = s.chars().map(|ch| ids[&*ch.encode_utf8(&mut buf)]).collect::<Vec<u32>>();
        words.push(syms.into_iter().chain(eow), c);
    }
    let alphabet = alphabet.into_iter().map(String::into_bytes).collect();
    Ok((alphabet, words))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(alphabet: Vec<Vec<u8>>, words: Vec<(Vec<u32>, u64)>, target: usize, min_frequency: u64) -> TrainOutput {
        let mut w = Words::default();
        for (syms, c) in words {
            w.push(syms, c);
        }
        let cfg = TrainConfig { target_tokens: target, min_frequency, ..Default::default() };
        train(alphabet, w, &cfg, &mut |_, _| true).unwrap()
    }

    /// Character-level words with an end-of-word symbol, as in the classic examples.
    type Table = (Vec<Vec<u8>>, Vec<(Vec<u32>, u64)>);

    /// (alphabet, words as symbol ids with counts)
    fn char_words(table: &[(&str, u64)], eow: &str) -> Table {
        let mut alphabet: Vec<Vec<u8>> = vec![eow.as_bytes().to_vec()];
        for (w, _) in table {
            for ch in w.chars() {
                let b = ch.to_string().into_bytes();
                if !alphabet.contains(&b) {
                    alphabet.push(b);
                }
            }
        }
        alphabet.sort();
        let id = |b: &[u8]| alphabet.iter().position(|a| a == b).unwrap() as u32;
        let words = table
            .iter()
            .map(|(w, c)| {
                let mut s: Vec<u32> = w.chars().map(|ch| id(ch.to_string().as_bytes())).collect();
                if !eow.is_empty() {
                    s.push(id(eow.as_bytes()));
                }
                (s, *c)
            })
            .collect();
        (alphabet, words)
    }

    fn merge_strings(out: &TrainOutput) -> Vec<String> {
        let t = |i: u32| String::from_utf8(out.tokens[i as usize].clone()).unwrap();
        out.merges.iter().map(|m| format!("{}+{}", t(m.left), t(m.right))).collect()
    }

    /// Every string over a small alphabet (a zero byte among its letters, so that padding and
    /// real zeros meet) up to 9 bytes: heads order like the bytes whenever they differ, and
    /// equal heads are equal strings or two of 8 bytes or more sharing their first 7.
    #[test]
    fn heads_order_like_bytes() {
        let mut all: Vec<Vec<u8>> = vec![vec![]];
        let mut last: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..9 {
            last = last.iter().flat_map(|s| [0u8, 1, b'a'].map(|b| [s.as_slice(), &[b]].concat())).collect();
            all.extend(last.iter().filter(|s| s.len() <= 3 || s.len() >= 7).cloned());
        }
        all.sort();
        let heads: Vec<u64> = all.iter().map(|t| head(t)).collect();
        for w in heads.windows(2) {
            assert!(w[0] <= w[1]);
        }
        for (i, w) in all.windows(2).enumerate() {
            if heads[i] == heads[i + 1] {
                assert!(w[0].len() >= 8 && w[1].len() >= 8 && w[0][..7] == w[1][..7], "{:?} {:?}", w[0], w[1]);
            }
        }
    }

    /// The heap pops by the tie rule whatever order the entries came in, stale duplicates and
    /// heapify included.
    #[test]
    fn heap_pops_in_tie_rule_order() {
        let tokens: Vec<Vec<u8>> =
            [&b"a"[..], b"b", b"ab", b"abcdefgh1", b"abcdefgh2", b"\0", b"a\0"].iter().map(|t| t.to_vec()).collect();
        let heads: Vec<u64> = tokens.iter().map(|t| head(t)).collect();
        let n = tokens.len() as u32;
        let pairs: Vec<u64> = (0..n).flat_map(|l| (0..n).map(move |r| key(l, r))).collect();
        let o = Order { tokens: &tokens, heads: &heads, pairs: &pairs };
        // Counts 1-3 by a fixed scramble, some entries twice.
        let entries: Vec<(u64, u32)> = (0..pairs.len() as u32)
            .chain((0..pairs.len() as u32).step_by(5))
            .map(|s| ((s * 7 % 3) as u64 + 1, s))
            .collect();
        let by_rule = |x: &(u64, u32), y: &(u64, u32)| {
            let bytes = |s: u32| {
                let k = pairs[s as usize];
                (tokens[(k >> 32) as usize].clone(), tokens[(k & 0xFFFF_FFFF) as usize].clone())
            };
            y.0.cmp(&x.0).then_with(|| bytes(x.1).cmp(&bytes(y.1)))
        };
        let mut expected = entries.clone();
        expected.sort_by(by_rule);
        let mut pushed = Heap { v: vec![] };
        for &e in entries.iter().rev() {
            pushed.push(e, &o);
        }
        let mut built = Heap { v: entries.iter().map(|&(c, s)| pack(c, s)).collect() };
        built.heapify(&o);
        for heap in [&mut pushed, &mut built] {
            let got: Vec<(u64, u32)> = std::iter::from_fn(|| heap.pop(&o)).collect();
            assert_eq!(got, expected);
        }
    }

    #[test]
    fn low_lower_newest_widest() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "</w>");
        let n = alphabet.len();
        let out = run(alphabet, words, n + 5, 0);
        assert_eq!(merge_strings(&out), ["e+s", "es+t", "est+</w>", "l+o", "lo+w"]);
        assert_eq!(out.merges.iter().map(|m| m.count).collect::<Vec<_>>(), [9, 9, 9, 7, 7]);
    }

    #[test]
    fn the_cat_the_car_the_rat() {
        let (alphabet, words) = char_words(&[("the", 3), ("cat", 1), ("car", 1), ("rat", 1)], "");
        let n = alphabet.len();
        let out = run(alphabet, words, n + 3, 0);
        // h+e beats t+h (both 3) because "h" < "t"; then a+t (2) beats c+a (2) as "a" < "c".
        assert_eq!(merge_strings(&out), ["h+e", "t+he", "a+t"]);
    }

    #[test]
    fn aaabdaaabac() {
        // The Wikipedia example as one word of bytes: Z=aa, then Y=ab (the tie between a+b
        // and aa+a, both 2, goes to the smaller left bytes "a"), then X=ZY.
        let alphabet: Vec<Vec<u8>> = (0u8..=255).map(|b| vec![b]).collect();
        let word: Vec<u32> = b"aaabdaaabac".iter().map(|&b| b as u32).collect();
        let out = run(alphabet, vec![(word, 1)], 259, 0);
        assert_eq!(merge_strings(&out), ["a+a", "a+b", "aa+ab"]);
    }

    #[test]
    fn overlapping_pairs_are_counted_once_per_merge() {
        let alphabet: Vec<Vec<u8>> = vec![b"a".to_vec()];
        let out = run(alphabet, vec![(vec![0; 5], 1)], 3, 0);
        assert_eq!(out.merges[0].count, 4);
        // After a+a: [aa, aa, a] -> pairs (aa,aa)=1, (aa,a)=1; the tie goes to "aa"+"a" < "aa"+"aa".
        assert_eq!(merge_strings(&out), ["a+a", "aa+a"]);
        assert_eq!(out.token_counts, vec![0, 1, 1]);
    }

    #[test]
    fn existing_result_is_reused_not_duplicated() {
        // The alphabet already spells "ab": merging a+b records a merge onto that token.
        let alphabet: Vec<Vec<u8>> = vec![b"a".to_vec(), b"b".to_vec(), b"ab".to_vec()];
        let words = vec![(vec![0, 1], 5), (vec![2], 1)];
        let out = run(alphabet, words, 10, 0);
        assert_eq!(out.merges, vec![Merge { left: 0, right: 1, result: 2, count: 5 }]);
        assert_eq!(out.tokens.len(), 3);
        assert_eq!(out.token_counts, vec![0, 0, 6]);
    }

    #[test]
    fn min_frequency_stops_training() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "</w>");
        let out = run(alphabet, words, 100, 8);
        assert_eq!(out.merges.len(), 3);
    }

    #[test]
    fn snapshots_are_prefixes_with_their_own_counts() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "</w>");
        let n = alphabet.len();
        let mut w = Words::default();
        for (syms, c) in words.clone() {
            w.push(syms, c);
        }
        let cfg = TrainConfig { target_tokens: n + 5, snapshots: vec![n + 2, n + 5, n + 50], ..Default::default() };
        let out = train(alphabet.clone(), w, &cfg, &mut |_, _| true).unwrap();
        let small = run(alphabet, words, n + 2, 0);
        assert_eq!(out.snapshots[0].merges, 2);
        assert_eq!(out.snapshots[0].token_counts, small.token_counts);
        assert_eq!(&out.merges[..2], &small.merges[..]);
        assert_eq!(out.snapshots[1].token_counts, out.token_counts);
        // A size the corpus does not reach ends where training ended.
        assert_eq!(out.snapshots[2].tokens, n + 5);
    }

    #[test]
    fn every_cell_finds_its_word_across_marks() {
        // Words of 1..40 symbols, so that edges fall everywhere inside and across the marks.
        let mut words = Words::default();
        for w in 0..200u32 {
            words.push((0..1 + w % 40).map(|i| i % 7), 1 + w as u64);
        }
        let links = Links::new(&mut words).unwrap();
        let mut w = 0;
        for p in 1..links.sym.len() {
            if links.sym[p] == EDGE {
                w += 1;
            } else {
                assert_eq!(links.word(p), w, "cell {p}");
            }
        }
        assert_eq!(w, 200);
    }

    #[test]
    fn dropping_stale_positions_changes_nothing() {
        // Words drawn from a four-letter alphabet, so that merges overlap and leave stale
        // positions everywhere, trained with the positions compacted whenever the nodes have
        // grown by half (from one node on) and never: the same merges, counts and tokens.
        let alphabet: Vec<Vec<u8>> = (b'a'..=b'd').map(|b| vec![b]).collect();
        let mut x = 7u64;
        let mut words = Words::default();
        for w in 0..3000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = 1 + (x >> 60) as usize;
            words.push((0..len).map(|i| ((x >> (2 * i + 8)) & 3) as u32), 1 + w % 5);
        }
        let cfg = TrainConfig { target_tokens: 600, snapshots: vec![100], ..Default::default() };
        let run = |fewest_nodes: usize| {
            let mut c = Compactions { fewest_nodes, always: true, ..Default::default() };
            let out = train_compacting(alphabet.clone(), words.clone(), &cfg, &|_| false, &mut |_, _| true, &mut c);
            (out.unwrap(), c.first, c.nodes)
        };
        let (never, first, nodes) = run(usize::MAX);
        assert_eq!((first, nodes), (0, 0));
        let (often, first, nodes) = run(1);
        assert!(first > 0 && nodes > 0, "compacted first {first} times, nodes {nodes} times");
        assert!(never.merges.len() > 500);
        assert_eq!(often.merges, never.merges);
        assert_eq!(often.tokens, never.tokens);
        assert_eq!(often.token_counts, never.token_counts);
        assert_eq!(often.snapshots, never.snapshots);
    }

    #[test]
    fn the_parallel_index_of_a_large_alphabet_gives_the_serial_result() {
        // 1,500 symbols (past the direct table), words drawn mostly from a few of them so that
        // pairs repeat and tie; on 2-4 threads the pairs are indexed by table in parallel
        // (other slots than the serial index's), on 1 thread serially: the same result.
        let alphabet: Vec<Vec<u8>> = (0..1500u32)
            .map(|i| vec![b'a' + (i % 26) as u8, b'a' + (i / 26 % 26) as u8, b'a' + (i / 676) as u8])
            .collect();
        let mut x = 11u64;
        let mut words = Words::default();
        for w in 0..4000u64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = 1 + (x >> 59) as usize;
            let syms: Vec<u32> = (0..len)
                .map(|i| {
                    let r = (x >> (i * 3 % 40)) as u32;
                    if r & 7 == 0 {
                        r % 1500
                    } else {
                        (r >> 3) % 40
                    }
                })
                .collect();
            words.push(syms, 1 + w % 3);
        }
        let cfg = TrainConfig { target_tokens: 1500 + 400, snapshots: vec![1500 + 50], ..Default::default() };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| train(alphabet.clone(), words.clone(), &cfg, &mut |_, _| true)).unwrap()
        };
        let serial = run(1);
        assert_eq!(serial.tokens.len(), 1900, "the words hold enough pairs");
        for threads in [2, 3, 4] {
            let par = run(threads);
            assert_eq!(par.merges, serial.merges, "{threads} threads");
            assert_eq!(par.tokens, serial.tokens);
            assert_eq!(par.token_counts, serial.token_counts);
            assert_eq!(par.snapshots, serial.snapshots);
        }
    }

    #[test]
    fn withheld_positions_are_found_when_their_pair_is_merged() {
        // A large alphabet (the parallel index) holding "x", "y", "xy", "c" and "d", and
        // 2-symbol words of long symbols, too long to merge: 20 counted 6 times, which set the
        // heap's floor at 6, and 20 counted 3 times, which set the bound below which pairs are
        // left out at 3 (see `Index`). x+y (12) goes onto the existing "xy": it raises xy+c
        // from 3, withheld, to 13, merged next from its withheld position found by a sweep;
        // and it makes d+xy twice, a pair left out (counted once), counted in the arena after
        // the merge. Then every pair left in the heap is banned, the floor falls, and every
        // pair withheld or left out is found in one sweep. On 1 thread (the serial index,
        // nothing withheld or left out): the same result.
        let mut alphabet: Vec<Vec<u8>> = [&b"x"[..], b"y", b"xy", b"c"].iter().map(|t| t.to_vec()).collect();
        alphabet.extend((0..1100u32).map(|i| format!("L{i:04}").into_bytes()));
        alphabet.push(b"d".to_vec());
        let d = alphabet.len() as u32 - 1;
        let long = |i: u32| 4 + i;
        let mut words = Words::default();
        words.push([0, 1, 3], 10);
        words.push([2, 3], 3);
        words.push([d, 0, 1], 2);
        words.push([d, 2], 1);
        for i in 0..40 {
            words.push([long(2 * i), long(2 * i + 1)], if i < 20 { 6 } else { 3 });
        }
        for pair in [[1, 0], [3, 3], [0, 3], [3, 1]] {
            words.push(pair, 2);
            words.push([long(99), pair[0], pair[1]], 1);
        }
        let n = alphabet.len();
        let cfg = TrainConfig { target_tokens: n + 5, max_token_bytes: 4, ..Default::default() };
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut c = Compactions { fewest_nodes: COMPACT_NODES, ..Default::default() };
            let out = pool.install(|| {
                train_compacting(alphabet.clone(), words.clone(), &cfg, &|_| false, &mut |_, _| true, &mut c)
            });
            (out.unwrap(), (c.scanned, c.recounted, c.recovered, c.untracked))
        };
        let (serial, seen) = run(1);
        assert_eq!(seen, (0, 0, 0, 0));
        assert_eq!(merge_strings(&serial)[..2], ["x+y", "xy+c"]);
        assert_eq!(serial.merges[1].count, 13);
        assert_eq!(serial.merges.len(), 6, "{:?}", merge_strings(&serial));
        assert!(merge_strings(&serial).contains(&"d+xy".to_string()));
        let (par, seen) = run(2);
        assert_eq!(seen, (1, 1, 1, 1));
        assert_eq!(par.merges, serial.merges);
        assert_eq!(par.tokens, serial.tokens);
        assert_eq!(par.token_counts, serial.token_counts);
    }

    #[test]
    fn a_merge_leaves_out_only_what_it_made_below_the_floor() {
        // A large alphabet with "a", "b", "C" and long symbols: 60 pairs of long symbols
        // counted 6 times set the floor and the bound at 6. a+b (48) makes ab+a in "abab" and
        // unmakes it at the next join (0 in the end: kept, or it would tie with ab+ab at 20
        // and win by its bytes), and makes C+ab 6 times, the floor, over two batches of joins
        // (kept, though each batch adds less: merged before the long pairs by its bytes).
        // L0500+L0501 (8, one join) makes a pair counted 8, above the floor (kept: merged
        // next). The serial index gives the same.
        let mut alphabet: Vec<Vec<u8>> = [&b"a"[..], b"b", b"C"].iter().map(|t| t.to_vec()).collect();
        alphabet.extend((0..1100u32).map(|i| format!("L{i:04}").into_bytes()));
        let long = |i: u32| 3 + i;
        let mut words = Words::default();
        words.push([0, 1, 0, 1], 20);
        words.push([2, 0, 1], 2);
        words.push([0, 1, long(1000)], 1);
        words.push([0, 1, long(1001)], 1);
        // (`neighbours::BATCH` is 5 joins in tests: these two are in the second batch)
        words.push([2, 0, 1, long(1002)], 2);
        words.push([2, 0, 1, long(1003)], 2);
        words.push([long(500), long(501), long(502)], 8);
        for i in 0..60 {
            words.push([long(2 * i), long(2 * i + 1)], 6);
        }
        let n = alphabet.len();
        let cfg = TrainConfig { target_tokens: n + 6, ..Default::default() };
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let out = pool.install(|| train(alphabet.clone(), words.clone(), &cfg, &mut |_, _| true)).unwrap();
            let want = ["a+b", "ab+ab", "L0500+L0501", "L0500L0501+L0502", "C+ab", "L0000+L0001"];
            assert_eq!(merge_strings(&out), want, "{threads} threads");
            assert_eq!(out.merges.iter().map(|m| m.count).collect::<Vec<_>>(), [48, 20, 8, 8, 6, 6]);
        }
    }

    #[test]
    fn when_the_floor_falls_the_pairs_left_out_are_found() {
        // 40 pairs of long symbols counted 6 times (too long to merge) set the floor and the
        // bound at 6: a+b (2) and C+d (1) are left out of the index; once the long pairs are
        // banned the floor falls, and both are found and merged, as on one thread.
        let mut alphabet: Vec<Vec<u8>> = [&b"a"[..], b"b", b"C", b"d"].iter().map(|t| t.to_vec()).collect();
        alphabet.extend((0..1100u32).map(|i| format!("L{i:04}").into_bytes()));
        let mut words = Words::default();
        words.push([0, 1], 2);
        words.push([2, 3], 1);
        for i in 0..40 {
            words.push([4 + 2 * i, 5 + 2 * i], 6);
        }
        let cfg = TrainConfig { target_tokens: alphabet.len() + 2, max_token_bytes: 4, ..Default::default() };
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut c = Compactions { fewest_nodes: COMPACT_NODES, ..Default::default() };
            let out = pool.install(|| {
                train_compacting(alphabet.clone(), words.clone(), &cfg, &|_| false, &mut |_, _| true, &mut c)
            });
            assert_eq!(merge_strings(&out.unwrap()), ["a+b", "C+d"], "{threads} threads");
            assert_eq!(c.untracked, (threads > 1) as usize);
        }
    }

    #[test]
    fn pairs_left_out_of_the_index_change_no_merge() {
        // Letters, every two-letter string (so that joining two letters makes an existing
        // token) and filler past the direct table; words of letters drawn with a skew (pairs
        // from very frequent to once), with now and then a two-letter token or a filler
        // symbol. Trained short of the pairs (the floor holds) and past them (it falls), on
        // 1 thread (nothing left out) and on 2-4: the same merges, tokens and counts, with
        // pairs left out by the index and by merges, counted after merges onto existing
        // tokens, and found when the floor fell.
        let letters: Vec<Vec<u8>> = (b'a'..=b'z').map(|b| vec![b]).collect();
        let mut alphabet = letters.clone();
        for x in &letters {
            for y in &letters {
                alphabet.push([x.as_slice(), y].concat());
            }
        }
        alphabet.extend((0..400u32).map(|i| format!("F{i:03}").into_bytes()));
        let n = alphabet.len() as u32;
        let mut seen = Compactions::default();
        for seed in [3u64, 5, 8] {
            let mut x = seed;
            let mut next = || {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                x >> 33
            };
            let mut words = Words::default();
            for _ in 0..6000 {
                let len = 2 + next() as usize % 11;
                let syms: Vec<u32> = (0..len)
                    .map(|_| match next() % 64 {
                        0 => 26 + next() as u32 % 676,
                        1..=15 => 702 + next() as u32 % 400,
                        // letters, the first ones far more often (the product of two draws)
                        _ => (next() % 26 * (next() % 26) / 25) as u32,
                    })
                    .collect();
                words.push(syms, 1 + next() % 3);
            }
            for (target, max_token_bytes) in [(n as usize + 150, 0), (n as usize + 600, 3), (n as usize + 4000, 0)] {
                let cfg = TrainConfig {
                    target_tokens: target,
                    max_token_bytes,
                    snapshots: vec![n as usize + 60],
                    ..Default::default()
                };
                let run = |threads: usize, c: &mut Compactions| {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    c.fewest_nodes = COMPACT_NODES;
                    pool.install(|| {
                        train_compacting(alphabet.clone(), words.clone(), &cfg, &|_| false, &mut |_, _| true, c)
                    })
                    .unwrap()
                };
                let serial = run(1, &mut Compactions::default());
                for threads in [2, 3, 4] {
                    let par = run(threads, &mut seen);
                    assert_eq!(par.merges, serial.merges, "seed {seed}, {target} tokens, {threads} threads");
                    assert_eq!(par.tokens, serial.tokens);
                    assert_eq!(par.token_counts, serial.token_counts);
                    assert_eq!(par.snapshots, serial.snapshots);
                }
            }
        }
        assert!(
            seen.left_out > 0 && seen.recounted > 0 && seen.untracked > 0,
            "left out {}, recounted {}, found {}",
            seen.left_out,
            seen.recounted,
            seen.untracked
        );
    }

    #[test]
    fn max_token_bytes_bounds_every_token() {
        let (alphabet, words) = char_words(&[("low", 5), ("lower", 2), ("newest", 6), ("widest", 3)], "");
        let mut w = Words::default();
        for (syms, c) in words {
            w.push(syms, c);
        }
        let cfg = TrainConfig { target_tokens: 100, max_token_bytes: 2, ..Default::default() };
        let out = train(alphabet, w, &cfg, &mut |_, _| true).unwrap();
        assert!(!out.merges.is_empty());
        assert!(out.tokens.iter().all(|t| t.len() <= 2));
    }
}
