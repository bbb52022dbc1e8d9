//! Many pieces at once: the cl100k and o200k splits of 64 ASCII bytes, computed with bit
//! operations on class masks (one bit per byte) instead of one branchy step per piece.
//!
//! Why: on prose and code a piece is about four bytes long, and the scalar splitter pays one or
//! two mispredicted branches per piece (which branch of the pattern, how long the run). Here a
//! window of 64 bytes is classified with SSE2 (or a plain loop off x86_64), every piece start
//! in it is derived from the masks, and the pieces are handed out by walking the set bits.
//!
//! The derivation (each rule checked by the tests against fancy-regex). The patterns have no
//! look-behind, so the pieces of a text from a piece start on are those of that suffix alone:
//! the window starts at a known piece start and is read as if the text began there. In ASCII
//! every byte is a letter L (o200k: upper U or lower), a digit D, a space SP, another blank T
//! (`\t \v \f`), a newline NL (`\r \n`) or other, P. Then a byte k starts a piece when:
//! * a letter run starts at k and the byte before is not its prefix. A prefix (`[^\r\n\p{L}
//!   \p{N}]`) is SP or T, or a P that starts its own P run and has no SP before it (a longer
//!   P run is taken whole by ` ?P+`, an SP before one P joins it as ` P`);
//! * o200k: k is upper and k - 1 lower (`U*W+` stops at the first upper after a lower);
//! * a digit run starts at k - 3m (`\p{N}{1,3}` cuts digit runs in threes from their start);
//! * a P run starts at k without SP before it; the newlines right after a P run (cl100k
//!   `[\r\n]*`; o200k `[\r\n/]*`, slashes too) belong to its piece and start nothing;
//! * a blank run starts at k (newlines taken by a P run left out of it); or k is the start of
//!   the run's last SP/T stretch, or its last byte when that is SP/T (`\s*[\r\n]` ends a piece
//!   after the run's last newline; `\s+(?!\S)` leaves the last blank to the next piece).
//!
//! What the window cannot see stops it early: a non-ASCII byte (except the three of U+FFFD,
//! a P character, which random bytes decoded with replacement are full of), and an apostrophe that may
//! start a contraction (cl100k: any `'` before a contraction letter or the window's edge;
//! o200k: such a `'` right after a letter, where `(?i:'s|...)` ends a word). Starts that depend
//! on a byte past the known part (the inner starts of a blank run reaching it) are left for
//! the next window. The caller keeps the last start found as the next window's first byte,
//! so the piece that runs past the window is never cut.

/// Class masks of a 64-byte window: bit k describes byte k.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub(super) struct Classes {
    /// Bytes >= 0x80.
    pub high: u64,
    /// ASCII letters.
    pub letter: u64,
    /// `A-Z`.
    pub upper: u64,
    pub digit: u64,
    pub space: u64,
    /// `\t \v \f`.
    pub tab: u64,
    /// `\r \n`.
    pub newline: u64,
    pub apostrophe: u64,
    pub slash: u64,
}

/// `x` with each byte's bit moved to the next byte (bit k holds byte k - 1; nothing before 0).
#[inline(always)]
fn before(x: u64) -> u64 {
    x << 1
}

/// `x` with each byte's bit moved to the byte before (bit k holds byte k + 1).
#[inline(always)]
fn after(x: u64) -> u64 {
    x >> 1
}

/// The bytes of `class` from each marker to the end of its run (markers within `class`).
/// Adding the markers to the class carries each one to the end of its run.
#[inline(always)]
fn fill_forward(markers: u64, class: u64) -> u64 {
    let m = markers & class;
    ((m.wrapping_add(class) ^ class) | m) & class
}

/// The bytes of `class` from each marker back to the start of its run.
#[inline(always)]
fn fill_backward(markers: u64, class: u64) -> u64 {
    fill_forward(markers.reverse_bits(), class.reverse_bits()).reverse_bits()
}

