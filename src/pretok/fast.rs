//! Hand-written pre-tokenizers for the three official patterns (GPT-2, cl100k, o200k).
//!
//! This module owns one thing: cutting text into exactly the pieces that
//! `fancy_regex::Regex::new(pattern).find_iter(text)` yields for the official pattern strings,
//! without running a regex engine. Each splitter is a single forward scan with bounded
//! look-ahead (never more than the current run plus one character), no backtracking and no
//! allocation. ASCII bytes are classified with a 128-entry table; a byte >= 0x80 is decoded
//! and looked up in the two-stage Unicode table of `fast/tables.rs`, which is generated from
//! the same `regex-syntax` Unicode data that fancy-regex uses for `\s`, `\p{L}`, `\p{N}`, ...
//! (see the ignored test `regenerate_unicode_tables`).
//!
//! Why hand-written: fancy-regex runs these patterns (they contain look-ahead and possessive
//! quantifiers) on its backtracking VM, which is an order of magnitude slower than a scan
//! that knows the patterns. Each `split_*` function below is derived from the pattern's
//! leftmost-first alternation: at every position the branches are tried in pattern order and
//! the first that matches wins; each greedy quantifier takes the longest run that lets the
//! rest of its branch match (the comments name the backtracking step that each rule replaces).
//! The tests compare every splitter with fancy-regex on edge cases, 200k+ random strings per
//! pattern and the real corpora, and the class table with fancy-regex for every code point.
//!
//! Facts the derivations use (all checked by the tests):
//! * every character is exactly one of letter (L), number (N), whitespace (`\s`) or "other"
//!   (`[^\s\p{L}\p{N}]`, here called P, which includes marks \p{M});
//! * with the official patterns some branch matches at every position, and no branch matches
//!   the empty string, so the pieces tile the text and `find_iter` never skips a character.

mod tables;
mod window;

/// Which built-in pattern a splitter implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Gpt2,
    Cl100k,
    O200k,
}

use super::{CL100K as CL100K_PATTERN, GPT2 as GPT2_PATTERN, O200K as O200K_PATTERN};

impl Builtin {
    /// The official pattern string this splitter is equivalent to.
    pub fn pattern(self) -> &'static str {
        match self {
            Builtin::Gpt2 => GPT2_PATTERN,
            Builtin::Cl100k => CL100K_PATTERN,
            Builtin::O200k => O200K_PATTERN,
        }
    }

    /// The splitter for `p` if `p` is exactly one of the official pattern strings.
    pub fn from_pattern(p: &str) -> Option<Builtin> {
        [Builtin::Gpt2, Builtin::Cl100k, Builtin::O200k].into_iter().find(|b| b.pattern() == p)
    }
}

/// Split `text` into pieces exactly as the fancy-regex `find_iter` of the official pattern does,
/// calling `f(start, end)` (byte offsets) for each match, in order.
pub fn split(b: Builtin, text: &str, mut f: impl FnMut(usize, usize)) {
    match b {
        Builtin::Gpt2 => split_gpt2(text.as_bytes(), &mut f),
        Builtin::Cl100k => split_cl100k::<true>(text.as_bytes(), &mut f),
        Builtin::O200k => split_o200k::<true>(text.as_bytes(), &mut f),
    }
}

// ---------------------------------------------------------------------------------------------
// Character classes.
//
// A character's class is a set of flag bits. The table `tables::BLOCKS` stores a class index
// '0'..'7' per code point; `CLASS_FLAGS` turns it into flags.

/// `\p{L}`.
const F_L: u8 = 1;
/// `\p{N}`.
const F_N: u8 = 2;
/// `\s` (Unicode White_Space), including `\r` and `\n`.
const F_WS: u8 = 4;
/// `[\r\n]`.
const F_NL: u8 = 8;
/// o200k's "upper" set `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`.
const F_U: u8 = 16;
/// o200k's "lower" set `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`.
const F_W: u8 = 32;
/// `\p{M}` (only used by the tests; marks are otherwise "other" plus F_U|F_W).
const F_M: u8 = 64;
/// Past the end of the text: matches no class.
const F_END: u8 = 128;

/// Class index (as stored in the tables, minus b'0') -> flags.
const CLASS_FLAGS: [u8; 8] = [
    0,               // 0: other (punctuation, symbols, controls, unassigned, ...)
    F_WS,            // 1: whitespace other than \r \n
    F_WS | F_NL,     // 2: \r \n
    F_N,             // 3: number
    F_L | F_U,       // 4: Lu, Lt
    F_L | F_W,       // 5: Ll
    F_L | F_U | F_W, // 6: Lm, Lo
    F_M | F_U | F_W, // 7: Mn, Mc, Me
];

/// `[^\s\p{L}\p{N}]` ("P"): not whitespace, letter or number (and not the end).
#[inline(always)]
fn is_p(fl: u8) -> bool {
    fl & (F_L | F_N | F_WS | F_END) == 0
}

/// `[^\r\n\p{L}\p{N}]` ("X", the optional prefix of cl100k/o200k words).
#[inline(always)]
fn is_x(fl: u8) -> bool {
    fl & (F_L | F_N | F_NL | F_END) == 0
}

const fn ascii_flags() -> [u8; 128] {
    let mut t = [CLASS_FLAGS[0]; 128];
    let mut c = 0;
    while c < 128 {
        let b = c as u8;
        t[c] = if b.is_ascii_uppercase() {
            CLASS_FLAGS[4]
        } else if b.is_ascii_lowercase() {
            CLASS_FLAGS[5]
        } else if b.is_ascii_digit() {
            CLASS_FLAGS[3]
        } else if b == b'\r' || b == b'\n' {
            CLASS_FLAGS[2]
        } else if b == b' ' || b == b'\t' || b == 0x0B || b == 0x0C {
            CLASS_FLAGS[1]
        } else {
            CLASS_FLAGS[0]
        };
        c += 1;
    }
    t
}

