//! Seed pieces by SentencePiece 0.2's rule (trainer revision 3): the substrings that its
//! enhanced suffix array over the running text offers. Owns the byte-level candidate search;
//! `trainer.rs` orders the result and keeps the best `seed_size`.
//!
//! SentencePiece 0.2 joins the training lines (each ended by a `\0`), builds a suffix array and
//! its LCP array over the bytes, and walks the LCP intervals: each is a substring that occurs at
//! least twice and whose occurrences are followed by at least two different *bytes*. An interval
//! is a candidate when it starts and ends on a character boundary, is 2 to `max_piece_length`
//! characters long, occurs at least twice and is a valid piece; its weight is frequency *
//! characters. Because the comparison is by bytes, a substring whose followers all share their
//! first UTF-8 byte (hiragana and most kana punctuation all start with 0xE3; a word end inside
//! a line is followed by `▁`, 0xE2) branches only inside a character, and is no candidate.
//! Revision 2 compared followers by character and so offered about 60% more candidates on
//! Japanese, most of them tails no SentencePiece model has.
//!
//! Here the running text is not needed: each distinct `▁`-word is written once per context it
//! occurs in, followed by what follows it there (0xE2, the first byte of the next word's `▁`,
//! inside a line; 0x00 at the end of a line), with that context's count as the weight of every
//! suffix in it. Suffixes are compared up to that byte and at most `4 * max_piece_length + 1`
//! bytes (every longer common prefix has more characters than a piece may have), so the array
//! is a sort of the word-start positions, and a substring's frequency is the sum of the weights
//! in its interval. Not reproduced: SentencePiece also counts a line-final substring a second
//! time when the line ends its 500 MB chunk (the `\0`-trimmed interval), a handful of
//! substrings of one line.

use rayon::prelude::*;

use super::trainer::{Step, Validity, Word};
use super::SplitRules;

/// First byte of `▁` (U+2581, E2 96 81): what follows a word's end inside a line.
const WS_LEAD: u8 = 0xE2;
/// What follows the last word of a line: SentencePiece's sentence delimiter.
const LINE_END_BYTE: u8 = 0;

/// One word in one context: its bytes are `text[start..end]`, `text[end]` is its follower.
struct Copy {
    word: u32,
    start: u32,
    end: u32,
    weight: u64,
}

/// The candidate seed pieces of `words` (each with its line-end count) as SentencePiece 0.2
/// finds them, with weight frequency * characters, in no particular order; `allow` filters
/// them (extension: a base model's pieces and kept texts are no seeds).
pub(super) fn candidates<'a>(
    words: &'a [Word],
    rules: SplitRules,
    max_len: usize,
    allow: impl Fn(&str) -> bool,
) -> Vec<(&'a str, u64)> {
    // (1) The words, once per context, each followed by its follower byte.
    let mut text: Vec<u8> = Vec::new();
    let mut copies: Vec<Copy> = Vec::new();
    let mut starts: Vec<(u32, u32)> = Vec::new(); // (position, copy): suffixes at character starts
    for (wi, w) in words.iter().enumerate() {
        for (weight, follower) in [(w.count - w.line_end, WS_LEAD), (w.line_end, LINE_END_BYTE)] {
            if weight == 0 {
                continue;
            }
            let start = text.len();
            text.extend_from_slice(w.text.as_bytes());
            let c = copies.len() as u32;
            starts.extend(w.bounds[..w.nchars()].iter().map(|&b| ((start + b as usize) as u32, c)));
            copies.push(Copy { word: wi as u32, start: start as u32, end: text.len() as u32, weight });
            text.push(follower);
        }
    }
    // (2) Suffix array of the character starts, comparing up to the follower byte and at most
    // `cap` bytes; ties (equal up to there) by position, so the order is total.
    let cap = 4 * max_len + 1;
    let key = |&(p, c): &(u32, u32)| {
        let end = (copies[c as usize].end as usize + 1).min(p as usize + cap);
        &text[p as usize..end]
    };
    starts.par_sort_unstable_by(|a, b| key(a).cmp(key(b)).then(a.0.cmp(&b.0)));
    let n = starts.len();
    // lcp[i]: common prefix of suffixes i-1 and i (lcp[0] unused).
    let lcp: Vec<u32> = (0..n)
        .into_par_iter()
        .map(|i| {
            if i == 0 {
                return 0;
            }
            let (a, b) = (key(&starts[i - 1]), key(&starts[i]));
            a.iter().zip(b).take_while(|(x, y)| x == y).count() as u32
        })
        .collect();
    let mut prefix: Vec<u64> = Vec::with_capacity(n + 1);
    prefix.push(0);
    for &(_, c) in &starts {
        prefix.push(prefix.last().unwrap() + copies[c as usize].weight);
    }
    // (3) The LCP intervals, bottom-up with a stack (Abouelhoda et al.): [l, r] shares `depth`
    // bytes and branches right after them.
    let mut out: Vec<(&'a str, u64)> = Vec::new();
    let mut offer = |l: usize, r: usize, depth: u32| {
        let freq = prefix[r + 1] - prefix[l];
        if depth < 2 || freq < 2 {
            return;
        }
        let (p, c) = starts[l];
        let copy = &copies[c as usize];
        let end = p + depth;
        // Past the word (its follower byte is in it), or ending inside a character.
        if end > copy.end || text[end as usize] & 0xC0 == 0x80 {
            return;
        }
        let word = &words[copy.word as usize].text;
        let s = &word[(p - copy.start) as usize..(end - copy.start) as usize];
        let mut v = Validity::new(rules);
        let mut chars = 0;
        let mut last = Step::Stop;
        for ch in s.chars() {
            chars += 1;
            last = v.push(ch);
            if last == Step::Stop || chars > max_len {
                return;
            }
        }
        if chars >= 2 && last == Step::Piece && allow(s) {
            out.push((s, freq * chars as u64));
        }
    };
    let mut stack: Vec<(u32, usize)> = vec![(0, 0)]; // (depth, left bound)
    for i in 1..=n {
        let here = if i < n { lcp[i] } else { 0 };
        let mut lb = i - 1;
        while here < stack.last().map_or(0, |t| t.0) {
            let (depth, l) = stack.pop().unwrap_or((0, 0));
            lb = l;
            offer(l, i - 1, depth);
        }
        if here > stack.last().map_or(0, |t| t.0) {
            stack.push((here, lb));
        }
    }
    out
}
