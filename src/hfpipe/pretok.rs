//! Hugging Face's pre-tokenizers: each cuts every piece of the text into smaller pieces
//! (`Normalized`s, so that they keep their original spans), in order. Empty pieces are dropped,
//! as HF drops them.
//!
//! - `Split`: a pattern's matches and the text between them, by HF's `behavior` (`Isolated`,
//!   `Removed`, `MergedWithPrevious`, `MergedWithNext`, `Contiguous`), `invert` swapping the two.
//! - `Metaspace`: spaces become the replacement (`▁`), one is put in front by the scheme
//!   (`always`: every piece not starting with it; `first`: only the piece that starts the whole
//!   text; `never`), and with `split` each replacement starts a new piece.

use super::normalized::Normalized;
use super::normalizers::Pattern;
use crate::error::CoreError;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Isolated,
    Removed,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

impl Behavior {
    pub fn from_name(name: &str) -> Result<Behavior, CoreError> {
        Ok(match name {
            "Isolated" => Behavior::Isolated,
            "Removed" => Behavior::Removed,
            "MergedWithPrevious" => Behavior::MergedWithPrevious,
            "MergedWithNext" => Behavior::MergedWithNext,
            "Contiguous" => Behavior::Contiguous,
            _ => return Err(CoreError::input(format!("unknown Split behavior {name:?}"))),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prepend {
    Always,
    First,
    Never,
}

#[derive(Clone, Debug)]
pub enum Step {
    Split {
        pattern: Pattern,
        behavior: Behavior,
        invert: bool,
    },
    Metaspace {
        replacement: char,
        prepend: Prepend,
        split: bool,
    },
    /// GPT-2's: a space in front (`add_prefix_space`, unless there is one), then its regex
    /// (`use_regex`). Spelling the bytes in GPT-2's alphabet is left to the model (bytes are
    /// the symbols), which gives the same pieces and spans.
    ByteLevel {
        add_prefix_space: bool,
        regex: Option<std::sync::Arc<fancy_regex::Regex>>,
    },
    /// Digits apart from the rest: each on its own (`individual_digits`) or in runs.
    Digits {
        individual: bool,
    },
    /// ASCII and Unicode punctuation, by `behavior`.
    Punctuation {
        behavior: Behavior,
    },
    /// `\w+|[^\w\s]+`, keeping only the matches.
    Whitespace(std::sync::Arc<fancy_regex::Regex>),
    /// Runs of non-whitespace.
    WhitespaceSplit,
    /// BERT's: whitespace removed, then punctuation isolated.
    Bert,
}

/// GPT-2's pattern as HF's ByteLevel runs it.
pub const GPT2: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";
/// HF's Whitespace pre-tokenizer pattern.
pub const WORDS: &str = r"\w+|[^\w\s]+";

/// HF's `find_matches` for a character predicate: each matching character alone.
fn char_segments(text: &str, is: impl Fn(char) -> bool) -> Segments {
    if text.is_empty() {
        return vec![((0, 0), false)];
    }
    let mut out = Vec::new();
    let mut last = 0;
    for (i, c) in text.char_indices() {
        if is(c) {
            if last < i {
                out.push(((last, i), false));
            }
            out.push(((i, i + c.len_utf8()), true));
            last = i + c.len_utf8();
        }
    }
    if last < text.len() {
        out.push(((last, text.len()), false));
    }
    out
}

/// Byte ranges covering a text, each marked whether it is a match.
type Segments = Vec<((usize, usize), bool)>;

/// HF's `find_matches`: the matches and the text between them, covering `text`, each marked
/// whether it is a match.
fn segments(pattern: &Pattern, text: &str) -> Result<Segments, CoreError> {
    if text.is_empty() {
        return Ok(vec![((0, 0), false)]);
    }
    let mut out = Vec::new();
    let mut prev = 0;
    for (s, e) in pattern.matches(text)? {
        if prev != s {
            out.push(((prev, s), false));
        }
        out.push(((s, e), true));
        prev = e;
    }
    if prev != text.len() {
        out.push(((prev, text.len()), false));
    }
    Ok(out)
}

/// HF's `NormalizedString::split`: the pieces `behavior` makes of the segments.
fn split(n: &Normalized, segs: Segments, behavior: Behavior) -> Vec<Normalized> {
    let mut keep: Vec<((usize, usize), bool)> = Vec::with_capacity(segs.len());
    match behavior {
        Behavior::Isolated => keep.extend(segs.into_iter().map(|(o, _)| (o, false))),
        Behavior::Removed => keep = segs,
        Behavior::Contiguous => {
            let mut prev = false;
            for (o, m) in segs {
                match keep.last_mut() {
                    Some(last) if m == prev => last.0 .1 = o.1,
                    _ => keep.push((o, false)),
                }
                prev = m;
            }
        }
        Behavior::MergedWithPrevious => {
            let mut prev = false;
            for (o, m) in segs {
                match keep.last_mut() {
                    Some(last) if m && !prev => last.0 .1 = o.1,
                    _ => keep.push((o, false)),
                }
                prev = m;
            }
        }
        Behavior::MergedWithNext => {
            let mut prev = false;
            for (o, m) in segs.into_iter().rev() {
                match keep.last_mut() {
                    Some(last) if m && !prev => last.0 .0 = o.0,
                    _ => keep.push((o, false)),
                }
                prev = m;
            }
            keep.reverse();
        }
    }
    keep.into_iter().filter(|&(_, removed)| !removed).map(|((s, e), _)| n.slice(s, e)).collect()
}

impl Step {
    /// The pieces of one piece.
    fn pieces(&self, mut n: Normalized) -> Result<Vec<Normalized>, CoreError> {
        match self {
            Step::Split { pattern, behavior, invert } => {
                let mut segs = segments(pattern, &n.text)?;
                if *invert {
                    segs.iter_mut().for_each(|s| s.1 = !s.1);
                }
                Ok(split(&n, segs, *behavior))
            }
            Step::ByteLevel { add_prefix_space, regex } => {
                if *add_prefix_space && !n.text.starts_with(' ') {
                    n.prepend(" ");
                }
                match regex {
                    Some(re) => Ok(split(&n, segments(&Pattern::Regex(re.clone()), &n.text)?, Behavior::Isolated)),
                    None => Ok(vec![n]),
                }
            }
            Step::Digits { individual } => {
                let segs = char_segments(&n.text, char::is_numeric);
                Ok(split(&n, segs, if *individual { Behavior::Isolated } else { Behavior::Contiguous }))
            }
            Step::Punctuation { behavior } => {
                Ok(split(&n, char_segments(&n.text, crate::normalize::is_hf_punctuation), *behavior))
            }
            Step::Whitespace(re) => {
                let mut segs = segments(&Pattern::Regex(re.clone()), &n.text)?;
                segs.iter_mut().for_each(|s| s.1 = !s.1);
                Ok(split(&n, segs, Behavior::Removed))
            }
            Step::WhitespaceSplit => Ok(split(&n, char_segments(&n.text, char::is_whitespace), Behavior::Removed)),
            Step::Bert => {
                let words = split(&n, char_segments(&n.text, char::is_whitespace), Behavior::Removed);
                let mut out = Vec::with_capacity(words.len());
                for w in words.into_iter().filter(|w| !w.text.is_empty()) {
                    let segs = char_segments(&w.text, crate::normalize::is_hf_punctuation);
                    out.extend(split(&w, segs, Behavior::Isolated));
                }
                Ok(out)
            }
            Step::Metaspace { replacement, prepend, split: cut } => {
                let rep = replacement.to_string();
                let spaces: Vec<(usize, usize)> = n.text.match_indices(' ').map(|(i, _)| (i, i + 1)).collect();
                n.replace(&spaces, &rep);
                let front = match prepend {
                    Prepend::Always => true,
                    Prepend::First => n.at_start,
                    Prepend::Never => false,
                };
                if front && !n.text.starts_with(*replacement) {
                    n.prepend(&rep);
                }
                if !*cut {
                    return Ok(vec![n]);
                }
                let r = *replacement;
                let mut segs = Vec::new();
                let mut last = 0;
                for (i, c) in n.text.char_indices() {
                    if c == r {
                        if last < i {
                            segs.push(((last, i), false));
                        }
                        segs.push(((i, i + c.len_utf8()), true));
                        last = i + c.len_utf8();
                    }
                }
                if last < n.text.len() || n.text.is_empty() {
                    segs.push(((last, n.text.len()), false));
                }
                Ok(split(&n, segs, Behavior::MergedWithNext))
            }
        }
    }
}

/// The pieces of `n` after every step.
pub fn pre_tokenize(steps: &[Step], n: Normalized) -> Result<Vec<Normalized>, CoreError> {
    let mut pieces = vec![n];
    for step in steps {
        let mut next = Vec::with_capacity(pieces.len());
        for p in pieces {
            next.extend(step.pieces(p)?.into_iter().filter(|p| !p.text.is_empty()));
        }
        pieces = next;
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metaspace_always_split() {
        let step = Step::Metaspace { replacement: '\u{2581}', prepend: Prepend::Always, split: true };
        let pieces = pre_tokenize(&[step], Normalized::new("ab cd")).unwrap();
        let texts: Vec<&str> = pieces.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["\u{2581}ab", "\u{2581}cd"]);
        assert_eq!(pieces[1].original(0, pieces[1].text.len()), (2, 5));
    }
}