/// The ASCII fast path: flags of each byte < 0x80.
static ASCII_FLAGS: [u8; 128] = ascii_flags();

/// Flags of a non-ASCII code point, from the generated two-stage table.
#[inline(always)]
fn cp_flags(cp: u32) -> u8 {
    let block = tables::INDEX[(cp >> tables::SHIFT) as usize] as usize;
    let class = tables::BLOCKS[(block << tables::SHIFT) | (cp as usize & ((1 << tables::SHIFT) - 1))];
    CLASS_FLAGS[(class - b'0') as usize & 7]
}

/// Flags and byte length of the character starting at `i` (`(F_END, 0)` at the end).
/// `b` is valid UTF-8 and `i` a character boundary, so a lead byte >= 0x80 is followed by its
/// continuation bytes.
#[inline(always)]
fn at(b: &[u8], i: usize) -> (u8, usize) {
    match b.get(i) {
        None => (F_END, 0),
        Some(&c) if c < 0x80 => (ASCII_FLAGS[c as usize], 1),
        Some(&c) => at_multibyte(b, i, c),
    }
}

#[inline]
fn at_multibyte(b: &[u8], i: usize, c: u8) -> (u8, usize) {
    let cont = |k: usize| (b[i + k] & 0x3F) as u32;
    if c < 0xE0 {
        (cp_flags(((c as u32 & 0x1F) << 6) | cont(1)), 2)
    } else if c < 0xF0 {
        (cp_flags(((c as u32 & 0x0F) << 12) | (cont(1) << 6) | cont(2)), 3)
    } else {
        (cp_flags(((c as u32 & 0x07) << 18) | (cont(1) << 12) | (cont(2) << 6) | cont(3)), 4)
    }
}

/// End of the maximal run of characters whose flags satisfy `pred`, starting at `i`.
#[inline(always)]
fn run(b: &[u8], mut i: usize, pred: impl Fn(u8) -> bool) -> usize {
    loop {
        let (fl, l) = at(b, i);
        if !pred(fl) {
            return i;
        }
        i += l;
    }
}

/// End of the maximal run of letters (`\p{L}`) starting at `i`: ASCII letters by a plain byte
/// test first (most of the bytes of English text and code), then any letter by its class.
#[inline(always)]
fn letters(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_alphabetic() {
        i += 1;
    }
    run(b, i, |x| x & F_L != 0)
}

/// `\p{N}{1,3}` at `i` when it starts with an ASCII digit and the plain byte test settles it
/// (three ASCII digits, or fewer followed by an ASCII byte or the end): the piece's end. None
/// when a non-ASCII character follows, which may be a number too (`run_max` decides).
#[inline(always)]
fn ascii_digits3(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    while j < b.len() && j < i + 3 && b[j].is_ascii_digit() {
        j += 1;
    }
    (j == i + 3 || j == b.len() || b[j] < 0x80).then_some(j)
}

/// Like `run`, but at most `max` characters.
#[inline(always)]
fn run_max(b: &[u8], mut i: usize, mut max: usize, pred: impl Fn(u8) -> bool) -> usize {
    while max > 0 {
        let (fl, l) = at(b, i);
        if !pred(fl) {
            break;
        }
        i += l;
        max -= 1;
    }
    i
}

/// End of the maximal run of the given ASCII bytes starting at `i`.
#[inline(always)]
fn run_bytes(b: &[u8], mut i: usize, set: &[u8]) -> usize {
    while i < b.len() && set.contains(&b[i]) {
        i += 1;
    }
    i
}

/// The maximal whitespace run starting at `i` (which is whitespace), as
/// `(end, start of its last character, end of its last \r or \n, or 0 if it has none)`.
#[inline(always)]
fn ws_run(b: &[u8], i: usize) -> (usize, usize, usize) {
    let (mut j, mut last, mut nl_end) = (i, i, 0);
    loop {
        let (fl, l) = at(b, j);
        if fl & F_WS == 0 {
            return (j, last, nl_end);
        }
        if fl & F_NL != 0 {
            nl_end = j + l;
        }
        last = j;
        j += l;
    }
}

/// `\s+(?!\S)|\s+` at `i` (which starts a whitespace run ending at `j`, whose last character
/// starts at `last`): `\s+` first takes the whole run; the look-ahead passes if the run ends
/// the text, otherwise the regex gives back one character (the one before a non-space always
/// passes `(?!\S)`), which works if the run had at least two characters; a single whitespace
/// character before a non-space falls through to the plain `\s+`.
#[inline(always)]
fn ws_tail(n: usize, i: usize, j: usize, last: usize) -> usize {
    if j == n || last == i {
        j
    } else {
        last
    }
}

/// Case-insensitive letter at `i` as the regex crate's simple case folding sees it for the
/// letters of the contractions: ASCII letters, and U+017F LATIN SMALL LETTER LONG S, which
/// folds to `s`. (The test `case_folding_matches_fancy_regex` checks this against
/// `(?i:x)` for every code point and every letter used.)
#[inline(always)]
fn fold_letter(b: &[u8], i: usize) -> Option<(u8, usize)> {
    match b.get(i) {
        Some(&c) if c.is_ascii_alphabetic() => Some((c | 0x20, 1)),
        Some(&0xC5) if b.get(i + 1) == Some(&0xBF) => Some((b's', 2)),
        _ => None,
    }
}

