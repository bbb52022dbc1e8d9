//! A built encoder as bytes, and back: what lets a fresh process skip building the tables of a
//! large vocabulary (o200k: tens of milliseconds hashing 200k tokens into a 12 MB table and
//! indexing their byte pairs) when an earlier process built them from the same content. The
//! caller keeps the bytes in its cache, keyed by content hash (tokreg/encoding/built_cache.py);
//! the core only writes and reads bytes.
//!
//! Layout (every number little-endian, so a file reads the same on any machine):
//!
//! | bytes | what |
//! |---|---|
//! | 8 | `MAGIC` |
//! | 4 | `FORMAT` |
//! | 4 | zero |
//! | 8 | `checksum` of every byte after this field |
//! | … | the body: the caller's tag, the caller's meta, the encoder's kind, the special tokens, then the encoder's own tables (`Encode::freeze`) |
//!
//! Each table is a u64 count, zeros up to the next multiple of 64 bytes (`ALIGN`), and then its
//! records whole, in the layout the encoder keeps them in memory (format 2; format 1 had no
//! padding and was copied out). So `thaw` reads every table in place (`table.rs`): the
//! encoder borrows its tables from the bytes it was given, which it keeps alive, and nothing is
//! copied, hashed, sorted or probed per token. A memory map of the cache file is such bytes:
//! then the tables are the page cache's (tokreg/encoding/built_cache.py says what keeps that
//! safe). A table is copied only where the bytes are not aligned, or on a big-endian machine.
//!
//! Trust: the bytes are checked, never believed. `thaw` gives `None` (the caller then builds
//! from content, as if nothing had been cached) unless the magic, the format, the caller's tag
//! (the content hash and size, and the build of the core the tables came from), the checksum,
//! every table's shape and a sample of lookups (each must give back the id it was built from)
//! all hold. The checksum finds any damage by accident (a truncated write, a flipped byte); like
//! any cache that is not rebuilt from its source, it does not stop someone who may write the
//! cache folder and recomputes the checksum. What the tables hold is trusted no further than
//! memory safety needs: every read of them is bounds-checked (a long key's offset into the
//! arena, a pair's run of spans), so tables changed after the checksum give wrong answers or an
//! error, never a read outside them.
//!
//! Only byte-level BPE freezes (`Encode::freeze`); the other encoders build from content in a
//! few milliseconds and say no.

use std::sync::Arc;

use super::table::{copied, Backing, Plain, Table};
use super::{Encode, Kind, Tokenizer};
use crate::bpe::RankEncoder;

const MAGIC: &[u8; 8] = b"tkrgENC\n";
/// Bumped whenever the layout of any frozen table changes.
const FORMAT: u32 = 2;
const HEAD: usize = 24;

/// Every table's items start at a multiple of this many bytes from the start of the frozen
/// bytes, so that a table can be read in place (`table.rs`) from a mapping of the file (whose
/// start is page-aligned): aligned for any item type, and each table on its own cache lines.
const ALIGN: usize = 64;

/// Appends tables to the bytes of a frozen encoder.
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn new() -> Writer {
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(MAGIC);
        buf.extend_from_slice(&FORMAT.to_le_bytes());
        buf.extend_from_slice(&[0; 12]);
        Writer { buf }
    }

    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A count, zeros up to the next multiple of `ALIGN`, then `N` bytes for each item, written
    /// by `put` (little-endian: the layout `Reader::table` views in place).
    pub fn records<T, const N: usize>(&mut self, items: &[T], put: impl Fn(&T) -> [u8; N]) {
        self.u64(items.len() as u64);
        self.buf.resize(self.buf.len().next_multiple_of(ALIGN), 0);
        self.buf.reserve(items.len() * N);
        for item in items {
            self.buf.extend_from_slice(&put(item));
        }
    }

    pub fn bytes(&mut self, v: &[u8]) {
        self.u64(v.len() as u64);
        self.buf.extend_from_slice(v);
    }

    pub fn u32s(&mut self, v: &[u32]) {
        self.records(v, |x| x.to_le_bytes());
    }

    pub fn u64s(&mut self, v: &[u64]) {
        self.records(v, |x| x.to_le_bytes());
    }

    /// Bytes as a table (aligned, so `Reader::table` may read them in place).
    pub fn byte_table(&mut self, v: &[u8]) {
        self.records(v, |&x| [x]);
    }

    fn finish(mut self) -> Vec<u8> {
        let sum = checksum(&self.buf[HEAD..]);
        self.buf[16..24].copy_from_slice(&sum.to_le_bytes());
        self.buf
    }
}

