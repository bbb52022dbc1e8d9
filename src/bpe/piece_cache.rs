//! A bounded cache of merged pieces → ids for the byte-level BPE encoder, kept across calls.
//!
//! Why: merging is where byte-level BPE spends its time on text whose pieces are not whole
//! tokens (Chinese, Japanese, rare words, long identifiers), and text repeats its pieces, within
//! a document and across the documents of a dataset: in dr.zh-cn.txt only 18% of the pieces are
//! distinct. A repeated piece then costs one hash and one comparison instead of a merge loop
//! that probes the rank table for every pair it considers.
//!
//! Shape: a table of whole pieces of up to 8 bytes -> their id or "no token" (looked up before
//! the rank table: most pieces of prose and code are one token, and 128 KB stay in L2 cache
//! where the rank table, 12 MB for o200k, does not; with it o200k prose and code streams gain
//! 18%); behind it a word table of pieces of up to 16 bytes -> their ids, for the pieces the
//! first table does not settle (pieces of up to 8 bytes that need merging, and tokens and
//! merged pieces of 9 to 16 bytes: 15% of the pieces of a prose stream),
//! set-associative (buckets of four 32-byte entries, 128 bytes) with a clock hand per bucket,
//! so a piece used again since the hand last passed is kept and one-off pieces go first; a
//! table of single multi-byte characters keyed by their bytes as one number; and two
//! direct-mapped tables of the other pieces, one for short pieces (up to 32 bytes and 12 ids:
//! identifiers, or words of more than three ids) and one for long ones (up to 127 bytes and 64
//! ids: runs of CJK characters), where a collision replaces the entry. Keys and ids sit in flat
//! arrays or inline in the entry, so a lookup reads one bucket or three short runs of memory
//! and an insert allocates nothing.
//!
//! The word table's size (16,384 buckets, 2 MB) was chosen from a measured curve: on the
//! o200k streams of 27 MB of prose and 55 MB of code, a 4-way table with a clock hand of
//! 256 KB, 512 KB, 1, 2 and 4 MB misses 230k, 189k, 149k, 119k and 106k times on prose
//! (102k distinct pieces: no table can miss less) and 459k, 388k, 316k, 249k and 203k on code
//! (179k distinct); the direct-mapped short table of 8,192 slots, alone, had missed 183k and
//! 406k times on just the pieces that need merging. Past 2 MB the speed gained was within the
//! machine's noise. One cache: 4.55 MB.
//!
//! Ownership: every thread keeps one cache per encoder it used last, for at most
//! `ENCODERS_PER_THREAD` encoders (the least recently used one is emptied and handed to the
//! next encoder). No locks, and the threads of `encode_batch` never share a line. Memory is
//! bounded: one cache is 4.5 MB (`tests::one_cache_is_under_4_6_mb`), allocated on first use,
//! so a thread holds at most 9.1 MB however many encoders and calls there are (and
//! `encode_batch` on N threads at most N times that).
//!
//! Beside the pieces sits a memo of token pairs: whether the bytes of two tokens, merged
//! together, keep the boundary between them (`RankEncoder::encode_by_chars` asks this for
//! every pair of neighbouring characters, and text repeats its character pairs).
//!
//! Results never depend on the cache: an entry holds exactly the ids the merge loop computed for
//! those bytes, and a hit needs the same length and the same bytes, not only the same hash
//! (`tests::hits_need_the_same_bytes`, `tests::words_need_the_same_bytes_and_length`); what is
//! evicted changes only the speed (`rank::tests::ids_do_not_depend_on_what_the_cache_holds`).

use std::cell::RefCell;

use crate::encode::table::{zeroed, Zeroable};

const ENCODERS_PER_THREAD: usize = 2;

#[derive(Clone, Copy, Default)]
struct Meta {
    /// The piece's hash; 0 marks an empty slot (a piece's hash is never 0, see `hash`).
    hash: u64,
    len: u16,
    nids: u16,
    /// The cache's generation when the entry was written (`PieceCache::gen`).
    gen: u8,
}

// The tables below are allocated zeroed (`zeroed`): a fresh process's first short call touches
// a few of their pages instead of faulting in all 4.55 MB (`PieceCache::new`).
#[allow(unsafe_code)]
// SAFETY: integers only; all zeros is `Meta::default()`, an empty slot.
unsafe impl Zeroable for Meta {}
#[allow(unsafe_code)]
// SAFETY: integers only; all zeros is `TokenEntry::default()`, an empty slot.
unsafe impl Zeroable for TokenEntry {}
#[allow(unsafe_code)]
// SAFETY: integers only; all zeros is `WordBucket::default()`, four empty entries with the
// clock hand at the first.
unsafe impl Zeroable for WordBucket {}
#[allow(unsafe_code)]
// SAFETY: integers only; all zeros is `CharEntry::default()`, an empty slot.
unsafe impl Zeroable for CharEntry {}

/// One direct-mapped table of `SLOTS` pieces of up to `KEY` bytes and `IDS` ids.
struct Table<const SLOTS: usize, const KEY: usize, const IDS: usize> {
    meta: Vec<Meta>,
    keys: Vec<u8>,
    ids: Vec<u32>,
}

impl<const SLOTS: usize, const KEY: usize, const IDS: usize> Table<SLOTS, KEY, IDS> {
    fn new() -> Self {
        Table { meta: zeroed(SLOTS), keys: vec![0; SLOTS * KEY], ids: vec![0; SLOTS * IDS] }
    }

