//! tiktoken's byte-level BPE encoder over a rank map.
//!
//! Rule (identical to tiktoken's): pre-tokenize; a piece that is itself a token is one id;
//! otherwise start from single bytes and repeatedly merge the adjacent pair whose
//! concatenation has the lowest rank, the leftmost on ties, until no pair is a token.
//! A token's rank is its id. Trained and imported vocabularies share this encoder.
//!
//! Cost: short pieces use a flat scan (cheapest for the usual 2–20 bytes). Long pieces keep
//! their pair ranks in a block-min tree over a linked list of parts, so a piece of n bytes costs
//! O(n log n) with a log that stays in cache, instead of tiktoken's O(n²): ten megabytes of one
//! repeated character cost the same per byte as a hundred kilobytes.

use super::min_tree::{MinTree, NONE};
use super::piece_cache::{self, PieceCache, Word};
use super::rank_table::RankTable;
use super::seams::Seams;
use crate::encode::frozen::{Reader, Writer};
use crate::encode::table::Table;
use crate::encode::{unknown_id, Encode, Kind, Rng, Trace};
use crate::error::CoreError;
use crate::pretok::Splitter;

/// Pieces at least this long take the `MinTree` path.
pub(crate) const HEAP_FROM: usize = 128;
/// Pieces at least this long that hold a multi-byte character are merged one character (or one
/// run of ASCII) at a time (`encode_by_chars`); shorter ones merge as fast as a whole.
const BY_CHARS_FROM: usize = 9;
/// Pieces shorter than this go by characters only while `encode_by_chars` seldom has to merge
/// characters again (`PieceCache::by_chars_redoes_often`). Cold ko_KR with o200k (41% of its
/// units merged again), CPU time against always by characters, median of 41 paired calls:
/// merging whole the pieces below 17 bytes 0.86x, below 25 0.84x, below 33 0.82x (another run:
/// 0.88x, 0.77x; all below `HEAP_FROM` 0.80x); with cl100k (24%) merging whole below 25 bytes
/// cost 1.07x, so the choice follows the encoder's own count.
const BY_CHARS_ALWAYS_FROM: usize = 25;
/// Whether every multi-byte character of `piece` lies in U+A000-U+DFFF (the Hangul syllables'
/// block and its neighbours): the only text on which merging short clauses whole was measured
/// faster (`BY_CHARS_ALWAYS_FROM`). On 1 MB of random bytes (other characters, mostly) with
/// o200k it looked slower (about 1.3x the time, five noisy rounds), so it is kept from them.
#[inline]
fn hangul_block(piece: &[u8]) -> bool {
    piece.iter().all(|&b| b < 0xC0 || (0xEA..=0xED).contains(&b))
}

/// `encode_by_chars` gives up when it would merge again more than this many bytes at once.
const BY_CHARS_SEGMENT: usize = 48;
/// Pieces of at least twice this are merged by chunks of this many bytes (`encode_chunked`).
const CHUNK: usize = 4096;
/// Chunk results `encode_chunked` remembers (a run of a 3-byte character cut at token
/// boundaries repeats with a period of up to 3 chunks).
const MEMO: usize = 4;

pub struct RankEncoder {
    ranks: RankTable,
    /// the id of each single byte (where every merge loop starts)
    byte_id: [u32; 256],
    /// The bytes of every token, ordinary and special, one after another in id order: one
    /// block instead of one per token, so loading and dropping an encoder leaves the allocator
    /// a handful of large blocks rather than 100k small ones to sort out during the next call.
    /// (Like `ends` and `lens`, and the tables of `ranks` and `seams`: owned when built here,
    /// read in place when thawed, `encode/table.rs`.)
    arena: Table<u8>,
    /// Token `id`'s bytes are `arena[ends[id] - lens[id]..ends[id]]`.
    ends: Table<u32>,
    splitter: Splitter,
    /// the byte length of each token (0 for unused ids and for `empty`), which also walks
    /// back over appended ids
    lens: Table<u32>,
    /// The id of the empty token, if there is one (OpenAI's Whisper multilingual rank file has
    /// one at 50256). It decodes to nothing and no text encodes to it: it is not in `ranks`,
    /// and every piece and every pair a merge looks up has at least one byte.
    empty: Option<u32>,
    /// tells this encoder's entries in a thread's piece cache from another encoder's
    uid: u64,
    /// where each byte pair sits in the tokens, for `token_spans`
    seams: Seams,
}

