//! Which tokens could span a seam: for every pair of bytes, where it sits inside the tokens
//! that contain it.
//!
//! Why: the byte-level encoder joins two runs of ids without merging across the seam between
//! them when no token is made of bytes on both sides of it (`RankEncoder::compatible_cached`;
//! a merge across the seam would make such a token). Asking the rank table about every
//! substring that crosses the seam costs (bytes left) x (bytes right) probes: 9 for two
//! Chinese characters, 36 for two two-character tokens. But a token that crosses the seam
//! contains the two bytes on either side of it, at some offset k, and has some length L; so
//! the only substrings worth a probe are those (k, L) that the vocabulary really has for that
//! pair of bytes. Between two CJK characters that is 0.9 candidates on average (cl100k, zh_CN
//! text), and the answer is exactly the one the exhaustive search gives.
//!
//! Shape: the (k, L) of each byte pair, deduplicated, in one array ordered by the pair, and the
//! start of each pair's run in a table of 65,537 offsets (cl100k: 78,450 entries, 570 KB in all).

use crate::encode::frozen::{Reader, Writer};
use crate::encode::table::{Plain, Table};

/// Where a byte pair sits in a token: its offset in the token, and the token's length.
/// `repr(C)`: the frozen layout (`freeze`), read in place when thawed.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
struct Span {
    k: u16,
    len: u16,
}

#[allow(unsafe_code)]
// SAFETY: two u16 (`repr(C)`, 4 bytes): no padding, and every bit pattern is some span (one
// that fits no token only costs a probe that misses; `any_across` checks it against the text).
unsafe impl Plain for Span {}

/// The tables are owned when built here, read in place when thawed (`encode/table.rs`).
pub struct Seams {
    /// `at[p]..at[p + 1]` are pair p's entries (p = first byte << 8 | second byte).
    at: Table<u32>,
    spans: Table<Span>,
    /// Some token is longer than `u16::MAX` bytes: search every substring instead.
    exhaustive: bool,
}

impl Seams {
    /// From the bytes of every token, in time linear in their total length (a counting sort
    /// by pair, then each pair's entries deduplicated with a bitmap; sorting 700k entries
    /// would add 40 ms to loading cl100k).
    pub fn new(tokens: &[&[u8]]) -> Seams {
        let pair = |w: &[u8]| (w[0] as usize) << 8 | w[1] as usize;
        if tokens.iter().any(|t| t.len() > u16::MAX as usize) {
            return Seams { at: vec![0; 65537].into(), spans: Vec::new().into(), exhaustive: true };
        }
        let mut at = vec![0u32; 65537];
        for t in tokens {
            for w in t.windows(2) {
                at[pair(w) + 1] += 1;
            }
        }
        for p in 0..65536 {
            at[p + 1] += at[p];
        }
        let mut free = at.clone();
        let mut spans = vec![Span::default(); at[65536] as usize];
        for t in tokens {
            for (k, w) in t.windows(2).enumerate() {
                let slot = &mut free[pair(w)];
                spans[*slot as usize] = Span { k: k as u16, len: t.len() as u16 };
                *slot += 1;
            }
        }
        // Deduplicate each pair's run in place; `seen` holds the (k, L) of the current run
        // (tokens of up to 255 bytes; longer ones are rare and simply kept).
        let mut seen = vec![0u64; 1024];
        let bit = |Span { k, len }: Span| (k < 256 && len < 256).then_some((k as usize) << 8 | len as usize);
        let mut out = 0usize;
        let mut kept = vec![0u32; 65537];
        for p in 0..65536 {
            kept[p] = out as u32;
            for e in at[p] as usize..at[p + 1] as usize {
                let span = spans[e];
                if let Some(b) = bit(span) {
                    if seen[b >> 6] & 1 << (b & 63) != 0 {
                        continue;
                    }
                    seen[b >> 6] |= 1 << (b & 63);
                }
                spans[out] = span;
                out += 1;
            }
            for &span in &spans[kept[p] as usize..out] {
                if let Some(b) = bit(span) {
                    seen[b >> 6] = 0;
                }
            }
        }
        kept[65536] = out as u32;
        spans.truncate(out);
        spans.shrink_to_fit();
        Seams { at: kept.into(), spans: spans.into(), exhaustive: false }
    }