/// Length of `'(?i:[sdmt]|ll|ve|re)` at `i` (0 if none). The alternatives have distinct first
/// letters, so at most one can match: leftmost-first order does not matter.
#[inline(always)]
fn contraction_ci(b: &[u8], i: usize) -> usize {
    if b.get(i) != Some(&b'\'') {
        return 0;
    }
    let Some((x, l1)) = fold_letter(b, i + 1) else {
        return 0;
    };
    let second = |want: u8| match fold_letter(b, i + 1 + l1) {
        Some((y, l2)) if y == want => 1 + l1 + l2,
        _ => 0,
    };
    match x {
        b's' | b'd' | b'm' | b't' => 1 + l1,
        b'l' => second(b'l'),
        b'v' | b'r' => second(b'e'),
        _ => 0,
    }
}

/// Length of GPT-2's case-sensitive `'(?:[sdmt]|ll|ve|re)` at `i` (0 if none).
#[inline(always)]
fn contraction_cs(b: &[u8], i: usize) -> usize {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b's' | b'd' | b'm' | b't'), _) => 2,
        (Some(b'l'), Some(b'l')) | (Some(b'v' | b'r'), Some(b'e')) => 3,
        _ => 0,
    }
}

// ---------------------------------------------------------------------------------------------
// GPT-2: '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s
// (`\s++$` and `\s+(?!\S)` agree on a run that ends the text; `\s` takes what `\s+` would,
// one character before a non-space; so the original spelling splits the same.)

fn split_gpt2(b: &[u8], f: &mut impl FnMut(usize, usize)) {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c0 = b[i];
        let end = 'm: {
            // 1. '(?:[sdmt]|ll|ve|re): first branch, so it beats `'` as punctuation.
            if c0 == b'\'' {
                let l = contraction_cs(b, i);
                if l > 0 {
                    break 'm i + l;
                }
            }
            // 2-4. ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+`: each first tries with the
            // space. A space is none of L, N, P, so with a leading space only the class of the
            // next character decides, in branch order; otherwise the class of c0 does.
            // The runs are greedy and nothing follows them in their branch: maximal runs.
            let (f0, l0) = at(b, i);
            let (start, fl) = if c0 == b' ' {
                let (f1, _) = at(b, i + 1);
                (i + 1, f1)
            } else {
                (i, f0)
            };
            if fl & F_L != 0 {
                break 'm letters(b, start);
            }
            if fl & F_N != 0 {
                break 'm run(b, start, |x| x & F_N != 0);
            }
            if is_p(fl) {
                break 'm run(b, start, is_p);
            }
            // 5-6. c0 is whitespace (a space not followed by L/N/P lands here too).
            debug_assert!(f0 & F_WS != 0 && l0 > 0);
            let (j, last, _) = ws_run(b, i);
            ws_tail(n, i, j, last)
        };
        f(i, end);
        i = end;
    }
}

// ---------------------------------------------------------------------------------------------
// cl100k: '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
//         |\s++$|\s*[\r\n]|\s+(?!\S)|\s

/// With `WINDOW`, ASCII stretches go 64 bytes at a time through `window::split_window`
/// (without it, only the scalar steps below run: the tests compare the two).
fn split_cl100k<const WINDOW: bool>(b: &[u8], f: &mut impl FnMut(usize, usize)) {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c0 = b[i];
        if WINDOW && c0 < 0x80 && i + 64 <= n && window::worth_a_window(b[i + 1]) {
            let e = window::split_window::<false>(b, i, f);
            if e > i {
                i = e;
                continue;
            }
        }
        let end = 'm: {
            // A digit can only start branch 3 (it is no letter, no X prefix, no quote).
            if c0.is_ascii_digit() {
                if let Some(e) = ascii_digits3(b, i) {
                    break 'm e;
                }
            }
            // 1. '(?i:[sdmt]|ll|ve|re): before branch 2, so "'s" beats "'" as a word prefix.
            if c0 == b'\'' {
                let l = contraction_ci(b, i);
                if l > 0 {
                    break 'm i + l;
                }
            }
            let (f0, l0) = at(b, i);
            // 2. [^\r\n\p{L}\p{N}]?+\p{L}+ : a letter starts a maximal letter run; any X
            // character (which is never a letter) is a prefix if a letter follows it. (The
            // possessive `?+` changes nothing: without the prefix, c0 is not a letter.)
            if f0 & F_L != 0 {
                break 'm letters(b, i + l0);
            }
            if is_x(f0) {
                let (f1, l1) = at(b, i + l0);
                if f1 & F_L != 0 {
                    break 'm letters(b, i + l0 + l1);
                }
            }
            // 3. \p{N}{1,3}: greedy, at most three numbers.
            if f0 & F_N != 0 {
                break 'm run_max(b, i, 3, |x| x & F_N != 0);
            }
            // 4.  ?[^\s\p{L}\p{N}]++[\r\n]* : optional space, maximal P run, maximal \r\n run.
            // (A P run always ends at a non-P, so `++` gives nothing back anyway.)
            if c0 == b' ' {
                let (f1, l1) = at(b, i + 1);
                if is_p(f1) {
                    let e = run(b, i + 1 + l1, is_p);
                    break 'm run_bytes(b, e, b"\r\n");
                }
            }
            if is_p(f0) {
                let e = run(b, i + l0, is_p);
                break 'm run_bytes(b, e, b"\r\n");
            }
            // c0 is whitespace.
            let (j, last, nl_end) = ws_run(b, i);
            // 5. \s++$ : a run that ends the text is one piece, newlines and all.
            if j == n {
                break 'm j;
            }
            // 6. \s*[\r\n] : `\s*` takes the whole run and gives back until a [\r\n] can
            // follow: the match ends just after the last \r or \n of the run.
            if nl_end != 0 {
                break 'm nl_end;
            }
            // 7-8. \s+(?!\S)|\s
            ws_tail(n, i, j, last)
        };
        f(i, end);
        i = end;
    }
}