static NEXT_UID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl RankEncoder {
    /// `tokens`: (id, bytes) of the ordinary tokens; every single byte must be one of them.
    /// `specials`: (text, id) of the special tokens, which this encoder only decodes (the
    /// special-token rule is `encode::Specials`, in front of every encoder).
    pub fn new<B: AsRef<[u8]>>(
        tokens: Vec<(u32, B)>,
        specials: Vec<(String, u32)>,
        splitter: Splitter,
    ) -> Result<Self, CoreError> {
        let max_id = tokens.iter().map(|t| t.0).chain(specials.iter().map(|s| s.1)).max().unwrap_or(0);
        let mut lens = vec![0u32; max_id as usize + 1];
        let mut ranks = RankTable::with_capacity(tokens.len());
        let mut empty: Option<u32> = None;
        for (id, bytes) in &tokens {
            let (id, bytes) = (*id, bytes.as_ref());
            if lens[id as usize] != 0 || empty == Some(id) {
                return Err(CoreError::input(format!("token id {id} appears twice; give every token its own id")));
            }
            if bytes.is_empty() {
                if let Some(first) = empty {
                    return Err(CoreError::input(format!("tokens {first} and {id} are both empty; keep one")));
                }
                empty = Some(id);
                continue;
            }
            if !ranks.insert(bytes, id) {
                return Err(CoreError::input(format!(
                    "two tokens have the bytes of token {id} ({:?}); keep one",
                    String::from_utf8_lossy(bytes)
                )));
            }
            lens[id as usize] = bytes.len() as u32;
        }
        let mut byte_id = [0u32; 256];
        for (b, slot) in byte_id.iter_mut().enumerate() {
            *slot = ranks.get(&[b as u8]).ok_or_else(|| {
                CoreError::input(format!(
                    "byte 0x{b:02x} has no token, and a byte-level vocabulary needs all 256 bytes; add it"
                ))
            })?;
        }
        for (s, id) in &specials {
            if lens[*id as usize] != 0 || empty == Some(*id) {
                return Err(CoreError::input(format!(
                    "special token {s:?} has id {id}, which another token already has; give it a free id"
                )));
            }
            if s.is_empty() {
                return Err(CoreError::input(format!("special token {id} is empty; name it")));
            }
            lens[*id as usize] = s.len() as u32;
        }
        let mut ends = Vec::with_capacity(lens.len());
        let mut end = 0u64;
        for &len in &lens {
            end += len as u64;
            ends.push(u32::try_from(end).map_err(|_| CoreError::input("the tokens' bytes pass 4 GiB; shorten them"))?);
        }
        let mut arena = vec![0u8; end as usize];
        let (ends_ref, lens_ref) = (&ends, &lens);
        let mut put = |id: u32, bytes: &[u8]| {
            let e = ends_ref[id as usize] as usize;
            arena[e - lens_ref[id as usize] as usize..e].copy_from_slice(bytes);
        };
        for (id, bytes) in &tokens {
            put(*id, bytes.as_ref());
        }
        for (s, id) in &specials {
            put(*id, s.as_bytes());
        }
        let seams = Seams::new(&tokens.iter().map(|(_, b)| b.as_ref()).collect::<Vec<_>>());
        let uid = NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (arena, ends, lens) = (arena.into(), ends.into(), lens.into());
        Ok(RankEncoder { ranks, byte_id, arena, ends, splitter, lens, empty, uid, seams })
    }

    /// Gives the encoder a new identity in the threads' piece caches, so its next call starts
    /// with empty caches as a fresh encoder's would (for benchmarks of the cold path that should
    /// not time or profile building the tables again).
    pub fn forget_caches(&mut self) {
        self.uid = NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn rank(&self, bytes: &[u8]) -> Option<u32> {
        self.ranks.get(bytes)
    }

    /// (id, bytes) of every token, ordinary and special, by id.
    pub fn tokens(&self) -> impl Iterator<Item = (u32, &[u8])> {
        (0..self.lens.len() as u32).filter_map(|id| self.token_bytes(id).map(|b| (id, b)))
    }

    /// Encodes text with no special-token handling (tiktoken's `encode_ordinary`).
    pub fn encode_ordinary(&self, text: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encode_into(text, &mut out)?;
        Ok(out)
    }

    /// Appends the ids of one pre-tokenized piece.
    #[inline]
    /// Calls `f` with a function that appends the ids of one piece (as `segment_piece` does),
    /// holding this thread's piece cache and one scratch area for the whole call: for callers
    /// that cut the text themselves and segment many pieces (superword BPE's runs).
    pub fn with_pieces<T>(&self, f: impl FnOnce(&mut dyn FnMut(&[u8], &mut Vec<u32>)) -> T) -> T {
        let mut parts = FlatParts::new();
        piece_cache::with_cache(self.uid, |cache| f(&mut |piece, out| self.encode_piece(piece, &mut parts, cache, out)))
    }

    fn encode_piece(&self, piece: &[u8], parts: &mut FlatParts, cache: &mut PieceCache, out: &mut Vec<u32>) {
        let n = piece.len();
        // A piece of one or two bytes (28% of the pieces of prose: punctuation, spaces, short
        // words) needs no table of the thread's: one byte is its byte's token; two bytes are
        // one token if the pair is one (the rank table's direct array of byte pairs, whose hot
        // part stays in L1 cache), else their two bytes' tokens, the only merge there is.
        if n <= 2 {
            if let [a, b] = *piece {
                if let Some(id) = self.ranks.get(piece) {
                    return out.push(id);
                }
                out.reserve(2);
                out.push(self.byte_id[a as usize]);
                return out.push(self.byte_id[b as usize]);
            }
            if let [a] = *piece {
                return out.push(self.byte_id[a as usize]);
            }
        }
        // Whether the piece is one token: a short piece asks the thread's whole-token table
        // first (it stays in L2 cache; the rank table's slots live in L3 or memory); a piece of
        // 9 to 16 bytes, the word table (below).
        if n <= piece_cache::TOKEN_KEY {
            match cache.token(piece) {
                Ok(piece_cache::NO_TOKEN) => {}
                Ok(id) => return out.push(id),
                Err(slot) => {
                    let id = self.ranks.get(piece);
                    cache.set_token(slot, piece, id.unwrap_or(piece_cache::NO_TOKEN));
                    if let Some(id) = id {
                        return out.push(id);
                    }
                }
            }
        }
        // A piece of up to 16 bytes that is no token (or not known to be one) asks the word
        // table, which holds its ids when they are few.
        let mut word = None;
        if n <= piece_cache::WORD_KEY {
            match cache.word(piece, out) {
                Word::Ids => return,
                Word::Elsewhere => {}
                Word::Miss(at) => word = Some(at),
            }
        }
        if n > piece_cache::TOKEN_KEY && word.is_some() || n > piece_cache::WORD_KEY {
            if let Some(id) = self.ranks.get(piece) {
                if let Some(at) = word {
                    cache.set_word(at, piece, &[id]);
                }
                return out.push(id);
            }
        }
        self.merge_piece(piece, parts, cache, out, word);
    }

    /// Appends the ids of a piece that is no token, through the piece tables; `word`: the
    /// word-table bucket that learns them (there, when they fit, instead of the piece tables).
    fn merge_piece(
        &self,
        piece: &[u8],
        parts: &mut FlatParts,
        cache: &mut PieceCache,
        out: &mut Vec<u32>,
        word: Option<usize>,
    ) {
        let start = out.len();
        if piece.len() < HEAP_FROM {
            if let Err(slot) = cache.get(piece, out) {
                let n = piece.len();
                let whole = n < BY_CHARS_ALWAYS_FROM && cache.by_chars_redoes_often() && hangul_block(piece);
                let by_chars = n >= BY_CHARS_FROM && !whole;
                let multibyte = by_chars && piece.iter().any(|&b| b >= 0x80);
                if !(multibyte && self.encode_by_chars(piece, parts, cache, out)) {
                    let m = self.merge_flat(piece, NONE, parts);
                    piece_cache::append(out, &parts.ids[..m]);
                }
                if word.is_none() || out.len() - start > piece_cache::WORD_IDS {
                    cache.insert(slot, piece, &out[start..]);
                }
            }
        } else if piece.len() < 2 * CHUNK {
            let (_, ids) = self.merge_long(piece, NONE);
            out.extend_from_slice(&ids);
        } else {
            self.encode_chunked(piece, out);
        }
        if let Some(at) = word {
            cache.set_word(at, piece, &out[start..]);
        }
    }

    /// The ids of a piece of multi-byte characters (a clause of Chinese or Japanese, which the
    /// patterns keep as one piece of tens of bytes), one character at a time, a run of ASCII
    /// inside it (`PCI`, `cpus`: the patterns glue a Latin word to the Chinese before it) as one
    /// unit; false (and `out` as it was) when it gives up, and the caller merges the piece as a
    /// whole. A unit can be any run of bytes: the argument below never needs a character.
    ///
    /// By the two facts of `encode_chunked`: if the ids so far are BPE(piece[..p]) and the next
    /// character's ids are BPE(c), then BPE(piece[..p] ++ c) is their concatenation when the
    /// last id so far and the first of c are compatible. When they are not (the two characters
    /// form a token), the last token is given back (its start is a boundary of BPE(piece[..p]),
    /// so the ids before it are still BPE of what they cover) and its bytes are merged again
    /// together with the character, and so on back. A character's ids come from the piece
    /// cache and compatibility from the pair memo, so a character usually costs two lookups
    /// instead of a merge loop over the whole clause, whose cost grows with its square.
    fn encode_by_chars(&self, piece: &[u8], parts: &mut FlatParts, cache: &mut PieceCache, out: &mut Vec<u32>) -> bool {
        let base = out.len();
        let (mut units, mut redone) = (0, 0);
        let mut p = 0;
        while p < piece.len() {
            units += 1;
            let q = if piece[p] < 0x80 {
                // A run of ASCII (a word or a number inside a clause) is one unit.
                piece[p + 1..].iter().position(|&b| b >= 0x80).map_or(piece.len(), |k| p + 1 + k)
            } else {
                (p + utf8_len(piece[p])).min(piece.len())
            };
            let mut s = p; // the segment [s, q) is merged anew; out[base..] covers piece[..s]
            loop {
                let at = out.len();
                if s == p && q - p > 1 && piece[p] >= 0x80 {
                    self.char_into(&piece[p..q], parts, cache, out);
                } else {
                    self.pure_into(&piece[s..q], parts, cache, out);
                }
                if at == base || self.compatible_in(piece, s, out[at - 1], out[at], parts, cache) {
                    break;
                }
                redone += 1;
                out.truncate(at);
                let last = out.pop().unwrap_or(0);
                s -= self.lens[last as usize] as usize;
                if q - s > BY_CHARS_SEGMENT {
                    out.truncate(base);
                    cache.note_by_chars(units, redone);
                    return false;
                }
            }
            p = q;
        }
        cache.note_by_chars(units, redone);
        true
    }

    /// Appends BPE(segment) by the merge loop alone (no whole-token shortcut: that is for whole
    /// pieces only), through the piece cache.
    #[inline]
    fn pure_into(&self, segment: &[u8], parts: &mut FlatParts, cache: &mut PieceCache, out: &mut Vec<u32>) {
        if segment.len() == 1 {
            out.push(self.byte_id[segment[0] as usize]);
            return;
        }
        let Err(slot) = cache.get(segment, out) else { return };
        let m = self.merge_flat(segment, NONE, parts);
        cache.insert(slot, segment, &parts.ids[..m]);
        piece_cache::append(out, &parts.ids[..m]);
    }

    /// Appends BPE(ch) for one multi-byte character, through the cache's character table.
    #[inline]
    fn char_into(&self, ch: &[u8], parts: &mut FlatParts, cache: &mut PieceCache, out: &mut Vec<u32>) {
        let Err(slot) = cache.char_get(ch, out) else { return };
        if let [a, b, c] = *ch {
            let (ids, m) = self.merge3(a, b, c);
            cache.char_insert(slot, ch, &ids[..m]);
            return piece_cache::append(out, &ids[..m]);
        }
        let m = self.merge_flat(ch, NONE, parts);
        cache.char_insert(slot, ch, &parts.ids[..m]);
        piece_cache::append(out, &parts.ids[..m]);
    }

    /// The merge rule on three bytes (a character of Chinese, Japanese or Korean), in closed
    /// form: the lower ranked of the pairs `ab` and `bc` merges first (`ab` on a tie), then
    /// the remaining two parts merge if their concatenation, the three bytes, is a token. So
    /// the result is the whole if it is a token and some pair is one; else the lower pair and
    /// the byte beside it; else the three bytes. Two lookups in the rank table's direct array
    /// of byte pairs and at most one probe, where `merge_flat` set up its arrays and scanned
    /// them (367 instructions a character, callgrind, Japanese with cl100k; every distinct
    /// character of a cold call goes through here). Equal to `merge_flat`: tested on every
    /// 3-byte character of cl100k and o200k and on all 3-byte strings over a small alphabet.
    #[inline]
    fn merge3(&self, a: u8, b: u8, c: u8) -> ([u32; 3], usize) {
        let ab = self.ranks.get(&[a, b]).unwrap_or(NONE);
        let bc = self.ranks.get(&[b, c]).unwrap_or(NONE);
        let byte = |x: u8| self.byte_id[x as usize];
        if ab == NONE && bc == NONE {
            return ([byte(a), byte(b), byte(c)], 3);
        }
        if let Some(whole) = self.ranks.get(&[a, b, c]) {
            return ([whole, 0, 0], 1);
        }
        if ab <= bc {
            ([ab, byte(c), 0], 2)
        } else {
            ([byte(a), bc, 0], 2)
        }
    }

    /// Whether tokens `a` and `b`, which meet at byte `seam` of `piece` (`a` ends there and
    /// `b` starts there), are compatible, remembered in the thread's pair memo. Their bytes are
    /// read where they lie in the piece: a pair the memo has not seen (a third of the pairs of
    /// a Chinese clause, cold) costs the two lengths, no copy and no read of the tokens' bytes
    /// elsewhere in memory, then usually one probe of the rank table (`token_spans`).
    #[inline]
    fn compatible_in(
        &self,
        piece: &[u8],
        seam: usize,
        a: u32,
        b: u32,
        parts: &mut FlatParts,
        cache: &mut PieceCache,
    ) -> bool {
        match cache.pair(a, b) {
            Ok(known) => known,
            Err(slot) => {
                let (la, lb) = (self.lens[a as usize] as usize, self.lens[b as usize] as usize);
                let joined = &piece[seam - la..seam + lb];
                let ok = !self.token_spans(joined, la) || {
                    let m = self.merge_flat(joined, NONE, parts);
                    parts.starts[..m].contains(&(la as u32))
                };
                cache.set_pair(slot, a, b, ok);
                ok
            }
        }
    }

    /// Whether some token is made of bytes on both sides of `seam` in `joined`.
    ///
    /// When none is, two tokens whose bytes are `joined[..seam]` and `joined[seam..]` are
    /// compatible without a merge: a merge across the seam would first join a part ending at
    /// the seam with one starting there (no part spans it before), and its result would be a
    /// token spanning the seam. Between two Chinese characters such a token is rare (202 of
    /// 51,325 distinct pairs of the kernel's zh_CN documentation with cl100k), and `Seams`
    /// names the few substrings that could be one, so this costs about one probe of the rank
    /// table where the merge took a thousand instructions.
    #[inline]
    fn token_spans(&self, joined: &[u8], seam: usize) -> bool {
        self.seams.any_across(joined, seam, |i, j| self.ranks.get(&joined[i..j]).is_some())
    }

    /// The ids of a long piece (10 MB of one letter is one piece), by chunks, in time linear in
    /// its length with a small constant when its content repeats.
    ///
    /// Two facts about the merge rule make this exact (docs/byte-level-encoder.md):
    /// 1. If BPE(X) has a part boundary at p, then BPE(X) = BPE(X[..p]) ++ BPE(X[p..]): no merge
    ///    ever crossed p, so each side saw the same merges, in the same order, as it would alone.
    /// 2. If BPE(A) ends with token s and BPE(B) starts with token t, and BPE(bytes(s) ++
    ///    bytes(t)) = [s, t] ("s and t are compatible"), then BPE(A ++ B) = BPE(A) ++ BPE(B):
    ///    until a first merge across the seam, the two tokens' bytes merge exactly as they do on
    ///    their own, so that merge would also happen in BPE(bytes(s) ++ bytes(t)).
    ///
    /// So: merge a chunk of `CHUNK` bytes, keep its parts up to a part boundary well inside it
    /// (fact 1: those are the parts of that prefix alone), and append them if the last token
    /// kept so far and their first token are compatible (fact 2). If not, give back the last
    /// token and retry from its start with a chunk twice as long; at the piece's start there is
    /// no seam, so this ends, at worst with `merge_long` over the whole piece. A chunk whose bytes
    /// equal a recent one's reuses its result, which turns a long run of one character into a
    /// few merges and many comparisons of `CHUNK` bytes.
    fn encode_chunked(&self, piece: &[u8], out: &mut Vec<u32>) {
        let base = out.len();
        let mut memo = ChunkMemo::default();
        let mut compatible = rustc_hash::FxHashMap::default();
        let (mut at, mut len) = (0, CHUNK);
        while at < piece.len() {
            let whole_rest = at + len + CHUNK / 2 >= piece.len();
            let chunk = if whole_rest { &piece[at..] } else { &piece[at..at + len] };
            let (cut, seg_ids) = memo.get_or_merge(chunk, whole_rest, |c| self.merge_chunk(c, whole_rest));
            if cut == 0 {
                len *= 2; // one token as long as the chunk: look further
                continue;
            }
            if let Some(&last) = out.get(base..).and_then(<[u32]>::last) {
                let ok = *compatible.entry((last, seg_ids[0])).or_insert_with(|| self.compatible(last, seg_ids[0]));
                if !ok {
                    // Give back the last token: it started its length before `at`.
                    let last = out.pop().unwrap_or(0);
                    at -= self.lens[last as usize] as usize;
                    len *= 2;
                    continue;
                }
            }
            out.extend_from_slice(seg_ids);
            at += cut;
            len = CHUNK;
        }
    }

    /// Merges `chunk` and returns (cut, starts, ids): the parts before `cut`, a part boundary at
    /// least `CHUNK / 8` bytes before the chunk's end (0 if there is none), or all of them with
    /// `cut == chunk.len()` when the chunk ends the piece.
    fn merge_chunk(&self, chunk: &[u8], ends_piece: bool) -> Merged {
        let (mut starts, mut ids) = self.merge_long(chunk, NONE);
        if ends_piece {
            return (chunk.len(), starts, ids);
        }
        let keep = starts.partition_point(|&s| s as usize <= chunk.len() - CHUNK / 8) - 1;
        let cut = starts[keep] as usize;
        starts.truncate(keep);
        ids.truncate(keep);
        (cut, starts, ids)
    }

    /// Whether BPE(bytes(a) ++ bytes(b)) keeps the boundary between them (fact 2 above).
    fn compatible(&self, a: u32, b: u32) -> bool {
        let (Some(x), Some(y)) = (self.token_bytes(a), self.token_bytes(b)) else { return false };
        let joined = [x, y].concat();
        !self.token_spans(&joined, x.len()) || self.merge_bounds(&joined, NONE).contains(&x.len())
    }

    /// Part boundaries (0 = first, piece.len() = last) after merging with ranks < `max_rank`.
    pub(crate) fn merge_bounds(&self, piece: &[u8], max_rank: u32) -> Vec<usize> {
        let starts: Vec<u32> = if piece.is_empty() {
            vec![]
        } else if piece.len() < HEAP_FROM {
            let mut parts = FlatParts::new();
            let m = self.merge_flat(piece, max_rank, &mut parts);
            parts.starts[..m].to_vec()
        } else {
            self.merge_long(piece, max_rank).0
        };
        starts.into_iter().map(|s| s as usize).chain(std::iter::once(piece.len())).collect()
    }

    #[inline(always)]
    fn pair_rank(&self, piece: &[u8], a: u32, b: u32, max_rank: u32) -> u32 {
        match self.ranks.get(&piece[a as usize..b as usize]) {
            Some(r) if r < max_rank => r,
            _ => NONE,
        }
    }

    /// tiktoken's loop for short pieces, on arrays on the stack (no allocation), indexed by
    /// the byte where a part starts: `ranks[i]` is the rank of the part at i joined with the
    /// next part (`NONE` once i is no longer a part's start), `next`/`prev` link the parts.
    /// Each step finds the lowest rank (the first index holding it: the leftmost on ties, as
    /// indexes follow the parts' order) in one pass over the `u32` array, which the compiler
    /// vectorizes, then unlinks the absorbed part and re-ranks its two neighbours: nothing
    /// moves, where closing the gap cost three `memmove` calls per merge. Quadratic in the
    /// piece length, which is why it is used only below `HEAP_FROM` bytes.
    /// Returns the number of parts m; `parts.starts[..m]` and `parts.ids[..m]` describe them.
    pub(crate) fn merge_flat(&self, piece: &[u8], max_rank: u32, parts: &mut FlatParts) -> usize {
        let n = piece.len();
        debug_assert!(n > 0 && n < HEAP_FROM);
        let FlatParts { starts, ids, ranks, next, prev } = parts;
        for (i, &b) in piece.iter().enumerate() {
            ids[i] = self.byte_id[b as usize];
            next[i] = i as u8 + 1;
            prev[i] = (i as u8).wrapping_sub(1);
        }
        for (i, r) in ranks[..n - 1].iter_mut().enumerate() {
            *r = self.pair_rank(piece, i as u32, i as u32 + 2, max_rank);
        }
        ranks[n - 1] = NONE;
        let live = &mut ranks[..n];
        loop {
            let best = live.iter().copied().min().unwrap_or(NONE);
            if best == NONE {
                break;
            }
            // Part i absorbs part j, and is followed by part k.
            let i = live.iter().position(|&r| r == best).unwrap_or(0);
            let j = next[i] as usize;
            let k = next[j] as usize;
            ids[i] = best;
            live[j] = NONE;
            next[i] = k as u8;
            live[i] = if k < n {
                prev[k] = i as u8;
                self.pair_rank(piece, i as u32, next[k] as u32, max_rank)
            } else {
                NONE
            };
            let p = prev[i];
            if p != u8::MAX {
                live[p as usize] = self.pair_rank(piece, p as u32, k as u32, max_rank);
            }
        }
        let (mut i, mut m) = (0, 0);
        while i < n {
            starts[m] = i as u32;
            ids[m] = ids[i];
            m += 1;
            i = next[i] as usize;
        }
        starts[m] = n as u32;
        m
    }

    /// The same merges for long pieces, in time linear in practice: parts form a linked list
    /// indexed by their start byte, and `rank[start]` (the rank of that part joined with the
    /// next) lives in a `MinTree`, whose minimum is the lowest rank, leftmost on ties: exactly
    /// the flat loop's choice. Each merge changes three slots. See `min_tree.rs` for why not a heap.
    /// Returns the starts and token ids of the final parts.
    fn merge_long(&self, piece: &[u8], max_rank: u32) -> (Vec<u32>, Vec<u32>) {
        let n = piece.len() as u32;
        let end = n;
        // next[i]: start of the part after the part starting at i (n at the end);
        // prev[i]: start of the part before (NONE for the first).
        let mut next: Vec<u32> = (1..=n).collect();
        let mut prev: Vec<u32> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut id: Vec<u32> = piece.iter().map(|&b| self.byte_id[b as usize]).collect();
        let rank: Vec<u32> =
            (0..n).map(|i| if i + 1 < n { self.pair_rank(piece, i, i + 2, max_rank) } else { NONE }).collect();
        let mut tree = MinTree::new(rank);
        while let Some((r, i)) = tree.min() {
            // Part i absorbs part j = next[i].
            let i = i as u32;
            let j = next[i as usize];
            tree.set(j as usize, NONE);
            id[i as usize] = r;
            let k = next[j as usize];
            next[i as usize] = k;
            if k < end {
                prev[k as usize] = i;
            }
            let ri = if k < end { self.pair_rank(piece, i, next[k as usize], max_rank) } else { NONE };
            tree.set(i as usize, ri);
            let p = prev[i as usize];
            if p != NONE {
                tree.set(p as usize, self.pair_rank(piece, p, k, max_rank));
            }
        }
        let (mut starts, mut ids) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < end {
            starts.push(i);
            ids.push(id[i as usize]);
            i = next[i as usize];
        }
        (starts, ids)
    }
}

/// The encoder as `encode::frozen` writes and reads it: its tables whole, its splitter by its
/// pattern. The destructuring names every field, so a field added to the encoder fails to
/// compile here until it is written and read too.
impl RankEncoder {
    fn freeze_into(&self, w: &mut Writer) {
        let RankEncoder { ranks, byte_id, arena, ends, splitter, lens, empty, uid: _, seams } = self;
        ranks.freeze(w);
        w.u32s(byte_id);
        w.byte_table(arena);
        w.u32s(ends);
        let (pattern, gaps) = splitter.source();
        w.bytes(pattern.as_bytes());
        w.u64(u64::from(gaps));
        w.u32s(lens);
        w.u64(empty.map_or(u64::MAX, u64::from));
        seams.freeze(w);
    }

    /// The encoder `freeze` wrote, whose special tokens are `specials`, if its tables agree:
    /// every token's bytes lie in the arena, each special token's bytes are its text, and the
    /// single bytes and one token in every few dozen look up to their own ids (a table built
    /// by a core that hashes differently would not).
    pub(crate) fn thaw(r: &mut Reader, specials: &[(String, u32)]) -> Option<RankEncoder> {
        let ranks = RankTable::thaw(r)?;
        let byte_id: [u32; 256] = r.u32s()?[..].try_into().ok()?;
        let arena = r.byte_table()?;
        let ends = r.u32s()?;
        let pattern = std::str::from_utf8(r.bytes()?).ok()?;
        let splitter = match r.u64()? {
            0 => Splitter::new(pattern).ok()?,
            1 => Splitter::keeping_gaps(pattern).ok()?,
            _ => return None,
        };
        let lens = r.u32s()?;
        let empty = match r.u64()? {
            u64::MAX => None,
            id => Some(u32::try_from(id).ok()?),
        };
        let seams = Seams::thaw(r)?;
        let mut start = 0u32;
        let spans_fit = lens.len() == ends.len()
            && ends.last().map_or(arena.is_empty(), |&e| e as usize == arena.len())
            && lens.iter().zip(ends.iter()).all(|(&len, &end)| {
                let ok = end.checked_sub(len) == Some(start);
                start = end;
                ok
            });
        let uid = NEXT_UID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let enc = RankEncoder { ranks, byte_id, arena, ends, splitter, lens, empty, uid, seams };
        let special = |id: u32| specials.iter().any(|s| s.1 == id);
        let specials_fit = specials.iter().all(|(s, id)| enc.token_bytes(*id) == Some(s.as_bytes()));
        let bytes_fit = (0..=255u8).all(|b| enc.ranks.get(&[b]) == Some(enc.byte_id[b as usize]));
        let sample_fits = (0..enc.lens.len() as u32)
            .step_by(61)
            .filter(|&id| enc.lens[id as usize] > 0 && !special(id))
            .all(|id| enc.token_bytes(id).and_then(|b| enc.ranks.get(b)) == Some(id));
        let empty_fits = !matches!(enc.empty, Some(id) if enc.lens.get(id as usize) != Some(&0));
        (spans_fit && specials_fit && bytes_fit && sample_fits && empty_fits).then_some(enc)
    }
}

impl Encode for RankEncoder {
    fn kind(&self) -> Kind {
        Kind::ByteBpe
    }

    fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        if text.len() >= NONE as usize {
            return Err(CoreError::input("a text of 4 GiB or more cannot be encoded in one call; split it"));
        }
        // About one id per three bytes of prose; a batch's flat buffer grows only when short.
        out.reserve(text.len() / 3);
        let bytes = text.as_bytes();
        // One scratch area for every short piece of this call.
        let mut parts = FlatParts::new();
        piece_cache::with_cache(self.uid, |cache| {
            self.splitter.split(text, |a, b| self.encode_piece(&bytes[a..b], &mut parts, cache, out))
        })
    }

    /// BPE-dropout (`dropout.rs`), piece by piece.
    fn encode_dropout(&self, text: &str, p: f64, rng: &mut Rng, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let bytes = text.as_bytes();
        self.splitter.split(text, |a, b| {
            super::dropout::byte_piece(|k| self.ranks.get(k), &bytes[a..b], p, rng, out, |_, _, _| {})
        })
    }

    /// BPE's merge loop, each merge's two tokens counted (`encode::trace`).
    fn encode_traced(&self, text: &str, trace: &mut Trace, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let bytes = text.as_bytes();
        let mut rng = Rng::new(0); // p = 0 draws nothing
        self.splitter.split(text, |a, b| {
            super::dropout::byte_piece(
                |k| self.ranks.get(k),
                &bytes[a..b],
                0.0,
                &mut rng,
                out,
                |x, y, z| trace.merged(x, y, z),
            )
        })
    }

    fn segment_piece(&self, piece: &[u8], out: &mut Vec<u32>) -> Result<(), CoreError> {
        let mut parts = FlatParts::new();
        piece_cache::with_cache(self.uid, |cache| self.encode_piece(piece, &mut parts, cache, out));
        Ok(())
    }

    fn distinct(&self) -> Option<super::Distinct<'_>> {
        Some(super::Distinct::Pieces(self))
    }

    /// The tokens' bytes, concatenated (special tokens as their text).
    fn decode_bytes(&self, ids: &[u32]) -> Result<Vec<u8>, CoreError> {
        let mut out = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            out.extend_from_slice(self.token_bytes(id).ok_or_else(|| unknown_id(id, self.id_bound()))?);
        }
        Ok(out)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        let (end, len) = (*self.ends.get(id as usize)? as usize, self.lens[id as usize] as usize);
        if len > 0 {
            Some(&self.arena[end - len..end])
        } else {
            (self.empty == Some(id)).then_some(&[])
        }
    }

    fn concatenates(&self) -> bool {
        true
    }

    fn freeze(&self, w: &mut Writer) -> bool {
        self.freeze_into(w);
        true
    }

    fn tables_in_place(&self) -> bool {
        let RankEncoder { ranks, arena, ends, lens, seams, .. } = self;
        ranks.in_place() && arena.is_borrowed() && ends.is_borrowed() && lens.is_borrowed() && seams.in_place()
    }

    fn vocab_size(&self) -> usize {
        self.lens.iter().filter(|&&n| n > 0).count() + usize::from(self.empty.is_some())
    }

    /// One more than the largest id (ordinary or special).
    fn id_bound(&self) -> usize {
        self.lens.len()
    }
}