    /// Whether `found(i, j)` holds for a substring `joined[i..j]` that crosses `seam` (0 <
    /// seam < joined.len()) and whose offset and length some token containing the seam's two
    /// bytes has; `found` says whether it is a token, and the search stops at the first yes.
    #[inline]
    pub fn any_across(&self, joined: &[u8], seam: usize, mut found: impl FnMut(usize, usize) -> bool) -> bool {
        debug_assert!(seam > 0 && seam < joined.len());
        if self.exhaustive {
            return (0..seam).any(|i| (seam + 1..=joined.len()).any(|j| found(i, j)));
        }
        let p = (joined[seam - 1] as usize) << 8 | joined[seam] as usize;
        let (from, to) = (self.at[p] as usize, self.at[p + 1] as usize);
        self.spans[from..to].iter().any(|&Span { k, len }| {
            let (k, len) = (k as usize, len as usize);
            // The token would start k bytes before the pair's first byte.
            k < seam && seam - 1 - k + len <= joined.len() && {
                let i = seam - 1 - k;
                found(i, i + len)
            }
        })
    }
}

/// The index as `encode::frozen` writes and reads it (every field, named, so that a field added
/// to it fails to compile here until it is written too).
impl Seams {
    pub(crate) fn freeze(&self, w: &mut Writer) {
        let Seams { at, spans, exhaustive } = self;
        w.u32s(at);
        w.records(spans, |&Span { k, len }| {
            let mut b = [0u8; 4];
            b[..2].copy_from_slice(&k.to_le_bytes());
            b[2..].copy_from_slice(&len.to_le_bytes());
            b
        });
        w.u64(u64::from(*exhaustive));
    }

    /// The index `freeze` wrote, if every pair's run lies in order inside `spans`.
    pub(crate) fn thaw(r: &mut Reader) -> Option<Seams> {
        let at = r.u32s()?;
        let spans =
            r.table(|b: [u8; 4]| Span { k: u16::from_le_bytes([b[0], b[1]]), len: u16::from_le_bytes([b[2], b[3]]) })?;
        let exhaustive = match r.u64()? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let ordered = at.len() == 65537 && at.windows(2).all(|w| w[0] <= w[1]) && at[65536] as usize == spans.len();
        ordered.then_some(Seams { at, spans, exhaustive })
    }

    /// Whether every table is read in place from frozen bytes.
    pub(crate) fn in_place(&self) -> bool {
        self.at.is_borrowed() && self.spans.is_borrowed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exhaustive search over every substring crossing the seam.
    fn any_exhaustive(tokens: &[&[u8]], joined: &[u8], seam: usize) -> bool {
        (0..seam).any(|i| (seam + 1..=joined.len()).any(|j| tokens.contains(&&joined[i..j])))
    }

    #[test]
    fn finds_exactly_the_tokens_that_cross_a_seam() {
        let tokens: Vec<&[u8]> = vec![b"ab", b"bc", b"abc", b"xabcy", b"cab", "中文".as_bytes(), b"aa", b"aaa"];
        let seams = Seams::new(&tokens);
        let mut rnd = crate::test_data::rng(12345);
        let mut next = move |n: usize| rnd(n as u64) as usize;
        let alphabet: Vec<u8> = b"abcxy".iter().copied().chain("中文".bytes()).collect();
        for _ in 0..20_000 {
            let n = 2 + next(9);
            let joined: Vec<u8> = (0..n).map(|_| alphabet[next(alphabet.len())]).collect();
            for seam in 1..n {
                let fast = seams.any_across(&joined, seam, |i, j| tokens.contains(&&joined[i..j]));
                assert_eq!(fast, any_exhaustive(&tokens, &joined, seam), "{joined:?} at {seam}");
            }
        }
        // A token crossing at its very start and at its very end.
        assert!(seams.any_across(b"xabcy", 1, |i, j| tokens.contains(&&b"xabcy"[i..j])));
        assert!(seams.any_across(b"xabcy", 4, |i, j| tokens.contains(&&b"xabcy"[i..j])));
        assert!(!seams.any_across(b"ca", 1, |i, j| tokens.contains(&&b"ca"[i..j])));
        // A token too long for the index: every substring is searched, still exactly.
        let long = vec![b'z'; u16::MAX as usize + 1];
        let tokens: Vec<&[u8]> = vec![b"ab", &long];
        let seams = Seams::new(&tokens);
        assert!(seams.any_across(b"xaby", 2, |i, j| tokens.contains(&&b"xaby"[i..j])));
        assert!(!seams.any_across(b"xaby", 1, |i, j| tokens.contains(&&b"xaby"[i..j])));
    }
}
