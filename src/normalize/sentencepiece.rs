//! SentencePiece-style text handling around the Unigram and SentencePiece BPE encoders. Spaces become ▁
//! (U+2581) so that pieces can carry word starts; a dummy ▁ is put in front so the first word
//! looks like every other; optionally runs of spaces collapse (SentencePiece's
//! remove_extra_whitespaces). `restore` undoes the mapping on decoded bytes. With extra
//! whitespace kept, restore(normalize(s)) == s for every s: the ▁ mode is lossless.
//!
//! A model's normalization rules (`charsmap`: nmt_nfkc, nfkc, a custom TSV, ...) rewrite the
//! text first, exactly as SentencePiece's `Normalizer::Normalize` does: at each position the
//! longest user-defined piece is kept as it is, else the longest rule is applied, else one
//! character is copied; spaces the rules produce take part in collapsing. The `denormalizer`
//! (a model's `denormalizer_spec`) is applied to decoded text, as SentencePiece's Decode does.

use std::sync::Arc;

use super::charsmap::CharsMap;

pub const SPACE_MARK: char = '\u{2581}';
const MARK_UTF8: &[u8] = "\u{2581}".as_bytes();

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpNormalizer {
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
    /// The precompiled normalization rules; `None`: identity.
    pub charsmap: Option<Arc<CharsMap>>,
    /// User-defined pieces, longest first: never rewritten by the rules (only used with rules).
    pub user_defined: Arc<Vec<String>>,
    /// Applied to decoded text; `None`: none.
    pub denormalizer: Option<Arc<SpNormalizer>>,
}

impl Default for SpNormalizer {
    fn default() -> Self {
        SpNormalizer {
            add_dummy_prefix: true,
            remove_extra_whitespaces: false,
            escape_whitespaces: true,
            charsmap: None,
            user_defined: Arc::new(Vec::new()),
            denormalizer: None,
        }
    }
}

impl SpNormalizer {
    /// The same settings keeping `pieces` (user-defined pieces) whole; sorted longest first,
    /// ties by bytes, so the first match is the longest.
    pub fn with_user_defined(mut self, mut pieces: Vec<String>) -> SpNormalizer {
        pieces.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        pieces.dedup();
        self.user_defined = Arc::new(pieces);
        self
    }

    /// Whether the text goes through rules (the general path); else only spaces change.
    pub fn has_rules(&self) -> bool {
        self.charsmap.is_some()
    }