// ---------------------------------------------------------------------------------------------
// o200k (U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], X = [^\r\n\p{L}\p{N}],
//        C = (?i:'s|'t|'re|'ve|'m|'ll|'d)):
//   B1 X?U*W+C? | B2 X?U+W*C? | B3 \p{N}{1,3} | B4  ?[^\s\p{L}\p{N}]+[\r\n/]* | B5 \s*[\r\n]+
//   | B6 \s+(?!\S) | B7 \s+
//
// Unlike cl100k, `X?` is not possessive, and marks (\p{M}) are at once X, U and W, so the
// word branches are resolved in the regex's exact order: B1 with the prefix, B1 without it,
// B2 with it, B2 without it.

/// The ends of `U*W+` (B1) and `U+W*` (B2) starting at `s`, or None where they fail.
///
/// B1: `U*` first takes the maximal U run [s, u). If the character at u is in W (then it is
/// Ll, since it is not in U), `W+` takes the maximal W run from u. Otherwise `U*` gives back
/// characters one by one until `W+` can start: at the last character of [s, u) that is also in
/// W (Lm, Lo or M); `W+` then stops right after it, because every later character of the run
/// is Lu/Lt (not W) and the one at u is not W. With no such character, B1 fails.
/// B2: `U+` needs u > s; `W*` then takes the maximal W run from u.
#[inline(always)]
fn o200k_word(b: &[u8], s: usize) -> (Option<usize>, Option<usize>) {
    let mut u = s;
    let mut last_both_end = None;
    let fu = loop {
        let (fl, l) = at(b, u);
        if fl & F_U == 0 {
            break fl;
        }
        if fl & F_W != 0 {
            last_both_end = Some(u + l);
        }
        u += l;
    };
    if fu & F_W != 0 {
        let w = run(b, u, |x| x & F_W != 0);
        (Some(w), if u > s { Some(w) } else { None })
    } else {
        (last_both_end, if u > s { Some(u) } else { None })
    }
}

/// `WINDOW` as in `split_cl100k`.
fn split_o200k<const WINDOW: bool>(b: &[u8], f: &mut impl FnMut(usize, usize)) {
    let n = b.len();
    let mut i = 0;
    while i < n {
        let c0 = b[i];
        if WINDOW && c0 < 0x80 && i + 64 <= n && window::worth_a_window(b[i + 1]) {
            let e = window::split_window::<true>(b, i, f);
            if e > i {
                i = e;
                continue;
            }
        }
        let end = 'm: {
            // A digit can only start B3 (it is in neither U, W nor X).
            if c0.is_ascii_digit() {
                if let Some(e) = ascii_digits3(b, i) {
                    break 'm e;
                }
            }
            let (f0, l0) = at(b, i);
            // B1/B2, in the order: B1 with prefix (p1), B1 without (q1), B2 with (p2),
            // B2 without (q2). Without the prefix, a word needs c0 in U or W (letter or mark).
            let (p1, p2) = if is_x(f0) { o200k_word(b, i + l0) } else { (None, None) };
            let word = match p1 {
                Some(e) => Some(e),
                None => {
                    let (q1, q2) = if f0 & (F_U | F_W) != 0 { o200k_word(b, i) } else { (None, None) };
                    q1.or(p2).or(q2)
                }
            };
            if let Some(e) = word {
                // C? is greedy and ends the branch: take it when it is there.
                break 'm e + contraction_ci(b, e);
            }
            // B3. \p{N}{1,3}
            if f0 & F_N != 0 {
                break 'm run_max(b, i, 3, |x| x & F_N != 0);
            }
            // B4.  ?[^\s\p{L}\p{N}]+[\r\n/]* : maximal P run (a mark here is P), then the
            // maximal run of \r \n / ('/' is P, so the P run has already taken any '/' and the
            // tail starts with \r or \n; but a '/' after them belongs to the tail).
            if c0 == b' ' {
                let (f1, l1) = at(b, i + 1);
                if is_p(f1) {
                    let e = run(b, i + 1 + l1, is_p);
                    break 'm run_bytes(b, e, b"\r\n/");
                }
            }
            if is_p(f0) {
                let e = run(b, i + l0, is_p);
                break 'm run_bytes(b, e, b"\r\n/");
            }
            // c0 is whitespace.
            let (j, last, nl_end) = ws_run(b, i);
            // B5. \s*[\r\n]+ : `\s*` gives back until [\r\n]+ can match, i.e. to the last \r
            // or \n of the run; `[\r\n]+` then ends right after it (what follows it in the
            // run is not \r \n).
            if nl_end != 0 {
                break 'm nl_end;
            }
            // B6-B7. \s+(?!\S)|\s+
            ws_tail(n, i, j, last)
        };
        f(i, end);
        i = end;
    }
}

// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    //! Equality with fancy-regex: hand-picked edge cases, random strings, the real corpora,
    //! and the class table and case folding for every code point. Run the big ones with
    //! `cargo test --release pretok::fast`. The speed comparison is `cargo bench --bench pretok`.
    use super::*;
    use fancy_regex::Regex;

    const ALL: [Builtin; 3] = [Builtin::Gpt2, Builtin::Cl100k, Builtin::O200k];

    fn compiled() -> Vec<(Builtin, Regex)> {
        ALL.iter().map(|&b| (b, Regex::new(b.pattern()).unwrap())).collect()
    }

    fn regex_pieces(re: &Regex, text: &str) -> Vec<(usize, usize)> {
        re.find_iter(text)
            .map(|m| {
                let m = m.expect("fancy-regex failed on a test input");
                (m.start(), m.end())
            })
            .collect()
    }

    fn fast_pieces(b: Builtin, text: &str) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        split(b, text, |s, e| v.push((s, e)));
        v
    }

    /// None if equal, else a description of the first difference.
    fn diff(b: Builtin, re: &Regex, text: &str) -> Option<String> {
        let want = regex_pieces(re, text);
        let got = fast_pieces(b, text);
        if want == got {
            return None;
        }
        let show = |v: &[(usize, usize)]| v.iter().map(|&(s, e)| &text[s..e]).collect::<Vec<_>>();
        Some(format!("{b:?} on {text:?}:\n  regex: {:?}\n  fast:  {:?}", show(&want), show(&got)))
    }

    fn assert_same(regexes: &[(Builtin, Regex)], text: &str) {
        for (b, re) in regexes {
            if let Some(d) = diff(*b, re, text) {
                panic!("{d}");
            }
        }
    }

    #[test]
    fn api() {
        for b in ALL {
            assert_eq!(Builtin::from_pattern(b.pattern()), Some(b));
        }
        assert_eq!(Builtin::from_pattern(r"\S+"), None);
        // The same strings as the constants of `pretok` that the Splitter uses.
        assert_eq!(Builtin::Gpt2.pattern(), crate::pretok::GPT2);
        assert_eq!(Builtin::Cl100k.pattern(), crate::pretok::CL100K);
        assert_eq!(Builtin::O200k.pattern(), crate::pretok::O200K);
        let text = "I'LL pay 12345!\n\n";
        let mut v = vec![];
        split(Builtin::Cl100k, text, |s, e| v.push(&text[s..e]));
        assert_eq!(v, ["I", "'LL", " pay", " ", "123", "45", "!\n\n"]);
        let text = "HelloWorld don't";
        let mut v = vec![];
        split(Builtin::O200k, text, |s, e| v.push(&text[s..e]));
        assert_eq!(v, ["Hello", "World", " don't"]);
    }

    const EDGE_CASES: &[&str] = &[
        "",
        " ",
        "  ",
        "   ",
        "a",
        " a",
        "  a",
        "a ",
        "a  ",
        "\n",
        "\r\n",
        " \n",
        "\n ",
        "  \n  ",
        "a\n\n b",
        "\r\n\r\n",
        "x \r\n y",
        "\n\n\n",
        "a\r",
        "a\r\n",
        "a \r",
        " \r \n \t",
        "end   ",
        "end\t",
        "\t\ta",
        "\u{b}\u{c}x",
        " \u{b}x",
        "a \n\n  b\r\n\r\n\tc  \n",
        "Hello world's  end",
        "I'LL pay 12345!\n\n",
        "HelloWorld don't",
        "don't DON'T 'S 'Ll 'lL",
        "'Re 're 'vE 'VE 'M 'D 'T",
        "'s'S'\u{17f}",
        "\u{17f}",
        "'\u{17f}",
        "x'\u{17f}",
        "'\u{212a}",
        "'",
        "''",
        "'''s",
        "x'",
        "x's",
        "X'S",
        "x'Ll",
        "x'LLx",
        "x're",
        "x'r",
        "x'v",
        "x'ver",
        "x''s",
        " 's",
        "!'s",
        "a'sb",
        "I'm",
        "'ll've",
        "\u{301}'s",
        "\u{4e2d}'s",
        "A's",
        "AB'LL",
        "1234567",
        " 123",
        "a1b2",
        "12a",
        "\u{663}\u{664}\u{665}\u{666}",
        "\u{2167}\u{bd}\u{b2}",
        "x 1 2",
        "1\n2",
        "\u{a0}a",
        "a\u{a0}\u{a0}b",
        "\u{3000}\u{4e2d}\u{6587}",
        "x\u{2028}y",
        "x\u{85}y",
        "\u{85}\u{85}",
        "\u{85}\n",
        "\u{2029}\u{2029}a",
        "\u{1680}a",
        "a\u{a0}",
        "a\u{3000}",
        "e\u{301}",
        "\u{301}",
        " \u{301}a",
        "!\u{301}",
        "\u{301}\u{301}",
        "a\u{301}B",
        "A\u{301}",
        "!\u{301}A",
        "\u{301}A",
        "\u{301}!",
        " \u{301}",
        "\u{20dd}\u{903}",
        "x\u{301}1",
        "\u{4e2d}A",
        "AB\u{4e2d}",
        "\u{1c5}emal",
        "\u{2b0}a",
        "AB\u{2b0}",
        "ABcD",
        "HELLOworld",
        "\u{1c5}\u{1c5}",
        "A\u{1c5}b",
        "\u{aa}B",
        "B\u{aa}C",
        "\u{4e2d}\u{301}A",
        "A\u{301}B",
        "\u{1f44d}\u{1f3fd} ok",
        "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}",
        "\u{1f1fa}\u{1f1f8}",
        "x\u{200d}y",
        "\u{fe0f}",
        "a\u{fe0f}",
        " \u{1f600}",
        "\u{1f600}a",
        "path/to/file\n/x",
        "!!\n/\n/",
        "a/\n",
        " //\r\n/ ",
        "a!\n\n",
        "a! \n",
        "!\r\r\n\n/",
        "\u{3a3}\u{3c2} \u{130}\u{131} \u{df} \u{1e9e}",
        "Kelvin \u{212a}",
        "\u{0}\u{1}\u{1c}\u{1f}",
        "\u{180e}a",
        "\u{200b}a",
        "\u{feff}a",
        "\u{e000}",
        "\u{10ffff}",
        "\u{ffff}",
        "\u{ad}a",
        "\u{ff26}\u{ff55}\u{ff4c}\u{ff4c}",
        "\u{d55c}\u{ad6d}\u{c5b4} \u{d14d}\u{c2a4}\u{d2b8}",
        "\u{65e5}\u{672c}\u{8a9e}\u{306e}\u{30c6}\u{30ad}\u{30b9}\u{30c8}\u{3002}",
        "\u{645}\u{631}\u{62d}\u{628}\u{627} \u{628}\u{627}\u{644}\u{639}\u{627}\u{644}\u{645}",
        "\u{928}\u{92e}\u{938}\u{94d}\u{924}\u{947} \u{926}\u{941}\u{928}\u{93f}\u{92f}\u{93e}",
        "\u{e44}\u{e17}\u{e22}",
        "  \u{301}x",
        "\t\u{301}",
        "\n\u{301}",
        "\r\u{4e2d}",
        "\n'x",
    ];

    #[test]
    fn edge_cases_match_fancy_regex() {
        let regexes = compiled();
        for text in EDGE_CASES {
            assert_same(&regexes, text);
            // Also each case glued to letters, spaces and newlines on both sides.
            for (pre, post) in [("a", "b"), (" ", " "), ("\n", "\n"), ("  ", "x"), ("A", "'s")] {
                assert_same(&regexes, &format!("{pre}{text}{post}"));
            }
        }
    }

    /// Tricky characters, with weights.
    const ALPHABET: &[(char, u32)] = &[
        (' ', 14),
        ('a', 6),
        ('b', 2),
        ('A', 3),
        ('Z', 1),
        ('s', 3),
        ('S', 2),
        ('t', 2),
        ('T', 1),
        ('d', 1),
        ('D', 1),
        ('m', 1),
        ('M', 1),
        ('l', 2),
        ('L', 2),
        ('v', 1),
        ('V', 1),
        ('r', 1),
        ('R', 1),
        ('e', 2),
        ('E', 1),
        ('\'', 7),
        ('0', 2),
        ('1', 2),
        ('9', 1),
        ('\n', 6),
        ('\r', 3),
        ('\t', 2),
        ('/', 3),
        ('!', 2),
        ('.', 2),
        (',', 1),
        ('-', 1),
        ('"', 1),
        ('\u{a0}', 2),
        ('\u{3000}', 2),
        ('\u{2028}', 1),
        ('\u{85}', 1),
        ('\u{b}', 1),
        ('\u{c}', 1),
        ('\u{1680}', 1),
        ('\u{17f}', 2),
        ('\u{212a}', 1),
        ('\u{1c5}', 2),
        ('\u{2b0}', 2),
        ('\u{aa}', 1),
        ('\u{4e2d}', 3),
        ('\u{6587}', 1),
        ('\u{627}', 1),
        ('\u{301}', 4),
        ('\u{903}', 1),
        ('\u{20dd}', 1),
        ('\u{663}', 1),
        ('\u{2167}', 1),
        ('\u{bd}', 1),
        ('\u{b2}', 1),
        ('\u{1f600}', 1),
        ('\u{200d}', 1),
        ('\u{fe0f}', 1),
        ('\u{1f3fd}', 1),
        ('\u{e9}', 1),
        ('\u{df}', 1),
        ('\u{130}', 1),
        ('\u{3a3}', 1),
        ('\u{ad}', 1),
        ('\u{e000}', 1),
        ('\u{0}', 1),
        ('\u{1c}', 1),
        ('\u{200b}', 1),
        ('\u{10ffff}', 1),
        ('\u{1f}', 1),
        ('\u{180e}', 1),
    ];

    /// xorshift64*: deterministic, no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_strings(count: usize, seed: u64) -> impl Iterator<Item = String> {
        let total: u32 = ALPHABET.iter().map(|&(_, w)| w).sum();
        let mut rng = Rng(seed);
        (0..count).map(move |_| {
            let len = rng.below(25) as usize;
            (0..len)
                .map(|_| {
                    let mut r = rng.below(total as u64) as u32;
                    for &(c, w) in ALPHABET {
                        if r < w {
                            return c;
                        }
                        r -= w;
                    }
                    unreachable!()
                })
                .collect()
        })
    }

    #[test]
    fn random_strings_match_fancy_regex() {
        const COUNT: usize = 200_000;
        let regexes = compiled();
        let mut failures = Vec::new();
        let mut mismatches = 0;
        let mut checked = [0usize; 3];
        for text in random_strings(COUNT, 0x9E37_79B9_7F4A_7C15) {
            for (k, (b, re)) in regexes.iter().enumerate() {
                checked[k] += 1;
                if let Some(d) = diff(*b, re, &text) {
                    mismatches += 1;
                    if failures.len() < 20 {
                        failures.push(d);
                    }
                }
            }
        }
        assert!(failures.is_empty(), "{mismatches} mismatches, e.g.:\n{}", failures.join("\n"));
        assert_eq!(checked, [COUNT; 3]);
    }

    /// Mostly ASCII, with every byte class the 64-byte windows (`window.rs`) tell apart, the
    /// apostrophes that stop them, and a few non-ASCII characters that cut them short.
    const WINDOW_ALPHABET: &[(char, u32)] = &[
        (' ', 16),
        ('a', 8),
        ('b', 3),
        ('e', 3),
        ('s', 3),
        ('t', 2),
        ('l', 2),
        ('A', 3),
        ('B', 2),
        ('S', 1),
        ('L', 1),
        ('\'', 4),
        ('0', 3),
        ('1', 2),
        ('\n', 5),
        ('\r', 2),
        ('\t', 2),
        ('\u{b}', 1),
        ('/', 3),
        ('!', 2),
        ('.', 2),
        ('(', 1),
        ('\u{0}', 1),
        ('\u{7f}', 1),
        ('\u{e9}', 1),
        ('\u{4e2d}', 1),
        ('\u{a0}', 1),
        ('\u{301}', 1),
        ('\u{fffd}', 4),
    ];

    /// `count` strings of 64 to 320 characters drawn from `alphabet`.
    fn long_strings(alphabet: &'static [(char, u32)], count: usize, seed: u64) -> impl Iterator<Item = String> {
        let total: u32 = alphabet.iter().map(|&(_, w)| w).sum();
        let mut rng = Rng(seed);
        (0..count).map(move |_| {
            let len = 64 + rng.below(257) as usize;
            // Some strings repeat one short run, so that windows meet long runs and edges.
            let run = rng.below(4) == 0;
            let mut out = String::new();
            while out.chars().count() < len {
                let mut r = rng.below(total as u64) as u32;
                let mut c = alphabet[0].0;
                for &(x, w) in alphabet {
                    if r < w {
                        c = x;
                        break;
                    }
                    r -= w;
                }
                let times = if run { 1 + rng.below(9) as usize } else { 1 };
                out.extend(std::iter::repeat_n(c, times));
            }
            out
        })
    }

    fn scalar_pieces(b: Builtin, text: &str) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut f = |s, e| v.push((s, e));
        match b {
            Builtin::Cl100k => split_cl100k::<false>(text.as_bytes(), &mut f),
            Builtin::O200k => split_o200k::<false>(text.as_bytes(), &mut f),
            Builtin::Gpt2 => split_gpt2(text.as_bytes(), &mut f),
        }
        v
    }

    #[test]
    fn long_strings_match_fancy_regex() {
        const COUNT: usize = 3_000;
        let regexes: Vec<_> = compiled().into_iter().filter(|(b, _)| *b != Builtin::Gpt2).collect();
        let mut failures = Vec::new();
        for text in long_strings(WINDOW_ALPHABET, COUNT, 0x51_7CC1_B727_220A) {
            for (b, re) in &regexes {
                if let Some(d) = diff(*b, re, &text) {
                    failures.push(d);
                }
            }
        }
        let shown = failures.iter().take(5).cloned().collect::<Vec<_>>().join("\n");
        assert!(failures.is_empty(), "{} mismatches, e.g.:\n{shown}", failures.len());
    }

    #[test]
    fn windows_match_the_scalar_steps() {
        // The scalar steps are checked against fancy-regex above; this runs far more inputs.
        const COUNT: usize = 30_000;
        for (k, text) in long_strings(WINDOW_ALPHABET, COUNT, 0x2F1B_9D3A_44C0_1E57).enumerate() {
            for b in [Builtin::Cl100k, Builtin::O200k] {
                let (want, got) = (scalar_pieces(b, &text), fast_pieces(b, &text));
                assert!(want == got, "{b:?} on string {k} {text:?}: scalar {want:?}, windows {got:?}");
            }
        }
    }

    #[test]
    fn edge_cases_inside_windows_match_fancy_regex() {
        // Each edge case at many offsets of a window, after ASCII prose and before more of it.
        let regexes = compiled();
        let prose = "Who's there? It's 1999 -- don't/won't (x)\n\tand  THE end.\r\n ";
        for (k, text) in EDGE_CASES.iter().enumerate() {
            for skip in (k % 3..prose.len()).step_by(3) {
                assert_same(&regexes, &format!("{}{text}{prose}{prose}", &prose[skip..]));
            }
        }
    }

    #[test]
    fn random_bytes_with_replacement_match_fancy_regex() {
        // What the windows see on random bytes decoded with U+FFFD: mostly ASCII and U+FFFD.
        let regexes = compiled();
        let mut rng = Rng(0x0DDB_1A5E_5BAD_5EED);
        let bytes: Vec<u8> = (0..60_000).map(|_| rng.next() as u8).collect();
        let text = String::from_utf8_lossy(&bytes);
        for (b, re) in &regexes {
            assert!(regex_pieces(re, &text) == fast_pieces(*b, &text), "{b:?} differs on random bytes");
        }
    }

    fn corpus(name: &str) -> Option<String> {
        crate::test_data::read(name)
    }

    const CORPORA: [&str; 3] = ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"];

    fn floor_boundary(t: &str, mut i: usize) -> usize {
        i = i.min(t.len());
        while !t.is_char_boundary(i) {
            i -= 1;
        }
        i
    }

    #[test]
    fn corpora_match_fancy_regex() {
        let regexes = compiled();
        for name in CORPORA {
            let Some(text) = corpus(name) else { continue };
            // The whole text, and its first 200 kB with \r\n line ends.
            let crlf = text[..floor_boundary(&text, 200_000)].replace('\n', "\r\n");
            for t in [&text, &crlf] {
                for (b, re) in &regexes {
                    let want = regex_pieces(re, t);
                    let got = fast_pieces(*b, t);
                    if want != got {
                        let k = want.iter().zip(&got).position(|(a, b)| a != b).unwrap_or(want.len().min(got.len()));
                        let s = want.get(k).or(got.get(k)).map_or(0, |p| p.0);
                        let near = &t[floor_boundary(t, s.saturating_sub(40))..floor_boundary(t, s + 40)];
                        panic!(
                            "{b:?} differs on {name} at piece {k} (byte {s}), near {near:?}:\n  regex: {:?}\n  fast:  {:?}",
                            want.get(k).map(|p| &t[p.0..p.1]),
                            got.get(k).map(|p| &t[p.0..p.1])
                        );
                    }
                }
            }
        }
    }

    /// Every Unicode scalar value, in order.
    fn all_chars() -> String {
        (0..=0x10FFFFu32).filter_map(char::from_u32).collect()
    }

    /// Which code points fancy-regex's `class` matches.
    fn regex_set(all: &str, class: &str) -> Vec<bool> {
        let re = Regex::new(&format!("(?:{class})+")).unwrap();
        let mut v = vec![false; 0x110000];
        for m in re.find_iter(all) {
            for c in m.unwrap().as_str().chars() {
                v[c as usize] = true;
            }
        }
        v
    }

    fn char_flags(c: char) -> u8 {
        let mut buf = [0u8; 4];
        at(c.encode_utf8(&mut buf).as_bytes(), 0).0
    }

    #[test]
    fn classes_match_fancy_regex_for_every_code_point() {
        let all = all_chars();
        type Check = (&'static str, fn(u8) -> bool);
        let checks: [Check; 11] = [
            (r"\s", |f| f & F_WS != 0),
            (r"\S", |f| f & F_WS == 0),
            (r"\p{L}", |f| f & F_L != 0),
            (r"\p{N}", |f| f & F_N != 0),
            (r"\p{M}", |f| f & F_M != 0),
            (r"[\r\n]", |f| f & F_NL != 0),
            (r"[^\r\n\p{L}\p{N}]", is_x),
            (r"[^\s\p{L}\p{N}]", is_p),
            (r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]", |f| f & F_U != 0),
            (r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]", |f| f & F_W != 0),
            (r"[\p{L}\p{N}\s]", |f| !is_p(f)),
        ];
        let chars: Vec<char> = all.chars().collect();
        assert_eq!(chars.len(), 0x110000 - 0x800);
        let flags: Vec<u8> = chars.iter().map(|&c| char_flags(c)).collect();
        for (class, pred) in checks {
            let set = regex_set(&all, class);
            let bad: Vec<String> = chars
                .iter()
                .zip(&flags)
                .filter(|&(&c, &f)| set[c as usize] != pred(f))
                .take(10)
                .map(|(c, _)| format!("U+{:04X}", *c as u32))
                .collect();
            assert!(bad.is_empty(), "class {class} differs from fancy-regex at {bad:?}");
        }
    }

    #[test]
    fn case_folding_matches_fancy_regex() {
        let all = all_chars();
        for x in "sdmtlver".chars() {
            let set = regex_set(&all, &format!("(?i:{x})"));
            for c in all.chars() {
                let mut buf = [0u8; 4];
                let ours = fold_letter(c.encode_utf8(&mut buf).as_bytes(), 0).map(|(y, _)| y) == Some(x as u8);
                assert_eq!(set[c as usize], ours, "(?i:{x}) on U+{:04X}", c as u32);
            }
        }
    }

    /// Rewrites `fast/tables.rs` from fancy-regex's own Unicode classes:
    /// `cargo test --release pretok::fast::tests::regenerate_unicode_tables -- --ignored`.
    #[test]
    #[ignore]
    fn regenerate_unicode_tables() {
        let all = all_chars();
        let mut class = vec![0u8; 0x110000];
        let classes = [
            (1, r"\s"),
            (2, r"[\r\n]"),
            (3, r"\p{N}"),
            (4, r"[\p{Lu}\p{Lt}]"),
            (5, r"\p{Ll}"),
            (6, r"[\p{Lm}\p{Lo}]"),
            (7, r"\p{M}"),
        ];
        for (k, pat) in classes {
            for (cp, hit) in regex_set(&all, pat).into_iter().enumerate() {
                if hit {
                    class[cp] = k;
                }
            }
        }
        // Pick the block size that makes the two stages smallest.
        let mut best: Option<(usize, u32, Vec<usize>, Vec<u8>)> = None;
        for shift in 4..=10u32 {
            let mut seen = std::collections::HashMap::new();
            let mut index = Vec::new();
            let mut blocks = Vec::new();
            for chunk in class.chunks(1 << shift) {
                let next = seen.len();
                let id = *seen.entry(chunk.to_vec()).or_insert_with(|| {
                    blocks.extend_from_slice(chunk);
                    next
                });
                index.push(id);
            }
            let width = if seen.len() <= 256 { 1 } else { 2 };
            let total = index.len() * width + blocks.len();
            if !matches!(&best, Some(b) if b.0 <= total) {
                best = Some((total, shift, index, blocks));
            }
        }
        let (total, shift, index, blocks) = best.unwrap();
        let nblocks = blocks.len() >> shift;
        let ty = if nblocks <= 256 { "u8" } else { "u16" };
        let mut out = String::new();
        out.push_str("//! Generated by `regenerate_unicode_tables` in `fast.rs` from the Unicode classes of\n");
        out.push_str("//! fancy-regex/regex-syntax: do not edit. The class of a code point, as a digit:\n");
        out.push_str("//! 0 other, 1 \\s but not \\r \\n, 2 \\r \\n, 3 \\p{N}, 4 Lu/Lt, 5 Ll, 6 Lm/Lo, 7 \\p{M}.\n");
        out.push_str(&format!("//! {nblocks} distinct blocks of {} code points, {total} bytes.\n\n", 1 << shift));
        out.push_str(&format!("pub const SHIFT: u32 = {shift};\n\n"));
        out.push_str(&format!("#[rustfmt::skip]\npub static INDEX: [{ty}; {}] = [\n", index.len()));
        for row in index.chunks(24) {
            out.push_str("   ");
            for id in row {
                out.push_str(&format!(" {id},"));
            }
            out.push('\n');
        }
        out.push_str("];\n\n");
        out.push_str(&format!("#[rustfmt::skip]\npub static BLOCKS: &[u8; {}] = b\"\\\n", blocks.len()));
        for row in blocks.chunks(96) {
            out.push_str("    ");
            out.extend(row.iter().map(|&c| (b'0' + c) as char));
            out.push_str("\\\n");
        }
        out.push_str("\";\n");
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/pretok/fast/tables.rs");
        std::fs::write(path, out).unwrap();
        println!("wrote {path}: shift {shift}, {nblocks} blocks, {total} bytes");
    }
}