/// Reads tables back in the order they were written; `None` at the first thing that does not
/// fit. Tables are read in place from `backing` when they can be (`table.rs`), else copied.
pub struct Reader<'a> {
    backing: &'a Arc<dyn Backing>,
    /// All of the frozen bytes (`backing`'s), and the offset of what is read next.
    all: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.all.len() - self.at {
            return None;
        }
        let head = &self.all[self.at..self.at + n];
        self.at += n;
        Some(head)
    }

    fn left(&self) -> usize {
        self.all.len() - self.at
    }

    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count that must fit this machine's memory and the bytes left (`per`: bytes per item).
    fn count(&mut self, per: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n.checked_mul(per)? <= self.left()).then_some(n)
    }

    /// What `Writer::records` wrote, as a table: in place when it can be, else copied with `get`.
    pub fn table<T: Plain, const N: usize>(&mut self, get: impl Fn([u8; N]) -> T) -> Option<Table<T>> {
        debug_assert_eq!(N, std::mem::size_of::<T>());
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(self.at.next_multiple_of(ALIGN) - self.at)?;
        let raw = self.take(n.checked_mul(N)?)?;
        Some(match Table::borrowed(self.backing, raw, n) {
            Some(t) => t,
            None => Table::from(copied(raw, n, get)),
        })
    }

    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.count(1)?;
        self.take(n)
    }

    pub fn u32s(&mut self) -> Option<Table<u32>> {
        self.table(u32::from_le_bytes)
    }

    pub fn u64s(&mut self) -> Option<Table<u64>> {
        self.table(u64::from_le_bytes)
    }

    pub fn byte_table(&mut self) -> Option<Table<u8>> {
        self.table(|[b]: [u8; 1]| b)
    }

    /// A u64 that must fit a usize.
    pub fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
}

/// A 64-bit checksum of `data`: four independent lanes of 8-byte words, each word folded in by a
/// step that is a bijection of the lane for a fixed word and of the word for a fixed lane
/// (multiply by an odd constant, add, rotate), so a change to any one word always changes the
/// result; the lanes are joined by another bijective mix. About 10 GB/s: a few hundred
/// microseconds for o200k's 16 MB, against the tens of milliseconds of building.
fn checksum(data: &[u8]) -> u64 {
    const K1: u64 = 0x9e37_79b1_85eb_ca87;
    const K2: u64 = 0xc2b2_ae3d_27d4_eb4f;
    let step = |lane: u64, word: u64| lane.wrapping_add(word.wrapping_mul(K2)).rotate_left(31).wrapping_mul(K1);
    let mut lanes = [K1, K2, K1 ^ K2, K1.wrapping_add(K2)];
    let mut blocks = data.chunks_exact(32);
    for block in &mut blocks {
        for (i, lane) in lanes.iter_mut().enumerate() {
            *lane = step(*lane, u64::from_le_bytes(block[i * 8..i * 8 + 8].try_into().expect("8 bytes")));
        }
    }
    let mut tail = [0u8; 32];
    tail[..blocks.remainder().len()].copy_from_slice(blocks.remainder());
    for (i, lane) in lanes.iter_mut().enumerate() {
        *lane = step(*lane, u64::from_le_bytes(tail[i * 8..i * 8 + 8].try_into().expect("8 bytes")));
    }
    let mut h = data.len() as u64;
    for lane in lanes {
        h = step(h, lane);
    }
    h ^ (h >> 29)
}

impl Tokenizer {
    /// This tokenizer's built tables as bytes for `thaw`, with the caller's `tag` (what the
    /// tables were built from, checked on thaw) and `meta` (handed back by thaw, unread here);
    /// `None` when its encoder does not freeze.
    pub fn freeze(&self, tag: &[u8], meta: &[u8]) -> Option<Vec<u8>> {
        let mut w = Writer::new();
        w.bytes(tag);
        w.bytes(meta);
        w.bytes(self.kind().name().as_bytes());
        let specials = self.specials();
        w.u64(specials.len() as u64);
        for (text, id) in &specials {
            w.bytes(text.as_bytes());
            w.u64(*id as u64);
        }
        self.encoder.freeze(&mut w).then(|| w.finish())
    }