    /// SentencePiece's `NormalizePrefix`: (the normalized form of the start of `input`, the
    /// bytes it consumes). `input` is not empty.
    fn prefix<'a>(&'a self, input: &'a str) -> (&'a str, usize) {
        for piece in self.user_defined.iter() {
            if input.starts_with(piece.as_str()) {
                return (&input[..piece.len()], piece.len());
            }
        }
        if let Some(m) = &self.charsmap {
            if let Some(hit) = m.longest_prefix(input) {
                return hit;
            }
        }
        let len = input.chars().next().map_or(1, char::len_utf8);
        (&input[..len], len)
    }

    /// SentencePiece's `Normalizer::Normalize` with rules (see the module comment).
    fn normalize_with_rules(&self, input: &str, out: &mut String) {
        self.normalize_mapped(input, out, None);
    }

    /// The normalized text with SentencePiece's alignment (`norm_to_orig`): for each of its
    /// bytes, the byte offset in `text` of the input its normalization consumed, and one more
    /// entry for the end (the end of the text, or where the trailing spaces it dropped began).
    /// Without rules each character normalizes to itself, which gives `normalize`'s text too.
    pub fn normalize_aligned(&self, text: &str) -> (String, Vec<usize>) {
        let (mut out, mut map) = (String::new(), Vec::new());
        self.normalize_mapped(text, &mut out, Some(&mut map));
        (out, map)
    }

    /// `normalize_with_rules`, and with `map` the alignment of `normalize_aligned`.
    fn normalize_mapped(&self, text: &str, out: &mut String, mut map: Option<&mut Vec<usize>>) {
        let mut input = text;
        let remove = self.remove_extra_whitespaces;
        if remove {
            while !input.is_empty() {
                let (sp, used) = self.prefix(input);
                if sp != " " {
                    break;
                }
                input = &input[used..];
            }
        }
        // Where in `text` the input consumed so far ends.
        let consumed = |input: &str| text.len() - input.len();
        if input.is_empty() {
            if let Some(m) = map {
                m.push(consumed(input));
            }
            return;
        }
        let space = if self.escape_whitespaces { SPACE_MARK } else { ' ' };
        if self.add_dummy_prefix {
            out.push(space);
            if let Some(m) = map.as_deref_mut() {
                m.resize(out.len(), consumed(input));
            }
        }
        let mut prev_space = remove;
        while !input.is_empty() {
            let (mut sp, used) = self.prefix(input);
            if prev_space {
                sp = sp.trim_start_matches(' ');
            }
            if !sp.is_empty() {
                if self.escape_whitespaces {
                    for (i, run) in sp.split(' ').enumerate() {
                        if i > 0 {
                            out.push(SPACE_MARK);
                        }
                        out.push_str(run);
                    }
                } else {
                    out.push_str(sp);
                }
                if let Some(m) = map.as_deref_mut() {
                    m.resize(out.len(), consumed(input));
                }
                prev_space = sp.ends_with(' ');
            }
            input = &input[used..];
            if !remove {
                prev_space = false;
            }
        }
        let mut end = text.len();
        if remove {
            let keep = out.trim_end_matches(space).len();
            if let Some(m) = map.as_deref_mut() {
                if keep < out.len() {
                    end = m[keep];
                }
                m.truncate(keep);
            }
            out.truncate(keep);
        }
        if let Some(m) = map {
            m.push(end);
        }
    }

    /// Decoded bytes through the denormalizer, when there is one. Bytes that are not UTF-8
    /// become U+FFFD one byte at a time, as SentencePiece's normalizer reads them.
    pub fn denormalize(&self, decoded: Vec<u8>) -> Vec<u8> {
        let Some(d) = &self.denormalizer else { return decoded };
        let text = match String::from_utf8(decoded) {
            Ok(s) => s,
            Err(e) => lossy_per_byte(e.as_bytes()),
        };
        d.normalize(&text).into_bytes()
    }
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::new();
        self.normalize_into(text, &mut out);
        out
    }

    /// `normalize` into a caller's buffer (cleared first), so that encoding many texts reuses
    /// one allocation.
    pub fn normalize_into(&self, text: &str, out: &mut String) {
        out.clear();
        if self.has_rules() {
            return self.normalize_with_rules(text, out);
        }
        let body: &str = if self.remove_extra_whitespaces { text.trim_matches(' ') } else { text };
        if body.is_empty() {
            return;
        }
        let space = if self.escape_whitespaces { SPACE_MARK } else { ' ' };
        // Room for the dummy prefix and prose-like text (a space in about every sixth byte, each
        // growing by two bytes as ▁); `push_str` grows it when a text has more spaces.
        out.reserve(body.len() + body.len() / 2 + 3);
        if self.add_dummy_prefix {
            out.push(space);
        }
        if !self.remove_extra_whitespaces {
            // The common case, as whole runs between spaces: `split` finds the spaces with a
            // byte search, far cheaper than pushing char by char.
            for (i, run) in body.split(' ').enumerate() {
                if i > 0 {
                    out.push(space);
                }
                out.push_str(run);
            }
            return;
        }
        let mut prev_space = false;
        for c in body.chars() {
            if c == ' ' {
                if prev_space {
                    continue;
                }
                out.push(space);
                prev_space = true;
            } else {
                out.push(c);
                prev_space = false;
            }
        }
        // SentencePiece strips trailing spaces after escaping them, so a literal ▁ that ends
        // the text goes too (and the dummy prefix, when nothing else is left).
        let keep = out.trim_end_matches(space).len();
        out.truncate(keep);
    }

    /// Decoded piece bytes back to text bytes: ▁ -> space, minus the dummy prefix.
    pub fn restore(&self, decoded: &[u8]) -> Vec<u8> {
        self.restore_at(decoded, true)
    }

    /// `restore` of pieces that follow decoded text when `at_start` is false: the dummy prefix
    /// is only dropped at the start of the text.
    pub fn restore_at(&self, decoded: &[u8], at_start: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(decoded.len());
        let mut i = 0;
        while i < decoded.len() {
            if self.escape_whitespaces && decoded[i..].starts_with(MARK_UTF8) {
                out.push(b' ');
                i += MARK_UTF8.len();
            } else {
                out.push(decoded[i]);
                i += 1;
            }
        }
        if at_start && self.add_dummy_prefix && out.first() == Some(&b' ') {
            out.remove(0);
        }
        out
    }

    /// Training words of one line (its line break dropped): each starts at a ▁; with
    /// `by_whitespace` off, the whole normalized line is one word (SentencePiece trains on
    /// whole sentences then).
    pub fn words(&self, line: &str, by_whitespace: bool, buf: &mut String, mut emit: impl FnMut(&str)) {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        *buf = self.normalize(line);
        let s = buf.as_str();
        if !by_whitespace {
            if !s.is_empty() {
                emit(s);
            }
            return;
        }
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if c == SPACE_MARK && i > start {
                emit(&s[start..i]);
                start = i;
            }
        }
        if start < s.len() {
            emit(&s[start..]);
        }
    }
}

/// `bytes` as text, each byte of an invalid sequence replaced by U+FFFD.
fn lossy_per_byte(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let good = e.valid_up_to();
                out.push_str(std::str::from_utf8(&bytes[..good]).unwrap_or_default());
                out.push('\u{FFFD}');
                bytes = &bytes[good + 1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossless_when_extra_whitespace_is_kept() {
        let n = SpNormalizer::default();
        for s in ["Hello world", " two  spaces ", "", "tab\there", "日本 語"] {
            assert_eq!(n.restore(n.normalize(s).as_bytes()), s.as_bytes());
        }
        assert_eq!(n.normalize("a b"), "\u{2581}a\u{2581}b");
    }

    #[test]
    fn collapses_like_sentencepiece() {
        let n = SpNormalizer { remove_extra_whitespaces: true, ..Default::default() };
        assert_eq!(n.normalize("  a   b  "), "\u{2581}a\u{2581}b");
        // A literal ▁ at the end is stripped as well, as SentencePiece does.
        assert_eq!(n.normalize("a \u{2581}"), "\u{2581}a");
        assert_eq!(n.normalize("\u{2581}"), "");
    }

    #[test]
    fn words_start_at_marks() {
        let n = SpNormalizer::default();
        let mut got = vec![];
        n.words("the  cat\n", true, &mut String::new(), |w| got.push(w.to_string()));
        assert_eq!(got, ["\u{2581}the", "\u{2581}", "\u{2581}cat"]);
    }
}