    #[inline]
    fn get(&self, piece: &[u8], h: u64, gen: u8, out: &mut Vec<u32>) -> Result<(), usize> {
        let slot = (h as usize) & (SLOTS - 1);
        let m = self.meta[slot];
        if m.hash == h && m.len as usize == piece.len() && m.gen == gen {
            let k = slot * KEY;
            if &self.keys[k..k + piece.len()] == piece {
                let i = slot * IDS;
                append(out, &self.ids[i..i + m.nids as usize]);
                return Ok(());
            }
        }
        Err(slot)
    }

    #[inline]
    fn insert(&mut self, slot: usize, h: u64, gen: u8, piece: &[u8], ids: &[u32]) {
        if ids.len() > IDS {
            return;
        }
        self.meta[slot] = Meta { hash: h, len: piece.len() as u16, nids: ids.len() as u16, gen };
        let k = slot * KEY;
        self.keys[k..k + piece.len()].copy_from_slice(piece);
        let i = slot * IDS;
        self.ids[i..i + ids.len()].copy_from_slice(ids);
    }
}

/// Pieces up to this long go to the short table; the long one takes up to `LONG_KEY` bytes.
const SHORT_KEY: usize = 32;
const LONG_KEY: usize = 127;

/// Slots of the pair memo (whether two tokens stay apart when their bytes are merged together).
const PAIRS: usize = 65536;
/// The pair memo's slot is the top bits of a multiplicative hash.
const PAIR_SHIFT: u32 = 64 - PAIRS.trailing_zeros();
/// A pair memo entry's answer (its top two bits), then `a << 32 | gen << 26 | b`: ids of
/// `PAIR_ID_BITS` bits each, and the cache's generation between them.
const APART: u64 = 1;
const MERGED: u64 = 2;
const PAIR_KEY: u64 = (1 << 62) - 1;
/// Pairs with an id of 2^26 or more are never remembered (no vocabulary comes near).
const PAIR_ID_BITS: u32 = 26;

/// Slots of the character table (the ids of one multi-byte character, by its bytes).
const CHARS: usize = 8192;
const CHAR_SHIFT: u32 = 32 - CHARS.trailing_zeros();

/// Slots of the whole-token table (a piece of up to `TOKEN_KEY` bytes -> its id, or `NO_TOKEN`).
const TOKENS: usize = 8192;
const TOKEN_SHIFT: u32 = 64 - TOKENS.trailing_zeros();
/// The longest piece the whole-token table takes: its bytes fit one word.
pub const TOKEN_KEY: usize = 8;
/// The whole-token table's answer for a piece that is no token.
pub const NO_TOKEN: u32 = u32::MAX;

/// A piece of up to 8 bytes and its id (`NO_TOKEN`: no token); `len == 0`: empty.
#[derive(Clone, Copy, Default)]
struct TokenEntry {
    key: u64,
    /// The piece's length, and the cache's generation above it (`gen << 8 | len`).
    len: u32,
    id: u32,
}

/// Buckets of the word table (4 pieces of up to `WORD_KEY` bytes each, 128 bytes a bucket).
const WORD_BUCKETS: usize = 1 << 14;
/// The longest piece the word table takes: its bytes are two overlapping words.
pub const WORD_KEY: usize = 16;
/// The most ids a word-table entry holds inline.
pub const WORD_IDS: usize = 3;
/// `nids` of a word-table entry whose piece is no token and merges to more than `WORD_IDS`
/// ids: its ids are in the piece tables (`get`), and the rank table need not be asked.
const ELSEWHERE: u8 = u8::MAX;

/// A piece of up to 16 bytes and what it encodes to: 32 bytes, two to a cache line.
/// `len == 0`: empty.
#[derive(Clone, Copy, Default)]
#[repr(C)]
struct WordEntry {
    /// The piece's bytes as two overlapping words (`words`): with `len`, exactly the piece.
    a: u64,
    b: u64,
    len: u8,
    /// How many of `ids` hold the piece's ids, or `ELSEWHERE`.
    nids: u8,
    /// Set by a hit, cleared by the clock hand passing: the entry is kept one more round.
    used: u8,
    /// In the bucket's first entry: where the bucket's clock hand points (0..4, the low two
    /// bits), and the cache's generation when the bucket was last written (the bits above).
    /// A bucket of an older generation is empty, whatever its entries hold.
    hand: u8,
    ids: [u32; WORD_IDS],
}

/// Four entries that one piece's hash selects, on one 128-byte boundary (two cache lines
/// that the CPU fetches together).
#[derive(Clone, Copy, Default)]
#[repr(C, align(128))]
struct WordBucket([WordEntry; 4]);

/// What the word table knows of a piece.
pub enum Word {
    /// Its ids were appended to `out`.
    Ids,
    /// It is no token and its ids are in the piece tables (`PieceCache::get`).
    Elsewhere,
    /// Unknown; `set_word` stores it in this bucket.
    Miss(usize),
}

/// One character's ids (a character of up to 4 bytes has at most 4); `len == 0`: empty.
#[derive(Clone, Copy, Default)]
struct CharEntry {
    key: u32,
    len: u8,
    nids: u8,
    /// The cache's generation when the entry was written.
    gen: u8,
    ids: [u32; 4],
}