    /// The tokenizer frozen in `data` and the meta it was frozen with, if `data` is intact, was
    /// written by this format and carries exactly `tag`; `None` otherwise (see the module doc).
    /// Its tables are read in place from `data` (`table.rs`), which it keeps alive.
    pub fn thaw(data: Arc<dyn Backing>, tag: &[u8]) -> Option<(Tokenizer, Vec<u8>)> {
        let all = data.bytes();
        if all.len() < HEAD || &all[..8] != MAGIC || all[8..12] != FORMAT.to_le_bytes() || all[12..16] != [0; 4] {
            return None;
        }
        if checksum(&all[HEAD..]).to_le_bytes() != all[16..24] {
            return None;
        }
        let mut r = Reader { backing: &data, all, at: HEAD };
        if r.bytes()? != tag {
            return None;
        }
        let meta = r.bytes()?.to_vec();
        let kind = r.bytes()?;
        let n = r.count(16)?;
        let mut specials = Vec::with_capacity(n);
        for _ in 0..n {
            let text = std::str::from_utf8(r.bytes()?).ok()?.to_string();
            specials.push((text, u32::try_from(r.u64()?).ok()?));
        }
        let encoder: Box<dyn Encode> = if kind == Kind::ByteBpe.name().as_bytes() {
            Box::new(RankEncoder::thaw(&mut r, &specials)?)
        } else {
            return None;
        };
        if r.left() != 0 {
            return None;
        }
        Some((Tokenizer::new(encoder, specials), meta))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::tiny_byte_level;

    fn backed(data: &[u8]) -> Arc<dyn Backing> {
        Arc::new(data.to_vec())
    }

    /// The frozen bytes one byte past an 8-byte boundary: no table can be read in place.
    struct Misaligned(Vec<u8>, usize);

    #[allow(unsafe_code)]
    // SAFETY: the Vec's buffer stays in place, unchanged, behind the `Arc` that holds it.
    unsafe impl Backing for Misaligned {
        fn bytes(&self) -> &[u8] {
            &self.0[self.1..]
        }
    }

    fn misaligned(data: &[u8]) -> Arc<dyn Backing> {
        let mut v = vec![0u8; data.len() + 16];
        let at = v.as_ptr().align_offset(8) + 1;
        v[at..at + data.len()].copy_from_slice(data);
        v.truncate(at + data.len());
        Arc::new(Misaligned(v, at))
    }

    #[test]
    fn a_thawed_tokenizer_encodes_and_decodes_as_the_built_one() {
        let built = tiny_byte_level();
        let data = built.freeze(b"tag", b"meta").unwrap();
        for (backing, in_place) in [(backed(&data), true), (misaligned(&data), false)] {
            let (thawed, meta) = Tokenizer::thaw(backing, b"tag").unwrap();
            assert_eq!(thawed.encoder().tables_in_place(), in_place && cfg!(target_endian = "little"));
            assert_eq!(meta, b"meta");
            let text = "ab abab <s> zab\u{4e2d}\u{6587}";
            assert_eq!(thawed.encode_ordinary(text).unwrap(), built.encode_ordinary(text).unwrap());
            assert_eq!(thawed.specials(), built.specials());
            assert_eq!(thawed.id_bound(), built.id_bound());
            assert_eq!(thawed.vocab_size(), built.vocab_size());
            // The same tables write the same bytes.
            assert_eq!(thawed.freeze(b"tag", b"meta").unwrap(), data);
        }
        assert!(!built.encoder().tables_in_place());
    }

    #[test]
    fn every_table_starts_aligned() {
        let data = tiny_byte_level().freeze(b"a tag of odd length", b"m").unwrap();
        let backing = backed(&data);
        let mut r = Reader { backing: &backing, all: backing.bytes(), at: HEAD };
        for _ in 0..3 {
            r.bytes().unwrap();
        }
        let n = r.count(16).unwrap();
        for _ in 0..n {
            r.bytes().unwrap();
            r.u64().unwrap();
        }
        let pairs = r.u32s().unwrap();
        assert_eq!(pairs.len(), 1 << 16);
        assert_eq!((pairs.as_ptr() as usize - backing.bytes().as_ptr() as usize) % ALIGN, 0);
    }

    #[test]
    fn damaged_foreign_or_truncated_bytes_are_refused() {
        let data = tiny_byte_level().freeze(b"tag", b"").unwrap();
        assert!(Tokenizer::thaw(backed(&data), b"other tag").is_none());
        for cut in [0, 7, HEAD, data.len() / 2, data.len() - 1] {
            assert!(Tokenizer::thaw(backed(&data[..cut]), b"tag").is_none(), "cut at {cut}");
        }
        // A byte changed anywhere is found (the checksum, or the header before it): every byte
        // of the header and the tag, and 200 spread over the tables.
        let spread = (0..200).map(|i| HEAD + 64 + i * (data.len() - HEAD - 64) / 200);
        for at in (0..HEAD + 64).chain(spread) {
            let mut bad = data.clone();
            bad[at] ^= 0x5a;
            assert!(Tokenizer::thaw(backed(&bad), b"tag").is_none(), "byte {at}");
        }
        let mut longer = data.clone();
        longer.push(0);
        assert!(Tokenizer::thaw(backed(&longer), b"tag").is_none());
        // The previous format's bytes (format 1: tables not aligned) are refused by their label.
        let mut old = data.clone();
        old[8..12].copy_from_slice(&1u32.to_le_bytes());
        assert!(Tokenizer::thaw(backed(&old), b"tag").is_none());
    }

    #[test]
    fn the_checksum_sees_every_word_and_the_length() {
        let zeros = [0u8; 100];
        let base = checksum(&zeros);
        for at in 0..100 {
            let mut d = zeros;
            d[at] = 1;
            assert_ne!(checksum(&d), base, "{at}");
        }
        assert_ne!(checksum(&zeros[..99]), base);
    }
}
