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

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    fn word(text: &str, count: u64, line_end: u64) -> Word {
        let mut bounds: Vec<u32> = text.char_indices().map(|(i, _)| i as u32).collect();
        bounds.push(text.len() as u32);
        Word { text: text.to_string(), count, line_end, bounds }
    }

    /// The rule from its definition: every substring of every word, the first bytes of what
    /// follows it (the next character, `▁` inside a line, the line's end), kept when it occurs
    /// twice, has two different first bytes after it and is a valid piece.
    fn reference(words: &[Word], max_len: usize) -> BTreeMap<String, u64> {
        let mut subs: BTreeMap<&str, (u64, BTreeSet<u8>)> = BTreeMap::new();
        for w in words {
            let n = w.nchars();
            for i in 0..n {
                for j in i + 1..=(i + max_len).min(n) {
                    let e = subs.entry(&w.text[w.bounds[i] as usize..w.bounds[j] as usize]).or_default();
                    e.0 += w.count;
                    if j < n {
                        e.1.insert(w.text.as_bytes()[w.bounds[j] as usize]);
                    } else {
                        if w.count > w.line_end {
                            e.1.insert(WS_LEAD);
                        }
                        if w.line_end > 0 {
                            e.1.insert(LINE_END_BYTE);
                        }
                    }
                }
            }
        }
        let valid = |s: &str| {
            let mut v = Validity::new(SplitRules::default());
            let steps: Vec<Step> = s.chars().map(|c| v.push(c)).collect();
            !steps.contains(&Step::Stop) && steps.last() == Some(&Step::Piece)
        };
        subs.into_iter()
            .filter(|(s, (f, after))| *f >= 2 && after.len() >= 2 && s.chars().count() >= 2 && valid(s))
            .map(|(s, (f, _))| (s.to_string(), f * s.chars().count() as u64))
            .collect()
    }

    fn found(words: &[Word], max_len: usize) -> BTreeMap<String, u64> {
        let got = candidates(words, SplitRules::default(), max_len, |_| true);
        let n = got.len();
        let map: BTreeMap<String, u64> = got.into_iter().map(|(s, f)| (s.to_string(), f)).collect();
        assert_eq!(map.len(), n, "a candidate was offered twice");
        map
    }

    #[test]
    fn followers_are_compared_by_their_first_byte() {
        // "▁これは" is followed by ペ (E3 83 9A) and 本 (E6 9C AC): a candidate. "ペンです" is
        // followed by 。 (E3 80 82) and か (E3 81 8B), different characters with the same first
        // byte: no candidate (revision 2 offered it). "▁pen" ends words inside lines and ends a
        // line: followers 0xE2 and 0x00, a candidate; "▁ink" only ever precedes a `▁`.
        let words = [
            word("▁これはペンです。", 3, 3),
            word("▁これは本です。", 2, 2),
            word("▁ペンですか", 2, 2),
            word("▁pen", 5, 2),
            word("▁ink", 4, 0),
        ];
        let got = found(&words, 16);
        assert_eq!(got.get("▁これは"), Some(&(5 * 4)));
        assert!(!got.contains_key("ペンです"));
        assert_eq!(got.get("▁pen"), Some(&(5 * 4)));
        assert!(!got.contains_key("▁ink"));
        assert_eq!(got, reference(&words, 16));
    }

    #[test]
    fn equals_the_definition_on_a_corpus() {
        // Words of a real text where there is one (with line ends marked on every third), else
        // a synthetic mix of Latin, kana, Han, digits and punctuation sharing first bytes.
        let text = crate::test_data::read("kjv.txt")
            .map(|t| t.lines().take(400).collect::<Vec<_>>().join("\n"))
            .unwrap_or_default();
        let extra = "これはペンです。 それは本ですか？ 日本語の文章—です… “quoted” 2024年 12,5 ½ café";
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for line in text.lines().chain([extra; 3]) {
            for w in line.split(' ').filter(|w| !w.is_empty()) {
                *counts.entry(format!("▁{w}")).or_insert(0) += 1;
            }
        }
        let words: Vec<Word> =
            counts.into_iter().enumerate().map(|(i, (w, c))| word(&w, c, if i % 3 == 0 { c / 2 } else { 0 })).collect();
        let least = if text.is_empty() { 10 } else { 200 };
        for max_len in [2, 5, 16] {
            let got = found(&words, max_len);
            assert!(got.len() > least, "{} candidates", got.len());
            assert_eq!(got, reference(&words, max_len), "max_len {max_len}");
        }
    }
}