/// The classes of `w`, with SSE2 (part of every x86_64).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
pub(super) fn classify(w: &[u8; 64]) -> Classes {
    use std::arch::x86_64::*;
    let mut c = Classes::default();
    // SAFETY: SSE2 is in the x86_64 baseline, and each load reads 16 bytes inside `w`.
    unsafe {
        // Bytes in lo..lo + len: shifted so the range starts at -128, one signed compare.
        let range = |v: __m128i, lo: u8, len: u8| {
            let t = _mm_add_epi8(v, _mm_set1_epi8(0x80u8.wrapping_sub(lo) as i8));
            _mm_movemask_epi8(_mm_cmplt_epi8(t, _mm_set1_epi8(0x80u8.wrapping_add(len) as i8))) as u16 as u64
        };
        let eq = |v: __m128i, x: u8| _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(x as i8))) as u16 as u64;
        for k in 0..4 {
            let v = _mm_loadu_si128(w.as_ptr().add(16 * k) as *const __m128i);
            let s = 16 * k;
            c.high |= (_mm_movemask_epi8(v) as u16 as u64) << s;
            c.letter |= range(_mm_or_si128(v, _mm_set1_epi8(0x20)), b'a', 26) << s;
            c.upper |= range(v, b'A', 26) << s;
            c.digit |= range(v, b'0', 10) << s;
            let newline = eq(v, b'\n') | eq(v, b'\r');
            c.newline |= newline << s;
            c.tab |= (range(v, b'\t', 5) & !newline) << s;
            c.space |= eq(v, b' ') << s;
            c.apostrophe |= eq(v, b'\'') << s;
            c.slash |= eq(v, b'/') << s;
        }
    }
    c
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn classify(w: &[u8; 64]) -> Classes {
    classify_plain(w)
}

/// The lead bytes of U+FFFD (`EF BF BD`, what invalid bytes decode to with replacement).
#[inline(always)]
fn replacement_leads(w: &[u8; 64]) -> u64 {
    let [ef, bf, bd] = byte_masks(w, [0xEF, 0xBF, 0xBD]);
    ef & after(bf) & after(after(bd))
}

/// For each of `bytes`, where it is in `w`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
#[inline(always)]
fn byte_masks(w: &[u8; 64], bytes: [u8; 3]) -> [u64; 3] {
    use std::arch::x86_64::*;
    let mut m = [0u64; 3];
    // SAFETY: as in `classify`.
    unsafe {
        for k in 0..4 {
            let v = _mm_loadu_si128(w.as_ptr().add(16 * k) as *const __m128i);
            for (mask, x) in m.iter_mut().zip(bytes) {
                *mask |= (_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(x as i8))) as u16 as u64) << (16 * k);
            }
        }
    }
    m
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn byte_masks(w: &[u8; 64], bytes: [u8; 3]) -> [u64; 3] {
    let mut m = [0u64; 3];
    for (k, &x) in w.iter().enumerate() {
        for (mask, want) in m.iter_mut().zip(bytes) {
            *mask |= ((x == want) as u64) << k;
        }
    }
    m
}

/// The same classes byte by byte (other targets, and the test of the SSE2 version).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(super) fn classify_plain(w: &[u8; 64]) -> Classes {
    let mut c = Classes::default();
    for (k, &x) in w.iter().enumerate() {
        let bit = 1u64 << k;
        let set = |m: &mut u64, yes: bool| *m |= if yes { bit } else { 0 };
        set(&mut c.high, x >= 0x80);
        set(&mut c.letter, x.is_ascii_alphabetic());
        set(&mut c.upper, x.is_ascii_uppercase());
        set(&mut c.digit, x.is_ascii_digit());
        set(&mut c.space, x == b' ');
        set(&mut c.tab, matches!(x, b'\t' | 0x0B | 0x0C));
        set(&mut c.newline, matches!(x, b'\r' | b'\n'));
        set(&mut c.apostrophe, x == b'\'');
        set(&mut c.slash, x == b'/');
    }
    c
}

/// A letter that may follow `'` in a contraction of cl100k or o200k (`s d m t ll ve re`),
/// either case. (The non-ASCII ones that fold to them never get here: the window stops at
/// the first non-ASCII byte.)
#[inline(always)]
fn contraction_letter(x: u8) -> bool {
    matches!(x | 0x20, b's' | b'd' | b'm' | b't' | b'l' | b'v' | b'r')
}

/// Whether a window is worth trying at an ASCII byte followed by `next`: not when `next` is
/// non-ASCII and not the lead byte of U+FFFD (an ASCII space or newline between CJK characters
/// would settle at most one piece).
#[inline(always)]
pub(super) fn worth_a_window(next: u8) -> bool {
    next < 0x80 || next == 0xEF
}

