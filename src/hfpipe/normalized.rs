//! `Normalized`: a piece of text as Hugging Face's pipeline rewrites it, with, for each of its
//! bytes, the byte span of the original text it stands for (HF's `NormalizedString`
//! alignments). Offsets of tokens are read from it, so every rewrite keeps HF's alignment rules:
//!
//! - A rewrite is a list of `(char, change)` (`transform`): `change == 0` replaces the next
//!   original character and takes its span; `change > 0` inserts a character, which takes the
//!   span of the character before it (`(0, 0)` at the very start); `change < 0` replaces the
//!   next character and also drops `-change` more, whose spans are lost.
//! - `replace` rewrites each match of a pattern: the match's characters are dropped and the
//!   content's characters inserted, so they all take the span of the match's last character.
//!
//! Spans are relative to the piece's own original start (`shift`), as HF's are, so that an
//! insertion at the start of a piece aligns with `(0, 0)` of that piece.

/// Normalized text with the original span of each byte.
#[derive(Clone, Debug)]
pub struct Normalized {
    pub text: String,
    /// Per byte of `text`: (start, end) in the original piece.
    pub align: Vec<(u32, u32)>,
    /// Where the piece's original text starts in the whole text.
    pub shift: u32,
    /// Whether the piece's original text starts the whole text (Metaspace's `first` scheme).
    pub at_start: bool,
}

impl Normalized {
    pub fn new(text: &str) -> Normalized {
        let mut align = Vec::with_capacity(text.len());
        for (i, c) in text.char_indices() {
            let span = (i as u32, (i + c.len_utf8()) as u32);
            align.extend(std::iter::repeat(span).take(c.len_utf8()));
        }
        Normalized { text: text.to_string(), align, shift: 0, at_start: true }
    }

    /// HF's `transform` over the whole text, after dropping its first `initial` characters.
    pub fn transform(&mut self, dest: impl IntoIterator<Item = (char, isize)>, initial: usize) {
        let (text, align) = self.rewrite(&self.text, 0, dest, initial);
        self.text = text;
        self.align = align;
    }

    /// The rewrite of `self.text[from..]`'s characters (`old`, starting at byte `from`) by
    /// `dest`, returning the new text and spans of that range.
    fn rewrite(
        &self,
        old: &str,
        from: usize,
        dest: impl IntoIterator<Item = (char, isize)>,
        initial: usize,
    ) -> (String, Vec<(u32, u32)>) {
        let mut old_chars = old.chars();
        let mut offset = from + old_chars.by_ref().take(initial).map(char::len_utf8).sum::<usize>();
        let last = self.align.last().copied().unwrap_or((0, 0));
        let mut text = String::with_capacity(old.len());
        let mut align = Vec::with_capacity(old.len());
        for (c, change) in dest {
            let span = if change > 0 {
                if offset < 1 {
                    (0, 0)
                } else {
                    self.align.get(offset - 1).copied().unwrap_or(last)
                }
            } else {
                self.align.get(offset).copied().unwrap_or(last)
            };
            if change <= 0 {
                offset += old_chars.next().map_or(0, char::len_utf8);
            }
            if change < 0 {
                offset += old_chars.by_ref().take(change.unsigned_abs()).map(char::len_utf8).sum::<usize>();
            }
            text.push(c);
            align.extend(std::iter::repeat(span).take(c.len_utf8()));
        }
        (text, align)
    }

    /// Replaces each of `matches` (byte ranges, in order, not overlapping) by `content`.
    pub fn replace(&mut self, matches: &[(usize, usize)], content: &str) {
        if matches.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut align = Vec::with_capacity(self.align.len());
        let mut last = 0;
        for &(s, e) in matches {
            text.push_str(&self.text[last..s]);
            align.extend_from_slice(&self.align[last..s]);
            let removed = self.text[s..e].chars().count();
            let (t, a) = self.rewrite(&self.text[s..e], s, content.chars().map(|c| (c, 1)), removed);
            text.push_str(&t);
            align.extend(a);
            last = e;
        }
        text.push_str(&self.text[last..]);
        align.extend_from_slice(&self.align[last..]);
        self.text = text;
        self.align = align;
    }

    /// HF's `prepend`: `s`'s first character takes the place (and span) of the text's first
    /// character, which is re-inserted after `s` with the same span.
    pub fn prepend(&mut self, s: &str) {
        let Some(first) = self.text.chars().next() else { return };
        let n = first.len_utf8();
        let dest = s.chars().enumerate().map(|(i, c)| (c, isize::from(i != 0))).chain(std::iter::once((first, 1)));
        let (t, a) = self.rewrite(&self.text[..n], 0, dest, 0);
        self.text.replace_range(..n, &t);
        self.align.splice(..n, a);
    }

    /// The piece `text[s..e]` with its spans rebased on its own original start (HF's slices).
    pub fn slice(&self, s: usize, e: usize) -> Normalized {
        let base = self.align.get(s).map_or(0, |a| a.0);
        // A slice's original starts where its first byte's span starts.
        let align: Vec<(u32, u32)> =
            self.align[s..e].iter().map(|&(a, b)| (a.saturating_sub(base), b.saturating_sub(base))).collect();
        let shift = self.shift + base;
        Normalized { text: self.text[s..e].to_string(), align, shift, at_start: self.at_start && shift == 0 }
    }

    /// The span in the whole original text of the normalized bytes `s..e` (HF's
    /// `convert_offsets`: the first byte's start to the last byte's end).
    pub fn original(&self, s: usize, e: usize) -> (usize, usize) {
        if s >= e || e > self.align.len() {
            let at = self.align.get(s).map_or(0, |a| a.0);
            return ((self.shift + at) as usize, (self.shift + at) as usize);
        }
        ((self.shift + self.align[s].0) as usize, (self.shift + self.align[e - 1].1) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replace_aligns_inserted_characters_with_the_last_replaced_one() {
        let mut n = Normalized::new("a  b");
        n.replace(&[(1, 3)], "\u{2581}");
        assert_eq!(n.text, "a\u{2581}b");
        assert_eq!(n.align[1], (2, 3));
        assert_eq!(n.original(0, n.text.len()), (0, 4));
    }

    #[test]
    fn prepend_shares_the_first_characters_span() {
        let mut n = Normalized::new("ab");
        n.prepend("\u{2581}");
        assert_eq!(n.text, "\u{2581}ab");
        assert_eq!(n.original(0, 3), (0, 1));
        assert_eq!(n.original(3, 4), (0, 1));
    }
}
