//! Hugging Face's normalizers, each a rewrite of a `Normalized` that keeps HF's alignments:
//! `Precompiled` (SentencePiece rules, applied per grapheme as HF's `spm_precompiled` does),
//! `Replace` (a literal string or a regex), `Prepend`, `Strip`, `StripAccents`, `Lowercase`
//! and the four Unicode forms. A `Sequence` is a list of them (`Step`s), applied in order.
//!
//! The Unicode forms: HF rewrites through `unicode_normalization_alignments`, whose rule is
//! followed exactly: `decomposition` gives each character's decomposition its span (the first
//! character takes its place, the others are inserted after it) and sorts marks with their
//! changes; `composition` then joins pairs as that crate's `Recompositions` does, a composed
//! character replacing the first of its pair and dropping the second. HF's tables are older
//! than this crate's: where they differ, HF's are followed (`tables.rs`).

use std::cmp::Ordering;
use std::sync::Arc;

use fancy_regex::Regex;
use unicode_normalization::char::{canonical_combining_class, decompose_canonical, decompose_compatible};
use unicode_segmentation::UnicodeSegmentation;

use super::normalized::Normalized;
use super::tables;
use crate::error::CoreError;
use crate::normalize::{bert, CharsMap};

/// What a `Replace` (or a `Split`) looks for.
#[derive(Clone, Debug)]
pub enum Pattern {
    Literal(String),
    Regex(Arc<Regex>),
}