/// Units (characters, runs of ASCII) of clauses merged one character at a time, and how many
/// of them were merged again with the tokens before them because the two formed a token
/// (`RankEncoder::encode_by_chars`). Each costs a merge the whole clause's merge would not
/// make, so a vocabulary whose tokens often span characters (o200k on Korean: 41% of the units
/// of ko_KR merged again, cl100k 24%; Japanese 31% and 13%) merges short clauses faster whole.
/// Only the speed depends on it: both ways give the merge rule's ids.
#[derive(Clone, Copy, Default)]
struct ByChars {
    units: u32,
    redone: u32,
}

/// Units counted before `by_chars_redoes_often` answers yes (a few dozen clauses).
const BY_CHARS_EVIDENCE: u32 = 256;
/// Past this many units both counts are halved, so the answer follows the text as it changes.
const BY_CHARS_WINDOW: u32 = 1 << 16;

/// Generations a cache goes through before `PieceCache::clear` empties it in full: the word
/// table keeps a bucket's generation in six bits.
const GENERATIONS: u8 = 63;

pub struct PieceCache {
    /// Whole pieces of up to 8 bytes -> their id or `NO_TOKEN`, looked up before the rank table:
    /// most pieces of prose and code are one token, and this table (128 KB, 16 bytes a slot)
    /// stays in L2 cache where the rank table's slots (12 MB for o200k) and its filter do not.
    tokens: Vec<TokenEntry>,
    /// Pieces of up to 16 bytes that are no token, and tokens of 9 to 16 bytes, -> their ids:
    /// behind the whole-token table for the pieces it does not settle (pieces of prose and
    /// code that need merging; the longer words), a bucket of four entries with a clock hand
    /// each, so a frequent piece is not evicted by the one-off pieces that hash beside it.
    /// One bucket read answers, where the rank table's probe reads its filter and a slot in
    /// 12 MB (o200k) and the short table three arrays.
    words: Vec<WordBucket>,
    /// Multi-byte characters, apart from the pieces: `encode_by_chars` asks for every
    /// character of a Chinese or Japanese clause, and a key that is the character's bytes as
    /// one `u32` needs no hash loop and no byte comparison.
    chars: Vec<CharEntry>,
    short: Table<8192, SHORT_KEY, 12>,
    long: Table<2048, LONG_KEY, 64>,
    /// Each remembered pair: its answer (`APART` or `MERGED`) in the top two bits, then
    /// a << 32 | gen << 26 | b; 0 is an empty slot.
    pairs: Vec<u64>,
    /// How `RankEncoder::encode_by_chars` has fared with this cache's encoder since the
    /// cache was last emptied (`ByChars`).
    by_chars: ByChars,
    /// This cache's generation (1..=`GENERATIONS`): every entry records the generation it was
    /// written in, and only entries of the current one are found. Emptying the cache for
    /// another encoder (`clear`) moves to the next generation instead of writing its 3 MB,
    /// which cost a short call of a fresh encoder 9-12% of its time (perf, 35 KB of Korean:
    /// the writes, and the other tables they pushed out of L2 cache).
    gen: u8,
}

impl PieceCache {
    fn new() -> PieceCache {
        PieceCache {
            tokens: zeroed(TOKENS),
            words: zeroed(WORD_BUCKETS),
            chars: zeroed(CHARS),
            short: Table::new(),
            long: Table::new(),
            pairs: vec![0; PAIRS],
            by_chars: ByChars::default(),
            // Zeroed memory is generation 0: empty.
            gen: 1,
        }
    }

    /// Counts the units of one clause `encode_by_chars` merged, and how many of them it had
    /// to merge again together with the tokens before them.
    #[inline]
    pub fn note_by_chars(&mut self, units: u32, redone: u32) {
        let b = &mut self.by_chars;
        b.units += units;
        b.redone += redone;
        if b.units >= BY_CHARS_WINDOW {
            b.units /= 2;
            b.redone /= 2;
        }
    }

    /// Whether `encode_by_chars` has merged again more than a third of the units it saw
    /// (of at least `BY_CHARS_EVIDENCE`) since this cache was last emptied.
    #[inline]
    pub fn by_chars_redoes_often(&self) -> bool {
        let b = &self.by_chars;
        b.units >= BY_CHARS_EVIDENCE && 3 * b.redone > b.units
    }

    /// A whole-token entry's `len`: the piece's length with the generation above it.
    #[inline(always)]
    fn token_len(&self, len: usize) -> u32 {
        (self.gen as u32) << 8 | len as u32
    }

    /// Appends the cached ids of the character `ch` (2 to 4 bytes) to `out`; on a miss,
    /// returns the slot `char_insert` takes.
    #[inline]
    pub fn char_get(&self, ch: &[u8], out: &mut Vec<u32>) -> Result<(), usize> {
        debug_assert!((2..=4).contains(&ch.len()));
        let key = char_key(ch);
        let slot = (key.wrapping_mul(0x9e37_79b1) >> CHAR_SHIFT) as usize;
        let e = &self.chars[slot];
        if e.key == key && e.len as usize == ch.len() && e.gen == self.gen {
            append(out, &e.ids[..e.nids as usize]);
            return Ok(());
        }
        Err(slot)
    }