/// The pieces of `b[i..]` that the window `b[i..i + 64]` settles: calls `f` for each and
/// returns the end of the last one (`i` when it settles none). `i` must be a piece start and
/// `i + 64 <= b.len()`. `O200K` picks the pattern (else cl100k).
#[inline(always)]
pub(super) fn split_window<const O200K: bool>(b: &[u8], i: usize, f: &mut impl FnMut(usize, usize)) -> usize {
    let w: &[u8; 64] = b[i..i + 64].try_into().expect("64 bytes");
    // A non-ASCII byte among the first 16 (CJK text between its ASCII spaces and newlines):
    // not worth classifying (a U+FFFD there costs only this shortcut).
    let word = |k: usize| u64::from_le_bytes(w[k..k + 8].try_into().expect("8 bytes"));
    let high = |k: usize| word(k) & 0x8080_8080_8080_8080;
    let first_high = if high(0) != 0 { high(0).trailing_zeros() / 8 } else { 8 + high(8).trailing_zeros() / 8 };
    if first_high < 16 && w[first_high as usize..first_high as usize + 3] != [0xEF, 0xBF, 0xBD] {
        return i;
    }
    let c = classify(w);
    // 1. The known part: up to the first non-ASCII byte other than a whole U+FFFD (too little
    //    of it is not worth it), then up to the first apostrophe that may begin a contraction.
    //    U+FFFD is P, and its three bytes are marked P: runs of P bytes are runs of P characters.
    let (lead, replacement) = if c.high == 0 {
        (0, 0)
    } else {
        let lead = replacement_leads(w);
        (lead, lead | lead << 1 | lead << 2)
    };
    let ascii = (c.high & !replacement).trailing_zeros() as usize;
    if ascii < 16 {
        return i;
    }
    let mut known = if ascii == 64 { !0u64 } else { (1u64 << ascii) - 1 };
    let mut ap = c.apostrophe & known;
    if O200K {
        ap &= before(c.letter);
    }
    while ap != 0 {
        let k = ap.trailing_zeros() as usize;
        if k + 1 >= ascii || contraction_letter(w[k + 1]) {
            if k == 0 {
                return i;
            }
            known = (1u64 << k) - 1;
            break;
        }
        ap &= ap - 1;
    }
    let letter = c.letter & known;
    let digit = c.digit & known;
    let space = c.space & known;
    let blank = (c.space | c.tab) & known;
    let newline = c.newline & known;
    let white = blank | newline;
    let other = known & !(c.letter | c.digit | c.space | c.tab | c.newline);

    // 2. What a P run takes after it: the newlines (o200k: and slashes) right behind it.
    let tail_class = if O200K { newline | (c.slash & known) } else { newline };
    let taken = fill_forward(newline & before(other), tail_class);
    let other = other & !taken;
    let white = white & !taken;
    let other_starts = other & !before(other);

    // 3. Piece starts.
    let letter_runs = letter & !before(letter);
    // (A prefix marked at its last byte: an SP/T, or one P character that starts its run.)
    let lone = other_starts & !before(space);
    let prefix = blank | (lone & !lead) | (lone & lead) << 2;
    let mut starts = letter_runs & !before(prefix);
    if O200K {
        starts |= c.upper & known & before(letter & !c.upper);
    }
    let mut groups = digit & !before(digit);
    starts |= groups;
    let triples = digit & before(digit) & before(before(digit));
    loop {
        groups = (groups << 3) & triples;
        if groups == 0 {
            break;
        }
        starts |= groups;
    }
    starts |= other_starts & !before(space);
    starts |= white & !before(white);
    // The last byte of a blank run when it is SP/T and a known non-blank follows, and the
    // start of the SP/T stretch that ends the run.
    let last_blank = blank & after(known & !white);
    starts |= last_blank;
    let stretch = fill_backward(last_blank, blank);
    starts |= stretch & !before(stretch);

    // 4. Hand out the pieces between consecutive starts (bit 0 is always one).
    debug_assert!(starts & 1 == 1);
    let mut rest = starts & !1;
    let mut at = 0;
    while rest != 0 {
        let k = rest.trailing_zeros() as usize;
        f(i + at, i + k);
        at = k;
        rest &= rest - 1;
    }
    i + at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse2_and_plain_classes_agree() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut w = [0u8; 64];
        for round in 0..2000 {
            for (k, byte) in w.iter_mut().enumerate() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Every byte value in the first rounds, then mostly ASCII.
                *byte = if round < 256 { (round + k) as u8 } else { (x % 160) as u8 };
            }
            assert_eq!(classify(&w), classify_plain(&w), "{w:?}");
        }
    }

    #[test]
    fn fills() {
        assert_eq!(fill_forward(0b0000_1000, 0b0111_1100), 0b0111_1000);
        assert_eq!(fill_backward(0b0010_0000, 0b0111_1100), 0b0011_1100);
        assert_eq!(fill_forward(1 << 63, 3 << 62), 1 << 63);
        assert_eq!(fill_backward(1, 0b11), 1);
    }
}