impl Pattern {
    /// Byte ranges of the matches, in order (HF's `find_matches`, keeping only the matches).
    pub fn matches(&self, text: &str) -> Result<Vec<(usize, usize)>, CoreError> {
        match self {
            Pattern::Literal(s) => Ok(text.match_indices(s.as_str()).map(|(i, m)| (i, i + m.len())).collect()),
            Pattern::Regex(re) => {
                let mut out = Vec::new();
                for m in re.find_iter(text) {
                    let m = m.map_err(|e| CoreError::input(format!("a Hugging Face pattern failed: {e}")))?;
                    out.push((m.start(), m.end()));
                }
                Ok(out)
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
}

#[derive(Clone, Debug)]
pub enum Step {
    Precompiled(Arc<CharsMap>),
    Replace(Pattern, String),
    Prepend(String),
    Strip {
        left: bool,
        right: bool,
    },
    StripAccents,
    Lowercase,
    Unicode(Form),
    /// BERT's: control characters out and whitespace as spaces (`clean_text`), spaces around
    /// CJK characters, NFD without nonspacing marks (`strip_accents`), lowercase.
    Bert {
        clean_text: bool,
        chinese: bool,
        strip_accents: bool,
        lowercase: bool,
    },
}

impl Step {
    pub fn apply(&self, n: &mut Normalized) -> Result<(), CoreError> {
        match self {
            Step::Precompiled(map) => precompiled(map, n),
            Step::Replace(p, content) => {
                let m = p.matches(&n.text)?;
                n.replace(&m, content);
            }
            Step::Prepend(s) => {
                if !n.text.is_empty() {
                    n.prepend(s);
                }
            }
            Step::Strip { left, right } => strip(n, *left, *right),
            Step::StripAccents => filter(n, |c| !tables::within(tables::MARKS, c)),
            Step::Lowercase => {
                let mut dest = Vec::with_capacity(n.text.len());
                for c in n.text.chars() {
                    dest.extend(c.to_lowercase().enumerate().map(|(i, l)| (l, isize::from(i > 0))));
                }
                n.transform(dest, 0);
            }
            Step::Unicode(form) => unicode(n, *form),
            Step::Bert { clean_text, chinese, strip_accents, lowercase } => {
                if *clean_text {
                    filter(n, |c| !bert::is_clean_removed(c));
                    let dest: Vec<(char, isize)> =
                        n.text.chars().map(|c| (if bert::is_clean_whitespace(c) { ' ' } else { c }, 0)).collect();
                    n.transform(dest, 0);
                }
                if *chinese {
                    let mut dest = Vec::with_capacity(n.text.len());
                    for c in n.text.chars() {
                        if bert::is_cjk(c) {
                            dest.extend([(' ', 0), (c, 1), (' ', 1)]);
                        } else {
                            dest.push((c, 0));
                        }
                    }
                    n.transform(dest, 0);
                }
                if *strip_accents {
                    unicode(n, Form::Nfd);
                    filter(n, |c| !bert::is_strip_mark(c));
                }
                if *lowercase {
                    Step::Lowercase.apply(n)?;
                }
            }
        }
        Ok(())
    }
}

/// `(char, change)`s replacing `old` by `new` (HF's helper for Precompiled): one for one,
/// extra characters inserted last, or the last one dropping the missing ones.
fn push_replacement(dest: &mut Vec<(char, isize)>, old: &str, new: &str) {
    let diff = new.chars().count() as isize - old.chars().count() as isize;
    dest.extend(new.chars().map(|c| (c, 0)));
    match diff.cmp(&0) {
        Ordering::Greater => dest.iter_mut().rev().take(diff as usize).for_each(|d| d.1 = 1),
        // With nothing pushed yet, HF records the removal nowhere; so does this.
        Ordering::Less => {
            if let Some(d) = dest.last_mut() {
                d.1 += diff;
            }
        }
        Ordering::Equal => {}
    }
}

fn precompiled(map: &CharsMap, n: &mut Normalized) {
    let mut dest = Vec::with_capacity(n.text.len());
    let mut modified = false;
    for g in n.text.graphemes(true) {
        if g.len() < 6 {
            if let Some(norm) = map.shortest_prefix(g) {
                modified = true;
                push_replacement(&mut dest, g, norm);
                continue;
            }
        }
        for (i, c) in g.char_indices() {
            let part = &g[i..i + c.len_utf8()];
            match map.shortest_prefix(part) {
                Some(norm) => {
                    modified = true;
                    push_replacement(&mut dest, part, norm);
                }
                None => dest.push((c, 0)),
            }
        }
    }
    if modified {
        n.transform(dest, 0);
    }
}

/// HF's `lrstrip`: whitespace (Unicode's `White_Space`) off either end.
fn strip(n: &mut Normalized, left: bool, right: bool) {
    let lead = if left { n.text.chars().take_while(|c| c.is_whitespace()).count() } else { 0 };
    let trail = if right { n.text.chars().rev().take_while(|c| c.is_whitespace()).count() } else { 0 };
    if lead == 0 && trail == 0 {
        return;
    }
    let count = n.text.chars().count();
    // HF compares the character index with the *byte* length here; kept as it is.
    let len = n.text.len();
    let dest: Vec<(char, isize)> = n
        .text
        .chars()
        .enumerate()
        .filter_map(|(i, c)| {
            if i < lead || i >= count - trail {
                None
            } else if Some(i) == len.checked_sub(trail + 1) {
                Some((c, -(trail as isize)))
            } else {
                Some((c, 0))
            }
        })
        .collect();
    n.transform(dest, lead);
}

/// HF's `filter`: keeps the characters `keep` accepts; a dropped run is charged to the kept
/// character before it (a leading run is skipped up front).
fn filter(n: &mut Normalized, keep: impl Fn(char) -> bool) {
    let mut removed: isize = 0;
    let mut removed_start = 0usize;
    let mut dest = Vec::with_capacity(n.text.len());
    let mut last = None;
    for c in n.text.chars() {
        if keep(c) {
            match last {
                Some(l) => dest.push((l, -removed)),
                None => removed_start = removed as usize,
            }
            last = Some(c);
            removed = 0;
        } else {
            removed += 1;
        }
    }
    if let Some(l) = last {
        dest.push((l, -removed));
    }
    n.transform(dest, removed_start);
}

/// HF's combining class: 0 for the marks its tables do not know yet (not in `CLASSED`).
fn class(c: char) -> u8 {
    match canonical_combining_class(c) {
        0 => 0,
        k if tables::within(tables::CLASSED, c) => k,
        _ => 0,
    }
}

/// HF's decomposition with its alignment (`unicode_normalization_alignments`): each character's
/// decomposition is its first character (change 0, taking its place) and the rest inserted
/// after it (change 1); then each run of non-starters is sorted by combining class (stably),
/// each character carrying its change with it. So an expansion's characters keep the span of the
/// character they came from, and a filter after it drops the right ones.
fn decomposition(text: &str, compatible: bool) -> Vec<(char, isize)> {
    let mut dest = Vec::with_capacity(text.len() + 8);
    let mut pending: Vec<(u8, char, isize)> = Vec::new();
    let mut push = |d: char, change: isize, unchanged: bool, dest: &mut Vec<(char, isize)>| {
        let class = if unchanged { 0 } else { class(d) };
        if class == 0 {
            pending.sort_by_key(|k| k.0);
            dest.extend(pending.drain(..).map(|(_, c, ch)| (c, ch)));
        }
        pending.push((class, d, change));
    };
    for c in text.chars() {
        if tables::within(tables::UNCHANGED, c) {
            push(c, 0, true, &mut dest);
            continue;
        }
        let mut change = 0;
        let mut each = |d: char| {
            push(d, change, false, &mut dest);
            change = 1;
        };
        if compatible {
            decompose_compatible(c, &mut each);
        } else {
            decompose_canonical(c, &mut each);
        }
    }
    pending.sort_by_key(|k| k.0);
    dest.extend(pending.into_iter().map(|(_, c, ch)| (c, ch)));
    dest
}

/// HF's recomposition of a decomposition with its alignment (`Recompositions`): a starter (the
/// "composee") absorbs each following character it composes with and that nothing blocks, the
/// pair's changes adding up less one (`a` 0 + U+0301 0 gives `á` -1: it takes `a`'s span and
/// drops the mark's). Characters it does not absorb keep their changes and come after it, in
/// order; a starter that does not compose ends the run and becomes the next composee.
fn composition(decomposed: Vec<(char, isize)>) -> Vec<(char, isize)> {
    let compose = |a: char, b: char| {
        unicode_normalization::char::compose(a, b).filter(|&r| !tables::within(tables::UNCHANGED, r))
    };
    let mut dest = Vec::with_capacity(decomposed.len());
    let mut composee: Option<(char, isize)> = None;
    // The characters after the composee it did not absorb, and the last one's class.
    let mut blocked: Vec<(char, isize)> = Vec::new();
    let mut last_class: Option<u8> = None;
    for (c, change) in decomposed {
        let c_class = class(c);
        let Some(k) = composee else {
            if c_class == 0 {
                composee = Some((c, change));
            } else {
                dest.push((c, change));
            }
            continue;
        };
        // A character is blocked from the composee by one of the same or a higher class.
        let reachable = last_class.map_or(true, |l| l < c_class);
        if let Some(r) = if reachable { compose(k.0, c) } else { None } {
            composee = Some((r, k.1 + change - 1));
        } else if c_class == 0 {
            dest.push(k);
            dest.append(&mut blocked);
            composee = Some((c, change));
            last_class = None;
        } else {
            blocked.push((c, change));
            last_class = Some(c_class);
        }
    }
    // At the end HF gives the composee first, then the characters it did not absorb.
    dest.extend(composee);
    dest.append(&mut blocked);
    dest
}

fn unicode(n: &mut Normalized, form: Form) {
    let compatible = matches!(form, Form::Nfkd | Form::Nfkc);
    let decomposed = decomposition(&n.text, compatible);
    match form {
        Form::Nfd | Form::Nfkd => n.transform(decomposed, 0),
        Form::Nfc | Form::Nfkc => n.transform(composition(decomposed), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_right_keeps_alignment() {
        let mut n = Normalized::new("ab  ");
        strip(&mut n, false, true);
        assert_eq!(n.text, "ab");
        assert_eq!(n.original(0, 2), (0, 2));
    }

    #[test]
    fn nfkd_then_strip_accents() {
        // U+FB01 (fi) then two Hebrew points: NFKD gives f, i (both from U+FB01), the points;
        // StripAccents drops the points, charged to the i, which keeps U+FB01's span.
        let cases = [("café", "cafe", (3, 4), (3, 5)), ("\u{fb01}\u{5b4}\u{5b9}x", "fix", (1, 2), (0, 3))];
        for (text, normalized, (s, e), span) in cases {
            let mut n = Normalized::new(text);
            unicode(&mut n, Form::Nfkd);
            filter(&mut n, |c| !tables::within(tables::MARKS, c));
            assert_eq!(n.text, normalized);
            assert_eq!(n.original(s, e), span);
        }
    }

    #[test]
    fn composition_takes_the_first_characters_span() {
        // NFC's é from e + U+0301 spans the e (the mark's span is dropped); NFKC's f and i of
        // U+FB01 both span it (byte spans). Measured with `tokenizers` 0.23.
        let cases =
            [("e\u{301}x", Form::Nfc, "\u{e9}x", [(0, 1), (3, 4)]), ("\u{fb01}x", Form::Nfkc, "fix", [(0, 3), (0, 3)])];
        for (text, form, normalized, spans) in cases {
            let mut n = Normalized::new(text);
            unicode(&mut n, form);
            assert_eq!(n.text, normalized);
            let starts: Vec<usize> = n.text.char_indices().map(|(i, _)| i).collect();
            let got: Vec<(usize, usize)> = starts.iter().take(2).map(|&i| n.original(i, i + 1)).collect();
            assert_eq!(got, spans);
        }
    }
}