    #[inline]
    pub fn char_insert(&mut self, slot: usize, ch: &[u8], ids: &[u32]) {
        if ids.len() > 4 {
            return;
        }
        let mut e =
            CharEntry { key: char_key(ch), len: ch.len() as u8, nids: ids.len() as u8, gen: self.gen, ids: [0; 4] };
        e.ids[..ids.len()].copy_from_slice(ids);
        self.chars[slot] = e;
    }

    /// The id of `piece` (1 to `TOKEN_KEY` bytes), or `NO_TOKEN` when it is no token, if the
    /// table knows it; else the slot `set_token` takes.
    #[inline]
    pub fn token(&self, piece: &[u8]) -> Result<u32, usize> {
        debug_assert!((1..=TOKEN_KEY).contains(&piece.len()));
        let key = word_key(piece);
        let slot = ((key ^ piece.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> TOKEN_SHIFT) as usize;
        let e = self.tokens[slot];
        if e.key == key && e.len == self.token_len(piece.len()) {
            return Ok(e.id);
        }
        Err(slot)
    }

    #[inline]
    pub fn set_token(&mut self, slot: usize, piece: &[u8], id: u32) {
        self.tokens[slot] = TokenEntry { key: word_key(piece), len: self.token_len(piece.len()), id };
    }

    /// What the word table knows of `piece` (1 to `WORD_KEY` bytes); on a hit with ids, they
    /// are appended to `out`.
    #[inline]
    pub fn word(&mut self, piece: &[u8], out: &mut Vec<u32>) -> Word {
        debug_assert!((1..=WORD_KEY).contains(&piece.len()));
        let (a, b) = words(piece);
        let at = word_hash(a, b, piece.len()) & (WORD_BUCKETS - 1);
        let bucket = &mut self.words[at].0;
        if bucket[0].hand >> 2 != self.gen {
            return Word::Miss(at);
        }
        for e in bucket.iter_mut() {
            if e.a == a && e.b == b && e.len as usize == piece.len() {
                if e.used == 0 {
                    e.used = 1;
                }
                if e.nids == ELSEWHERE {
                    return Word::Elsewhere;
                }
                append(out, &e.ids[..e.nids as usize]);
                return Word::Ids;
            }
        }
        Word::Miss(at)
    }

    /// Stores `piece`'s ids in bucket `at` (from `word`), or, when they are more than fit,
    /// that they are in the piece tables. The entry replaced is an empty one, else the first
    /// the bucket's clock hand finds unused since the hand last passed it.
    #[inline]
    pub fn set_word(&mut self, at: usize, piece: &[u8], ids: &[u32]) {
        let (a, b) = words(piece);
        let bucket = &mut self.words[at].0;
        if bucket[0].hand >> 2 != self.gen {
            // Written in an older generation: empty it, now.
            *bucket = WordBucket::default().0;
            bucket[0].hand = self.gen << 2;
        }
        let way = match bucket.iter().position(|e| e.len == 0) {
            Some(way) => way,
            None => {
                let mut hand = (bucket[0].hand & 3) as usize;
                while bucket[hand].used != 0 {
                    bucket[hand].used = 0;
                    hand = (hand + 1) % 4;
                }
                bucket[0].hand = self.gen << 2 | ((hand + 1) % 4) as u8;
                hand
            }
        };
        let hand = bucket[way].hand;
        let mut e = WordEntry { a, b, len: piece.len() as u8, nids: ELSEWHERE, used: 0, hand, ids: [0; WORD_IDS] };
        if ids.len() <= WORD_IDS {
            e.nids = ids.len() as u8;
            // Element by element: a copy of a variable length became a call to `memcpy`.
            for (to, &id) in e.ids.iter_mut().zip(ids) {
                *to = id;
            }
        }
        bucket[way] = e;
    }

    /// Forgets every entry (the memory stays): the next generation, or, once every
    /// generation has been used, every entry written over with an empty one.
    fn clear(&mut self) {
        self.by_chars = ByChars::default();
        if self.gen < GENERATIONS {
            self.gen += 1;
            return;
        }
        self.gen = 1;
        self.tokens.fill(TokenEntry::default());
        self.words.fill(WordBucket::default());
        self.chars.fill(CharEntry::default());
        self.short.meta.fill(Meta::default());
        self.long.meta.fill(Meta::default());
        self.pairs.fill(0);
    }

    /// Whether tokens `a` and `b` stay apart when their bytes are merged together, if known;
    /// else the bucket `set_pair` takes. Two-way: a bucket holds two pairs, the newer first,
    /// so two pairs that hash alike do not evict each other (a clause of Chinese text asks for
    /// about as many distinct pairs as the memo has slots). A pair and its answer share one
    /// word, so a lookup reads one cache line; ids from 2^26 up are never remembered.
    #[inline]
    pub fn pair(&self, a: u32, b: u32) -> Result<bool, usize> {
        let key = (a as u64) << 32 | b as u64;
        let at = ((key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> PAIR_SHIFT) as usize) & !1;
        if (a | b) >> PAIR_ID_BITS != 0 {
            return Err(at);
        }
        let key = key | (self.gen as u64) << PAIR_ID_BITS;
        for slot in [at, at + 1] {
            let e = self.pairs[slot];
            if e == 0 {
                break;
            }
            if e & PAIR_KEY == key {
                return Ok(e >> 62 == APART);
            }
        }
        Err(at)
    }

    #[inline]
    pub fn set_pair(&mut self, at: usize, a: u32, b: u32, apart: bool) {
        if (a | b) >> PAIR_ID_BITS != 0 {
            return;
        }
        // The older entry of the bucket goes; the one there moves to the second place.
        self.pairs[at + 1] = self.pairs[at];
        let key = (a as u64) << 32 | (self.gen as u64) << PAIR_ID_BITS | b as u64;
        self.pairs[at] = (if apart { APART } else { MERGED }) << 62 | key;
    }

    /// Appends the cached ids of `piece` to `out`; on a miss, returns what `insert` takes.
    #[inline]
    pub fn get(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), (usize, u64)> {
        let h = hash(piece);
        let found = if piece.len() <= SHORT_KEY {
            self.short.get(piece, h, self.gen, out)
        } else if piece.len() <= LONG_KEY {
            self.long.get(piece, h, self.gen, out)
        } else {
            Err(usize::MAX)
        };
        found.map_err(|slot| (slot, h))
    }

    /// Stores `ids` for `piece` where `get` said, if they fit.
    #[inline]
    pub fn insert(&mut self, (slot, h): (usize, u64), piece: &[u8], ids: &[u32]) {
        if piece.len() <= SHORT_KEY {
            self.short.insert(slot, h, self.gen, piece, ids)
        } else if piece.len() <= LONG_KEY {
            self.long.insert(slot, h, self.gen, piece, ids)
        }
    }
}

thread_local! {
    /// This thread's caches, most recently used first, by encoder id.
    static CACHES: RefCell<Vec<(u64, Box<PieceCache>)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's cache for encoder `owner` (made empty if it has none).
pub fn with_cache<T>(owner: u64, f: impl FnOnce(&mut PieceCache) -> T) -> T {
    CACHES.with(|c| {
        let mut caches = c.borrow_mut();
        match caches.iter().position(|(o, _)| *o == owner) {
            Some(0) => {}
            Some(k) => caches[..=k].rotate_right(1),
            None => {
                // Reuse the least recently used cache's memory when the thread has its share:
                // emptying it writes nothing (its next generation, `PieceCache::clear`), where
                // a new one would take page faults all over the pages the call touches (on a
                // busy machine, ten times the cost of encoding a short document).
                let fresh = if caches.len() >= ENCODERS_PER_THREAD {
                    let (_, mut c) = caches.pop().expect("a full list");
                    c.clear();
                    c
                } else {
                    Box::new(PieceCache::new())
                };
                caches.insert(0, (owner, fresh));
            }
        }
        f(&mut caches[0].1)
    })
}

/// `out.extend_from_slice(ids)` for the few ids of a cached entry, without a call to
/// `memcpy` (which cost more than the copy: 8% of the instructions on Chinese text).
#[inline(always)]
pub fn append(out: &mut Vec<u32>, ids: &[u32]) {
    out.reserve(ids.len());
    for &id in ids {
        out.push(id);
    }
}

/// A character's bytes as one number, zero-padded (with the length beside it, unambiguous).
#[inline(always)]
fn char_key(ch: &[u8]) -> u32 {
    // Byte by byte: a copy of a variable length became a call to `memcpy`.
    let at = |k: usize| ch.get(k).map_or(0, |&b| b as u32);
    at(0) | at(1) << 8 | at(2) << 16 | at(3) << 24
}

/// The bytes of a piece of 1 to 8 bytes as one word, which with the length identifies it
/// exactly: overlapping reads (the first and last 4 bytes; the first, middle and last byte of
/// a shorter piece), as the rank table's keys, with no copy of a variable length.
#[inline(always)]
fn word_key(piece: &[u8]) -> u64 {
    let n = piece.len();
    if n == 8 {
        u64::from_le_bytes(piece.try_into().unwrap())
    } else if n >= 4 {
        let half = |at: usize| u32::from_le_bytes(piece[at..at + 4].try_into().unwrap()) as u64;
        half(0) | half(n - 4) << 32
    } else {
        (piece[0] as u64) << 16 | (piece[n / 2] as u64) << 8 | piece[n - 1] as u64
    }
}

/// The bytes of a piece of 1 to 16 bytes as two words, which with the length identify it
/// exactly: overlapping reads (the first and last 8 bytes; the first and last 4; the first,
/// middle and last byte of a shorter piece), as the rank table's keys, with no copy of a
/// variable length.
#[inline(always)]
fn words(piece: &[u8]) -> (u64, u64) {
    let n = piece.len();
    let eight = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap());
    let four = |at: usize| u32::from_le_bytes(piece[at..at + 4].try_into().unwrap()) as u64;
    if n >= 8 {
        (eight(0), eight(n - 8))
    } else if n >= 4 {
        (four(0) | four(n - 4) << 32, 0)
    } else {
        ((piece[0] as u64) << 16 | (piece[n / 2] as u64) << 8 | piece[n - 1] as u64, 0)
    }
}

/// The word-table bucket of `piece` (for tests that fill one bucket).
#[cfg(test)]
pub(crate) fn word_bucket(piece: &[u8]) -> usize {
    let (a, b) = words(piece);
    word_hash(a, b, piece.len()) & (WORD_BUCKETS - 1)
}

/// The word table's bucket: one folded 64x64->128 multiply of the two words and the length
/// (no loop over the bytes).
#[inline(always)]
fn word_hash(a: u64, b: u64, n: usize) -> usize {
    let x = a ^ 0x9e37_79b9_7f4a_7c15;
    let y = b ^ 0xc2b2_ae3d_27d4_eb4f ^ (n as u64) << 56;
    let r = (x as u128).wrapping_mul(y as u128);
    ((r as u64) ^ ((r >> 64) as u64)) as usize
}

/// One multiply per 8 bytes, the last word read overlapping (no copy of a remainder, which
/// became a call to `memcpy`); never 0 (0 marks an empty slot).
#[inline(always)]
fn hash(piece: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let n = piece.len();
    let word = |at: usize| u64::from_le_bytes(piece[at..at + 8].try_into().unwrap());
    let mix = |h: u64, w: u64| (h.rotate_left(26) ^ w).wrapping_mul(K);
    let mut h = n as u64;
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            h = mix(h, word(at));
            at += 8;
        }
        h = mix(h, word(n - 8));
    } else if n >= 4 {
        let half = |at: usize| u32::from_le_bytes(piece[at..at + 4].try_into().unwrap()) as u64;
        h = mix(h, half(0) | half(n - 4) << 32);
    } else if n > 0 {
        h = mix(h, (piece[0] as u64) << 16 | (piece[n / 2] as u64) << 8 | piece[n - 1] as u64);
    }
    (h ^ (h >> 32)) | 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_need_the_same_bytes() {
        let mut c = PieceCache::new();
        let mut out = vec![];
        let long = [b'x'; 100];
        for piece in [&b"abc"[..], &long[..]] {
            let at = c.get(piece, &mut out).unwrap_err();
            c.insert(at, piece, &[1, 2]);
            assert!(c.get(piece, &mut out).is_ok());
        }
        assert_eq!(out, [1, 2, 1, 2]);
        // The same slot and hash, forced: another key of the same length is still a miss.
        let (slot, _) = c.get(b"abc", &mut vec![]).map(|_| (0, 0)).unwrap_or_default();
        let slot = slot.max((hash(b"abc") as usize) & 8191);
        c.short.meta[slot].hash = hash(b"abd");
        assert!(c.get(b"abd", &mut out).is_err());
        // Too long, or too many ids, to store: never a hit.
        for (piece, ids) in [(&[b'y'; LONG_KEY + 1][..], 1), (&b"abcdef"[..], 13), (&[b'z'; 40][..], 65)] {
            let at = c.get(piece, &mut out).unwrap_err();
            c.insert(at, piece, &vec![7; ids]);
            assert!(c.get(piece, &mut out).is_err());
        }
        assert_eq!(out, [1, 2, 1, 2]);
        // Characters: the same key and length, or a miss (a 2-byte key padded equals no 3-byte one).
        let mut out = vec![];
        let slot = c.char_get("中".as_bytes(), &mut out).unwrap_err();
        c.char_insert(slot, "中".as_bytes(), &[5, 6]);
        assert!(c.char_get("中".as_bytes(), &mut out).is_ok());
        assert!(c.char_get(&"中".as_bytes()[..2], &mut out).is_err());
        assert!(c.char_get("文".as_bytes(), &mut out).is_err());
        assert_eq!(out, [5, 6]);
    }

    #[test]
    fn whole_tokens_need_the_same_bytes_and_length() {
        let mut c = PieceCache::new();
        // Every length 1..=8, pieces that share their first, middle and last bytes, and "no token".
        let pieces: [&[u8]; 10] =
            [b"a", b"ab", b"abc", b"axc", b"abcd", b"abcde", b"abxde", b"abcdef", b"abcdefg", b"abcdefgh"];
        for (i, p) in pieces.iter().enumerate() {
            let slot = c.token(p).unwrap_err();
            c.set_token(slot, p, if i == 3 { NO_TOKEN } else { i as u32 });
        }
        for (i, p) in pieces.iter().enumerate() {
            if let Ok(id) = c.token(p) {
                assert_eq!(id, if i == 3 { NO_TOKEN } else { i as u32 }, "{p:?}");
            }
        }
        // A collision replaces the entry; a piece never seen is a miss, never another's id.
        for p in [&b"b"[..], b"ba", b"abd", b"abcx", b"abcdeg", b"abcdefgi", b"\0\0\0\0"] {
            assert!(c.token(p).is_err(), "{p:?}");
        }
        assert_ne!(word_key(b"abcde"), word_key(b"abxde"));
        assert_ne!(word_key(b"abc"), word_key(b"axc"));
    }

    #[test]
    fn words_need_the_same_bytes_and_length() {
        let mut c = PieceCache::new();
        // Every length 1..=16, pieces that share their first and last words or bytes; up to
        // three ids inline, more kept as "elsewhere".
        let pieces: [&[u8]; 12] = [
            b"a",
            b"abc",
            b"axc",
            b"abcde",
            b"abxde",
            b"abcdefgh",
            b"abcdefghi",
            b"abcdefgXhi",
            b"abcdefgYhi",
            b"0123456789abcdef",
            b"0123456789abcdeF",
            b"x123456789abcdef",
        ];
        let ids = |i: usize| -> Vec<u32> { (0..i as u32 % 5).map(|k| 100 * i as u32 + k).collect() };
        for (i, p) in pieces.iter().enumerate() {
            let Word::Miss(at) = c.word(p, &mut vec![]) else { panic!("{p:?} seen before it was stored") };
            c.set_word(at, p, &ids(i));
        }
        for (i, p) in pieces.iter().enumerate() {
            let mut out = vec![];
            match c.word(p, &mut out) {
                Word::Ids => assert_eq!(out, ids(i), "{p:?}"),
                Word::Elsewhere => assert!(ids(i).len() > WORD_IDS, "{p:?}"),
                Word::Miss(_) => panic!("{p:?} lost: its bucket holds four"),
            }
        }
        for p in [&b"b"[..], b"abd", b"abcdf", b"abcdefgZhi", b"0123456789abcdeG", b"abcdefghij"] {
            assert!(matches!(c.word(p, &mut vec![]), Word::Miss(_)), "{p:?}");
        }
        assert_ne!(words(b"abcdefgXhi"), words(b"abcdefgYhi"));
        assert_ne!(words(b"abc"), words(b"axc"));
    }

    /// Distinct pieces of `len` bytes whose hash selects the same word-table bucket.
    fn colliding(count: usize, len: usize) -> (usize, Vec<Vec<u8>>) {
        let bucket_of = word_bucket;
        let piece = |k: u64| format!("{k:0len$}").into_bytes();
        let at = bucket_of(&piece(0));
        (at, (0..).map(piece).filter(|p| bucket_of(p) == at).take(count).collect())
    }

    #[test]
    fn a_full_bucket_evicts_what_was_not_used_since_the_hand_passed() {
        let mut c = PieceCache::new();
        let (at, p) = colliding(8, 10);
        let hit = |c: &mut PieceCache, p: &[u8]| matches!(c.word(p, &mut vec![]), Word::Ids);
        let put = |c: &mut PieceCache, k: usize| {
            let Word::Miss(slot) = c.word(&p[k], &mut vec![]) else { panic!("piece {k} already there") };
            assert_eq!(slot, at);
            c.set_word(slot, &p[k], &[k as u32]);
        };
        for k in 0..4 {
            put(&mut c, k);
        }
        assert!((0..4).all(|k| hit(&mut c, &p[k])));
        // All four used: the hand clears them all and takes its first way (piece 0).
        put(&mut c, 4);
        assert!(!hit(&mut c, &p[0]));
        // Pieces 1 and 2 used again since; 3 and 4 not: the next two go where 3 and 4 were.
        assert!(hit(&mut c, &p[1]) && hit(&mut c, &p[2]));
        put(&mut c, 5);
        put(&mut c, 6);
        assert!(hit(&mut c, &p[1]) && hit(&mut c, &p[2]) && hit(&mut c, &p[5]) && hit(&mut c, &p[6]));
        assert!(!hit(&mut c, &p[3]) && !hit(&mut c, &p[4]));
        // Never more than four: a seventh piece leaves exactly four of them.
        put(&mut c, 7);
        assert_eq!((0..8).filter(|&k| hit(&mut c, &p[k])).count(), 4);
        // Every hit returned the piece's own id.
        for (k, piece) in p.iter().enumerate() {
            let mut out = vec![];
            if let Word::Ids = c.word(piece, &mut out) {
                assert_eq!(out, [k as u32]);
            }
        }
    }

    #[test]
    fn pairs_keep_their_answer_and_huge_ids_are_not_remembered() {
        let mut c = PieceCache::new();
        let top = (1 << PAIR_ID_BITS) - 1;
        for (a, b, apart) in [(1, 2, true), (2, 1, false), (0, 0, true), (top, top, false), (top, 0, true)] {
            let at = c.pair(a, b).unwrap_err();
            c.set_pair(at, a, b, apart);
            assert_eq!(c.pair(a, b), Ok(apart), "{a} {b}");
        }
        for (a, b) in [(top + 1, 5), (5, top + 1), (u32::MAX, u32::MAX)] {
            let at = c.pair(a, b).unwrap_err();
            c.set_pair(at, a, b, true);
            assert!(c.pair(a, b).is_err(), "{a} {b}");
        }
        assert_eq!(c.pair(1, 2), Ok(true));
        assert_eq!(c.pair(top, 0), Ok(true));
    }

    /// Stores one entry in every table of `c`, each under `id`.
    fn fill_every_table(c: &mut PieceCache, id: u32) {
        let slot = c.token(b"abc").unwrap_err();
        c.set_token(slot, b"abc", id);
        let Word::Miss(at) = c.word(b"abcdefghij", &mut vec![]) else { panic!("a word seen before it was stored") };
        c.set_word(at, b"abcdefghij", &[id]);
        let slot = c.char_get("中".as_bytes(), &mut vec![]).unwrap_err();
        c.char_insert(slot, "中".as_bytes(), &[id]);
        for piece in [&[b'x'; 20][..], &[b'y'; 100][..]] {
            let at = c.get(piece, &mut vec![]).unwrap_err();
            c.insert(at, piece, &[id]);
        }
        let at = c.pair(1, 2).unwrap_err();
        c.set_pair(at, 1, 2, id % 2 == 0);
    }

    /// What `c` finds of the entries `fill_every_table` stores, table by table.
    fn found(c: &mut PieceCache) -> Vec<Option<Vec<u32>>> {
        let mut out = vec![c.token(b"abc").ok().map(|id| vec![id])];
        let mut ids = vec![];
        out.push(matches!(c.word(b"abcdefghij", &mut ids), Word::Ids).then_some(ids));
        let mut ids = vec![];
        out.push(c.char_get("中".as_bytes(), &mut ids).is_ok().then_some(ids));
        for piece in [&[b'x'; 20][..], &[b'y'; 100][..]] {
            let mut ids = vec![];
            out.push(c.get(piece, &mut ids).is_ok().then_some(ids));
        }
        out.push(c.pair(1, 2).ok().map(|apart| vec![apart as u32]));
        out
    }

    #[test]
    fn clearing_forgets_every_table_through_every_generation() {
        let mut c = PieceCache::new();
        // Three times round the generations, and both sides of the full clear at the wrap.
        for round in 0..3 * GENERATIONS as u32 + 2 {
            assert!(found(&mut c).iter().all(Option::is_none), "round {round}, generation {}", c.gen);
            fill_every_table(&mut c, round);
            let want = [round, round, round, round, round, (round % 2 == 0) as u32];
            assert_eq!(found(&mut c), want.map(|x| Some(vec![x])), "round {round}");
            c.clear();
        }
    }

    #[test]
    fn the_by_characters_count_needs_evidence_follows_the_text_and_is_emptied() {
        let mut c = PieceCache::new();
        c.note_by_chars(BY_CHARS_EVIDENCE - 1, BY_CHARS_EVIDENCE - 1);
        assert!(!c.by_chars_redoes_often(), "too few units to judge");
        c.note_by_chars(1, 0);
        assert!(c.by_chars_redoes_often());
        // Many units seldom merged again: the old count fades (halved past the window).
        for _ in 0..8 {
            c.note_by_chars(BY_CHARS_WINDOW / 4, BY_CHARS_WINDOW / 40);
        }
        assert!(!c.by_chars_redoes_often());
        assert!(c.by_chars.units < BY_CHARS_WINDOW);
        c.note_by_chars(BY_CHARS_WINDOW / 2, BY_CHARS_WINDOW / 2);
        assert!(c.by_chars_redoes_often());
        c.clear();
        assert!(!c.by_chars_redoes_often(), "a cache handed to another encoder starts afresh");
    }

    #[test]
    fn a_bucket_of_an_older_generation_is_refilled_from_empty() {
        let mut c = PieceCache::new();
        let (at, p) = colliding(6, 10);
        for (k, piece) in p[..4].iter().enumerate() {
            c.set_word(at, piece, &[k as u32]);
        }
        c.clear();
        // The four entries of the old generation count as empty: four new ones fit, none lost.
        for (k, piece) in p[2..6].iter().enumerate() {
            let Word::Miss(slot) = c.word(piece, &mut vec![]) else { panic!("piece {k} found after clear") };
            c.set_word(slot, piece, &[10 + k as u32]);
        }
        for (k, piece) in p[2..6].iter().enumerate() {
            let mut out = vec![];
            assert!(matches!(c.word(piece, &mut out), Word::Ids) && out == [10 + k as u32], "piece {k}");
        }
        assert!(p[..2].iter().all(|piece| matches!(c.word(piece, &mut vec![]), Word::Miss(_))));
    }

    #[test]
    fn one_cache_is_under_4_6_mb() {
        let c = PieceCache::new();
        let table = |meta: usize, keys: usize, ids: usize| meta * std::mem::size_of::<Meta>() + keys + 4 * ids;
        let bytes = table(c.short.meta.len(), c.short.keys.len(), c.short.ids.len())
            + table(c.long.meta.len(), c.long.keys.len(), c.long.ids.len())
            + c.chars.len() * std::mem::size_of::<CharEntry>()
            + c.tokens.len() * std::mem::size_of::<TokenEntry>()
            + c.words.len() * std::mem::size_of::<WordBucket>()
            + c.pairs.len() * 8;
        assert!(bytes < 4_600_000, "{bytes}");
    }

    #[test]
    fn each_thread_keeps_a_few_encoders() {
        let fill = |owner: u64| {
            with_cache(owner, |c| c.get(b"k", &mut vec![]).map_err(|s| c.insert(s, b"k", &[owner as u32])))
        };
        let seen = |owner: u64| {
            let mut out = vec![];
            with_cache(owner, |c| c.get(b"k", &mut out).is_ok().then(|| out[0]))
        };
        std::thread::spawn(move || {
            let _ = fill(1);
            let _ = fill(2);
            assert_eq!(seen(1), Some(1));
            assert_eq!(seen(2), Some(2));
            let _ = fill(3); // takes over encoder 1's cache, the least recently used, emptied
            assert_eq!(seen(2), Some(2));
            assert_eq!(seen(3), Some(3));
            assert_eq!(seen(1), None);
            with_cache(1, |c| c.set_pair(c.pair(1, 2).unwrap_err(), 1, 2, true));
            assert_eq!(
                with_cache(3, |c| c.pair(1, 2)),
                Err((0x9e37_79b9_7f4a_7c15u64.wrapping_mul(1 << 32 | 2) >> PAIR_SHIFT) as usize & !1)
            );
            // encoder 4 gets encoder 1's memory, emptied
            assert!(with_cache(4, |c| c.pair(1, 2)).is_err());
            CACHES.with(|c| assert_eq!(c.borrow().len(), ENCODERS_PER_THREAD));
        })
        .join()
        .unwrap();
    }
}
