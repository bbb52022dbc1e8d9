//! Hugging Face's normalizers, each a rewrite of a `Normalized` that keeps HF's alignments:
//! `Precompiled` (SentencePiece rules, applied per grapheme as HF's `spm_precompiled` does),
//! `Replace` (a literal string or a regex), `Prepend`, `Strip`, `StripAccents`, `Lowercase`
//! and the four Unicode forms. A `Sequence` is a list of them (`Step`s), applied in order.
//!
//! The Unicode forms: HF rewrites through `unicode_normalization_alignments`. NFD and NFKD follow
//! its rule exactly (`decompose`: a character's decomposition keeps its span, combining marks
//! reordered with theirs). For NFC and NFKC the text is cut at characters that no normalization can join with what comes before (a character whose
//! decomposition starts with a starter that composes with nothing before it), each part is
//! normalized on its own (the same result as the whole text), and its characters are aligned
//! like HF's `replace` helper does: one for one, extra characters inserted at the end,
//! missing ones dropped from the last. HF's tables are older than this crate's: where they
//! differ, HF's are followed (`tables.rs`).

use std::cmp::Ordering;
use std::sync::Arc;

use fancy_regex::Regex;
use unicode_normalization::char::{canonical_combining_class, decompose_canonical, decompose_compatible};
use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};
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

/// Whether nothing before `c` can change `c`'s normalization or be changed by it.
fn boundary(c: char, form: Form) -> bool {
    let mut first = None;
    let mut keep_first = |d: char| {
        if first.is_none() {
            first = Some(d)
        }
    };
    match form {
        Form::Nfc | Form::Nfd => decompose_canonical(c, &mut keep_first),
        Form::Nfkc | Form::Nfkd => decompose_compatible(c, &mut keep_first),
    }
    let Some(f) = first else { return true };
    if canonical_combining_class(f) != 0 {
        return false;
    }
    match form {
        Form::Nfd | Form::Nfkd => true,
        Form::Nfc => is_nfc_quick(std::iter::once(f)) == IsNormalized::Yes,
        Form::Nfkc => is_nfkc_quick(std::iter::once(f)) == IsNormalized::Yes,
    }
}

/// HF's decomposition with its alignment (`unicode_normalization_alignments`): each character's
/// decomposition is its first character (change 0, taking its place) and the rest inserted
/// after it (change 1); then each run of non-starters is sorted by combining class (stably),
/// each character carrying its change with it. So an expansion's characters keep the span of the
/// character they came from, and a filter after it drops the right ones.
fn decompose(n: &mut Normalized, compatible: bool) {
    let mut dest = Vec::with_capacity(n.text.len() + 8);
    let mut pending: Vec<(u8, char, isize)> = Vec::new();
    let mut push = |d: char, change: isize, unchanged: bool, dest: &mut Vec<(char, isize)>| {
        let class = if unchanged { 0 } else { canonical_combining_class(d) };
        if class == 0 {
            pending.sort_by_key(|k| k.0);
            dest.extend(pending.drain(..).map(|(_, c, ch)| (c, ch)));
        }
        pending.push((class, d, change));
    };
    for c in n.text.chars() {
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
    n.transform(dest, 0);
}

fn unicode(n: &mut Normalized, form: Form) {
    match form {
        Form::Nfd => return decompose(n, false),
        Form::Nfkd => return decompose(n, true),
        Form::Nfc | Form::Nfkc => {}
    }
    let text = std::mem::take(&mut n.text);
    let mut dest = Vec::with_capacity(text.len() + 8);
    let mut start = 0;
    let flush = |part: &str, dest: &mut Vec<(char, isize)>| {
        if part.is_empty() {
            return;
        }
        let out: String = match form {
            Form::Nfc => part.nfc().collect(),
            Form::Nfd => part.nfd().collect(),
            Form::Nfkc => part.nfkc().collect(),
            Form::Nfkd => part.nfkd().collect(),
        };
        push_replacement(dest, part, &out);
    };
    for (i, c) in text.char_indices() {
        if tables::within(tables::UNCHANGED, c) {
            // Unassigned in HF's tables: a starter that nothing changes.
            flush(&text[start..i], &mut dest);
            dest.push((c, 0));
            start = i + c.len_utf8();
        } else if i > start && boundary(c, form) {
            flush(&text[start..i], &mut dest);
            start = i;
        }
    }
    flush(&text[start..], &mut dest);
    n.text = text;
    n.transform(dest, 0);
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
}