/// The byte length of the UTF-8 character that starts with `lead`.
#[inline(always)]
fn utf8_len(lead: u8) -> usize {
    match lead {
        0..=0xBF => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// A merged chunk: (cut, starts, ids), see `merge_chunk`.
type Merged = (usize, Vec<u32>, Vec<u32>);

/// The last few chunks `encode_chunked` merged (bytes, whether it ended the piece, result).
#[derive(Default)]
struct ChunkMemo {
    entries: Vec<(Vec<u8>, bool, Merged)>,
    next: usize,
}

impl ChunkMemo {
    fn get_or_merge(&mut self, chunk: &[u8], ends_piece: bool, merge: impl FnOnce(&[u8]) -> Merged) -> (usize, &[u32]) {
        let k = match self.entries.iter().position(|(b, e, _)| *e == ends_piece && b.as_slice() == chunk) {
            Some(k) => k,
            None => {
                let entry = (chunk.to_vec(), ends_piece, merge(chunk));
                if self.entries.len() < MEMO {
                    self.entries.push(entry);
                    self.entries.len() - 1
                } else {
                    let k = self.next;
                    self.next = (k + 1) % MEMO;
                    self.entries[k] = entry;
                    k
                }
            }
        };
        let (_, _, (cut, _, ids)) = &self.entries[k];
        (*cut, ids)
    }
}

/// Scratch space for merging a short piece, on the stack and reused for every piece of a
/// call: `starts[k]` is part k's first byte (one extra entry holds the piece's end), `ids[k]`
/// its token id, `ranks[k]` the rank of parts k and k+1 joined.
pub(crate) struct FlatParts {
    starts: [u32; HEAP_FROM + 1],
    ids: [u32; HEAP_FROM],
    ranks: [u32; HEAP_FROM],
    next: [u8; HEAP_FROM],
    prev: [u8; HEAP_FROM],
}

impl FlatParts {
    /// The ids of the first `m` parts that `merge_flat` left, in order.
    pub(crate) fn ids(&self, m: usize) -> &[u32] {
        &self.ids[..m]
    }

    pub(crate) fn new() -> FlatParts {
        FlatParts {
            starts: [0; HEAP_FROM + 1],
            ids: [0; HEAP_FROM],
            ranks: [NONE; HEAP_FROM],
            next: [0; HEAP_FROM],
            prev: [0; HEAP_FROM],
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::pretok::GPT2;

    /// The 256 bytes, then `extra` as ids 256.. (ranks in that order), and one special token.
    pub(crate) fn encoder(extra: &[&[u8]]) -> RankEncoder {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        for (i, t) in extra.iter().enumerate() {
            tokens.push((256 + i as u32, t.to_vec()));
        }
        RankEncoder::new(tokens, vec![("<|end|>".into(), 1000)], Splitter::new(GPT2).unwrap()).unwrap()
    }

    #[test]
    fn lowest_rank_first_leftmost_on_ties() {
        let e = encoder(&[b"aa", b"ab", b"aab"]);
        // "aab": pairs aa(256) ab(257) -> aa first -> [aa, b] -> aab(258)
        assert_eq!(e.encode_ordinary("aab").unwrap(), vec![258]);
        // "aaa": aa at 0 and 1, leftmost wins -> [aa, a]
        assert_eq!(e.encode_ordinary("aaa").unwrap(), vec![256, 97]);
    }

    /// tiktoken's rule written as plainly as possible: a list of parts; join the adjacent pair
    /// whose bytes have the lowest rank, the leftmost on ties, until none is a token.
    fn naive_starts(e: &RankEncoder, piece: &[u8]) -> Vec<u32> {
        let mut parts: Vec<usize> = (0..=piece.len()).collect();
        loop {
            let best = (0..parts.len().saturating_sub(2))
                .filter_map(|k| e.rank(&piece[parts[k]..parts[k + 2]]).map(|r| (r, k)))
                .min();
            match best {
                Some((_, k)) => {
                    parts.remove(k + 1);
                }
                None => break,
            }
        }
        parts.pop();
        parts.into_iter().map(|p| p as u32).collect()
    }

    #[test]
    fn long_path_and_flat_path_equal_the_plain_rule() {
        let e = encoder(&[b"aa", b"aaaa", b"ab", b"ba", b"aba", b"bab", b"abab", b"bb", b"abb"]);
        let mut rnd = crate::test_data::rng(0x9e3779b97f4a7c15);
        for len in [1usize, 2, 3, 7, 40, 127, 128, 130, 200, 517] {
            for _ in 0..50 {
                let piece: Vec<u8> = (0..len).map(|_| if rnd(3) == 0 { b'b' } else { b'a' }).collect();
                let want = naive_starts(&e, &piece);
                let (long, ids) = e.merge_long(&piece, NONE);
                assert_eq!(long, want, "long, len {len}");
                let bounds: Vec<usize> = want.iter().map(|&s| s as usize).chain([len]).collect();
                let want_ids: Vec<u32> = bounds.windows(2).map(|w| e.rank(&piece[w[0]..w[1]]).unwrap()).collect();
                assert_eq!(ids, want_ids);
                if len < HEAP_FROM {
                    let mut parts = FlatParts::new();
                    let m = e.merge_flat(&piece, NONE, &mut parts);
                    assert_eq!(&parts.starts[..m], &want[..], "flat, len {len}");
                    assert_eq!(&parts.ids[..m], &want_ids[..]);
                }
                assert_eq!(e.merge_bounds(&piece, NONE), bounds);
                for _ in 0..2 {
                    // the second time from the piece cache
                    let mut out = vec![];
                    piece_cache::with_cache(e.uid, |c| e.encode_piece(&piece, &mut FlatParts::new(), c, &mut out));
                    assert_eq!(out, want_ids);
                }
            }
        }
    }

    /// Ids never depend on what the thread's tables hold: pieces that all fall into one
    /// word-table bucket (so each evicts another), tokens and pieces that merge to one, two or
    /// more than three ids, encoded again and again in changing orders, always give the plain
    /// rule's ids, with a fresh cache and a full one.
    #[test]
    fn ids_do_not_depend_on_what_the_cache_holds() {
        let e = encoder(&[b"aa", b"aaaa", b"ab", b"ba", b"aba", b"bab", b"abab", b"bb", b"abb", b"abbab"]);
        let mut rnd = crate::test_data::rng(0x51_7cc1_b727_220a);
        let bucket = piece_cache::word_bucket(b"ab");
        let mut pieces: Vec<Vec<u8>> = vec![b"ab".to_vec()];
        while pieces.len() < 12 {
            let len = 1 + rnd(16) as usize;
            let p: Vec<u8> = (0..len).map(|_| if rnd(3) == 0 { b'b' } else { b'a' }).collect();
            if piece_cache::word_bucket(&p) == bucket && !pieces.contains(&p) {
                pieces.push(p);
            }
        }
        let want = |p: &[u8]| -> Vec<u32> {
            let b: Vec<usize> = naive_starts(&e, p).iter().map(|&s| s as usize).chain([p.len()]).collect();
            b.windows(2).map(|w| e.rank(&p[w[0]..w[1]]).unwrap()).collect()
        };
        assert!(pieces.iter().any(|p| want(p).len() > piece_cache::WORD_IDS));
        for round in 0..40 {
            let k = rnd(pieces.len() as u64) as usize;
            pieces.rotate_left(k);
            for p in &pieces {
                let mut out = vec![];
                piece_cache::with_cache(e.uid, |c| e.encode_piece(p, &mut FlatParts::new(), c, &mut out));
                assert_eq!(out, want(p), "round {round}: {:?}", String::from_utf8_lossy(p));
            }
        }
    }

    /// A thread's caches pass from encoder to encoder by generations (`piece_cache`): three
    /// encoders of different vocabularies taking turns on one thread (so every call takes over
    /// the least recently used cache, which holds another vocabulary's ids, more than twice
    /// round all generations and through the full clears between) each give the plain rule's
    /// ids of its own vocabulary, on Chinese text (characters, character pairs that are tokens,
    /// clauses merged one character at a time) and on random text.
    #[test]
    fn ids_stay_exact_as_caches_pass_between_encoders() {
        std::thread::spawn(|| {
            let zh = crate::test_data::read("dr.zh-cn.txt").unwrap_or_else(|| "中文的文本，中国人的文字。".repeat(40));
            let chars: Vec<char> = zh.chars().filter(|c| c.len_utf8() == 3).take(400).collect();
            // Vocabulary v: pairs of characters that are tokens in v 0 only, whole characters
            // in v 0 and 1, the first two bytes of characters in all three.
            let vocab = |v: usize| -> Vec<Vec<u8>> {
                let mut extra: Vec<Vec<u8>> = vec![b"th".to_vec(), b"he".to_vec(), b" the".to_vec()];
                for (k, c) in chars.iter().enumerate() {
                    let b = c.to_string().into_bytes();
                    extra.push(b[..2].to_vec());
                    if v < 2 {
                        extra.push(b.clone());
                    }
                    if v == 0 && k % 3 == 0 {
                        extra.push(chars[k..(k + 2).min(chars.len())].iter().collect::<String>().into_bytes());
                    }
                }
                extra.sort();
                extra.dedup();
                extra
            };
            let encoders: Vec<RankEncoder> = (0..3)
                .map(|v| {
                    let extra = vocab(v);
                    encoder(&extra.iter().map(|t| &t[..]).collect::<Vec<_>>())
                })
                .collect();
            let mut rnd = crate::test_data::rng(0x6a09_e667_f3bc_c908);
            let mut texts: Vec<String> = (0..3).map(|k| zh.chars().skip(200 * k).take(150).collect()).collect();
            for _ in 0..3 {
                let bytes: Vec<u8> = (0..300).map(|_| rnd(256) as u8).collect();
                texts.push(String::from_utf8_lossy(&bytes).into_owned());
            }
            let plain = |e: &RankEncoder, text: &str| -> Vec<u32> {
                let mut ids = vec![];
                e.splitter
                    .split(text, |a, b| {
                        let p = &text.as_bytes()[a..b];
                        let bounds: Vec<usize> =
                            naive_starts(e, p).iter().map(|&s| s as usize).chain([p.len()]).collect();
                        ids.extend(bounds.windows(2).map(|w| e.rank(&p[w[0]..w[1]]).unwrap()));
                    })
                    .unwrap();
                ids
            };
            let want: Vec<Vec<Vec<u32>>> =
                encoders.iter().map(|e| texts.iter().map(|t| plain(e, t)).collect()).collect();
            assert!(want[0] != want[1] && want[1] != want[2], "the vocabularies must segment differently");
            for round in 0..2 * 63 + 10 {
                let v = round % 3;
                for (k, text) in texts.iter().enumerate().skip(round % 2) {
                    assert_eq!(encoders[v].encode_ordinary(text).unwrap(), want[v][k], "round {round}, text {k}");
                }
            }
        })
        .join()
        .unwrap();
    }

    /// Long pieces: the chunked path (with its memo, its seam checks and its retries) gives
    /// exactly what `merge_long` gives over the whole piece: runs of one letter, periodic
    /// patterns, random mixes, and runs broken once far from the start.
    #[test]
    fn chunked_long_pieces_equal_one_merge_over_the_piece() {
        let e = encoder(&[b"aa", b"aaaa", b"ab", b"ba", b"aba", b"bab", b"abab", b"bb", b"abb", b"aaaaaaaa", b"aaab"]);
        let mut rnd = crate::test_data::rng(0x2545_f491_4f6c_dd1d);
        let mut pieces: Vec<Vec<u8>> = vec![];
        for n in [2 * CHUNK, 2 * CHUNK + 1, 3 * CHUNK + 7, 9 * CHUNK + 5] {
            pieces.push(vec![b'a'; n]);
            pieces.push(b"ab".repeat(n / 2));
            pieces.push(b"aab".repeat(n / 3 + 1));
            pieces.push((0..n).map(|_| if rnd(3) == 0 { b'b' } else { b'a' }).collect());
            pieces.push((0..n).map(|_| if rnd(50) == 0 { b'b' } else { b'a' }).collect());
            let mut once = vec![b'a'; n];
            once[n - 1 - rnd(n as u64 / 2) as usize] = b'b';
            pieces.push(once);
        }
        for piece in &pieces {
            let (_, want) = e.merge_long(piece, NONE);
            let mut got = vec![42];
            e.encode_chunked(piece, &mut got);
            assert_eq!(got[0], 42, "earlier ids are kept");
            assert!(got[1..] == want[..], "piece of {} bytes starting {:?}", piece.len(), &piece[..20]);
        }
    }

    /// Pieces of multi-byte characters, merged one character at a time, equal the plain rule,
    /// with tokens inside characters, across character boundaries and over several characters.
    #[test]
    fn by_characters_equals_the_plain_rule() {
        let chars = ["é", "中", "文", "😀", "a", "ab", "b", "aab"];
        let cat = |s: &[&str]| s.concat().into_bytes();
        let extra: Vec<Vec<u8>> = vec![
            vec![0xE4, 0xB8],
            "中".into(),
            vec![0xAD, 0xE6], // the end of 中 and the start of 文
            vec![0xA9, 0xC3], // é é, across the boundary
            "文".into(),
            cat(&["中", "文"]),
            cat(&["é", "é"]),
            vec![0x96, 0x87, 0xE4, 0xB8], // the end of 文 and the start of 中
            cat(&["文", "中", "文"]),
            vec![0xF0, 0x9F],
            "é".into(),
            cat(&["a", "中"]),
            b"ab".to_vec(),
            b"aab".to_vec(),
            cat(&["中", "ab"]),
            cat(&["b", "中"]),
        ];
        let e = encoder(&extra.iter().map(Vec::as_slice).collect::<Vec<_>>());
        let mut rnd = crate::test_data::rng(0x1234_5678_9abc_def1);
        for round in 0..3000 {
            let n = 3 + rnd(30) as usize;
            let text: String = (0..n).map(|_| chars[rnd(chars.len() as u64) as usize]).collect();
            let piece = text.as_bytes();
            if piece.len() >= HEAP_FROM {
                continue;
            }
            let want: Vec<u32> = {
                let b: Vec<usize> = naive_starts(&e, piece).iter().map(|&s| s as usize).chain([piece.len()]).collect();
                b.windows(2).map(|w| e.rank(&piece[w[0]..w[1]]).unwrap()).collect()
            };
            for _ in 0..2 {
                // the second time with the pair memo and the pieces of the first
                let mut out = vec![7];
                let done =
                    piece_cache::with_cache(e.uid, |c| e.encode_by_chars(piece, &mut FlatParts::new(), c, &mut out));
                if done {
                    assert_eq!(out[1..], want[..], "round {round}: {text:?}");
                } else {
                    assert_eq!(out, [7]);
                }
                let mut out = vec![];
                piece_cache::with_cache(e.uid, |c| e.encode_piece(piece, &mut FlatParts::new(), c, &mut out));
                if e.rank(piece).is_none() {
                    assert_eq!(out, want, "round {round}: {text:?}");
                }
            }
        }
    }

    /// `merge3`, the merge rule on three bytes in closed form, equals `merge_flat`: on every
    /// string of three bytes over an alphabet whose pairs and triples are tokens in every
    /// combination (the whole with and without its pairs, pairs of equal rank on repeated
    /// bytes, either pair ranked first), and on every 3-byte character with cl100k and o200k.
    #[test]
    fn three_bytes_in_closed_form_equal_the_merge_loop() {
        let check = |e: &RankEncoder, ch: [u8; 3]| {
            let mut parts = FlatParts::new();
            let m = e.merge_flat(&ch, NONE, &mut parts);
            let (ids, n) = e.merge3(ch[0], ch[1], ch[2]);
            assert_eq!(&ids[..n], parts.ids(m), "{ch:x?}");
        };
        let alphabet = [b'a', b'b', b'c', b'd', 0xE3, 0x81, 0x82];
        let mut extra: Vec<Vec<u8>> = vec![];
        let mut rnd = crate::test_data::rng(0xbb67_ae85_84ca_a73b);
        for &x in &alphabet {
            for &y in &alphabet {
                if rnd(3) > 0 {
                    extra.push(vec![x, y]);
                }
                for &z in &alphabet {
                    if rnd(3) == 0 {
                        extra.push(vec![x, y, z]);
                    }
                }
            }
        }
        // Ranks in a random order, so either pair may rank first.
        for k in (1..extra.len()).rev() {
            extra.swap(k, rnd(k as u64 + 1) as usize);
        }
        let e = encoder(&extra.iter().map(Vec::as_slice).collect::<Vec<_>>());
        for &x in &alphabet {
            for &y in &alphabet {
                for &z in &alphabet {
                    check(&e, [x, y, z]);
                }
            }
        }
        for (name, pattern) in [("cl100k_base", crate::pretok::CL100K), ("o200k_base", crate::pretok::O200K)] {
            let Some(file) = crate::test_data::read(&format!("{name}.tiktoken")) else { continue };
            let tokens: Vec<(u32, Vec<u8>)> = file
                .lines()
                .filter(|l| !l.is_empty())
                .map(|l| {
                    let (b64, rank) = l.split_once(' ').unwrap();
                    let mut bytes = vec![];
                    crate::tokreg_file::base64(b64, &mut bytes).unwrap();
                    (rank.parse().unwrap(), bytes)
                })
                .collect();
            let e = RankEncoder::new(tokens, vec![], Splitter::new(pattern).unwrap()).unwrap();
            for c in (0x800..=0xFFFF).filter_map(char::from_u32) {
                let mut ch = [0u8; 3];
                c.encode_utf8(&mut ch);
                check(&e, ch);
            }
        }
    }

    /// Where tokens often span characters, `encode_by_chars` soon counts that it merges many
    /// characters again, and short clauses of Hangul are merged whole from then on: ids equal
    /// the plain rule's on runs of syllables (whose neighbours are often one token here) and on
    /// random clauses with spaces and ASCII inside, before and after the switch.
    #[test]
    fn short_clauses_merged_whole_when_characters_often_join_equal_the_plain_rule() {
        std::thread::spawn(|| {
            let chars: Vec<char> = (0..600).filter_map(|k| char::from_u32(0xAC00 + 7 * k)).collect();
            // Tokens: the first two bytes of each character, each character, each pair of
            // neighbouring characters, and a character glued to a space or an ASCII word.
            let mut extra: Vec<Vec<u8>> = vec![b" a".to_vec(), b"ab".to_vec()];
            for (k, c) in chars.iter().enumerate() {
                let b = c.to_string().into_bytes();
                extra.push(b[..2].to_vec());
                extra.push(b.clone());
                if k + 1 < chars.len() {
                    extra.push(chars[k..k + 2].iter().collect::<String>().into_bytes());
                }
                if k % 5 == 0 {
                    extra.push([b" ", &b[..]].concat());
                    extra.push([&b[..], b"ab"].concat());
                }
            }
            // Shorter tokens rank first, as a trained vocabulary's parts rank before their whole.
            extra.sort_by(|a, b| (a.len(), a).cmp(&(b.len(), b)));
            extra.dedup();
            let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
            tokens.extend(extra.into_iter().enumerate().map(|(i, t)| (256 + i as u32, t)));
            let e = RankEncoder::new(tokens, vec![], Splitter::new(GPT2).unwrap()).unwrap();
            let want = |p: &[u8]| -> Vec<u32> {
                let b: Vec<usize> = naive_starts(&e, p).iter().map(|&s| s as usize).chain([p.len()]).collect();
                b.windows(2).map(|w| e.rank(&p[w[0]..w[1]]).unwrap()).collect()
            };
            let mut rnd = crate::test_data::rng(0x3c6e_f372_fe94_f82b);
            let (mut before, mut after) = (0, 0);
            for round in 0..1500 {
                // A run of the text's own characters (3 to 12: 9 to 36 bytes), or random ones
                // with ASCII and spaces between.
                let n = 3 + rnd(10) as usize;
                let piece: String = if round % 3 == 0 {
                    (0..n)
                        .map(|_| match rnd(6) {
                            0 => " ".to_string(),
                            1 => "ab".to_string(),
                            _ => chars[rnd(chars.len() as u64) as usize].to_string(),
                        })
                        .collect()
                } else {
                    let at = rnd((chars.len() - n) as u64) as usize;
                    chars[at..at + n].iter().collect()
                };
                let piece = piece.as_bytes();
                if piece.len() >= HEAP_FROM || e.rank(piece).is_some() {
                    continue;
                }
                let mut out = vec![];
                let whole = piece_cache::with_cache(e.uid, |c| {
                    let whole = c.by_chars_redoes_often();
                    e.encode_piece(piece, &mut FlatParts::new(), c, &mut out);
                    whole
                });
                *(if whole { &mut after } else { &mut before }) += 1;
                assert_eq!(out, want(piece), "round {round}: {:?}", String::from_utf8_lossy(piece));
            }
            assert!(before > 0 && after > 500, "by characters {before}, after the switch {after}");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn decodes_specials_and_refuses_unknown_ids() {
        let e = encoder(&[]);
        assert_eq!(e.decode_bytes(&[97, 1000]).unwrap(), b"a<|end|>");
        assert_eq!(e.decode_bytes(&[5000]), Err(CoreError::UnknownId { id: 5000, bound: 1001 }));
        assert_eq!((e.vocab_size(), e.id_bound()), (257, 1001));
        // An id in the gap before the special token is no token.
        assert_eq!(e.decode_bytes(&[500]), Err(CoreError::UnknownId { id: 500, bound: 1001 }));
        assert_eq!(e.tokens().count(), 257);
    }

    /// An empty token (tiktoken loads the base64 `=` as one) keeps its id, decodes to nothing,
    /// counts in the vocabulary, and no text encodes to it: every piece and every pair a merge
    /// probes has at least one byte.
    #[test]
    fn an_empty_token_decodes_to_nothing_and_is_never_produced() {
        let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        tokens.extend([(256, b"ab".to_vec()), (257, Vec::new()), (258, b"abab".to_vec())]);
        let e = RankEncoder::new(tokens, vec![("<|end|>".into(), 259)], Splitter::new(GPT2).unwrap()).unwrap();
        assert_eq!(e.token_bytes(257), Some(&b""[..]));
        assert_eq!(e.decode_bytes(&[256, 257, 97, 259]).unwrap(), b"aba<|end|>");
        assert_eq!((e.vocab_size(), e.id_bound()), (260, 260));
        assert_eq!(e.tokens().map(|(id, _)| id).collect::<Vec<_>>(), (0..260).collect::<Vec<_>>());
        assert_eq!(e.rank(b""), None);
        for text in ["", "ab", "abab ab a b", "ababab", &"ab".repeat(3000), &"ab ".repeat(5000)] {
            assert!(!e.encode_ordinary(text).unwrap().contains(&257), "{text:?}");
        }
        assert_eq!(e.encode_ordinary("ababab").unwrap(), vec![258, 256]);
    }

    #[test]
    fn refuses_vocabularies_it_cannot_encode_with() {
        let bytes: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
        let build = |extra: &[(u32, &[u8])], specials: &[(&str, u32)]| {
            let mut t = bytes.clone();
            t.extend(extra.iter().map(|(id, b)| (*id, b.to_vec())));
            let s = specials.iter().map(|(s, id)| (s.to_string(), *id)).collect();
            match RankEncoder::new(t, s, Splitter::new(GPT2).unwrap()) {
                Ok(_) => String::new(),
                Err(e) => e.to_string(),
            }
        };
        assert_eq!(build(&[(256, b"ab")], &[("<|end|>", 300)]), "");
        assert!(build(&[(97, b"ab")], &[]).contains("token id 97 appears twice"));
        assert_eq!(build(&[(256, b"")], &[]), "");
        assert!(build(&[(256, b""), (257, b"")], &[]).contains("tokens 256 and 257 are both empty"));
        assert!(build(&[(256, b""), (256, b"ab")], &[]).contains("token id 256 appears twice"));
        assert!(build(&[(256, b"ab"), (256, b"")], &[]).contains("token id 256 appears twice"));
        assert!(build(&[(256, b"")], &[("<|end|>", 256)]).contains("which another token already has"));
        assert!(build(&[(256, b"a")], &[]).contains("two tokens have the bytes of token 256"));
        assert!(build(&[], &[("<|end|>", 65)]).contains("which another token already has"));
        assert!(build(&[], &[("", 300)]).contains("special token 300 is empty"));
        let missing: Vec<(u32, Vec<u8>)> = (1..=255u8).map(|b| (b as u32, vec![b])).collect();
        let e = RankEncoder::new(missing, vec![], Splitter::new(GPT2).unwrap()).err().unwrap();
        assert!(e.to_string().contains("byte 0x00 has no token"));
    }
}
