//! The BERT normalizer (`BertNormalizer`) and the BERT pre-tokenizer
//! (`pre_tokenize`). Both must give exactly what Hugging Face tokenizers' `BertNormalizer` and
//! `BertPreTokenizer` give; the character classes come from `bert_tables.rs`, probed from HF itself.
//!
//! HF's normalizer runs four whole-string passes (clean, CJK spacing, NFD + drop Mn, lowercase).
//! We run them fused, char by char, and only pay for the general Unicode path on non-ASCII
//! stretches: a surviving ASCII char is a canonical "starter" (combining class 0), so NFD's
//! canonical reordering can never move anything across it, which makes it a safe cut point.

use super::bert_tables;
use crate::error::CoreError;
use unicode_normalization::UnicodeNormalization;

/// Optional Unicode normalization applied to the raw text *before* the BERT steps
/// (like an HF `Sequence([NFC/NFKC/..., BertNormalizer])`). `None` (the default) = HF's BertNormalizer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Nfc,
    Nfkc,
    Nfd,
    Nfkd,
}

impl Form {
    /// The form by its lower-case name; `None`, `""` and `"none"` mean no extra normalization.
    pub fn from_name(name: Option<&str>) -> Result<Option<Form>, CoreError> {
        Ok(match name {
            None | Some("") | Some("none") => None,
            Some("nfc") => Some(Form::Nfc),
            Some("nfkc") => Some(Form::Nfkc),
            Some("nfd") => Some(Form::Nfd),
            Some("nfkd") => Some(Form::Nfkd),
            Some(f) => {
                return Err(CoreError::input(format!(
                    "unknown Unicode normalization {f:?}; use one of nfc, nfkc, nfd, nfkd or none"
                )))
            }
        })
    }
}

/// HF-compatible BERT normalizer. Note `Default` is all-off (derive); use [`BertNormalizer::bert`]
/// or [`BertNormalizer::hf`] for HF's defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BertNormalizer {
    /// Drop control chars (and NUL, U+FFFD); map whitespace to ' '.
    pub clean_text: bool,
    /// Put spaces around CJK ideographs so each becomes its own word.
    pub handle_chinese_chars: bool,
    /// NFD, then drop non-spacing marks. (HF's `strip_accents=None` means "same as lowercase";
    /// resolve that with [`BertNormalizer::hf`].)
    pub strip_accents: bool,
    /// Per-char `char::to_lowercase` (no final-sigma rule, as HF).
    pub lowercase: bool,
    /// Extra Unicode normalization run first; not part of HF's BertNormalizer.
    pub unicode_form: Option<Form>,
}

#[inline]
fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    // Binary search for the last range starting at or before c.
    let idx = table.partition_point(|&(lo, _)| lo <= c);
    idx > 0 && c <= table[idx - 1].1
}

pub(crate) fn is_clean_removed(c: char) -> bool {
    in_table(bert_tables::CLEAN_REMOVED, c)
}
pub(crate) fn is_clean_whitespace(c: char) -> bool {
    in_table(bert_tables::CLEAN_WHITESPACE, c)
}
pub(crate) fn is_cjk(c: char) -> bool {
    (c as u32) >= 0x3400 && in_table(bert_tables::CJK_IDEOGRAPHS, c)
}
pub(crate) fn is_strip_mark(c: char) -> bool {
    (c as u32) >= 0x300 && in_table(bert_tables::STRIP_MARKS, c)
}
/// Chars HF's (older) NFD does not decompose but ours would; they count as plain starters.
fn is_nfd_keep(c: char) -> bool {
    (c as u32) >= 0x105C9 && in_table(bert_tables::NFD_KEEP_AS_HF, c)
}
pub(crate) fn is_pretok_whitespace(c: char) -> bool {
    in_table(bert_tables::PRETOK_WHITESPACE, c)
}
pub(crate) fn is_pretok_punct(c: char) -> bool {
    in_table(bert_tables::PRETOK_PUNCT, c)
}

/// What the normalizer does with one ASCII byte: `KEEP` as is, `SPACE`, or `DROP`.
const KEEP: u8 = 0;
const SPACE: u8 = 1;
const DROP: u8 = 2;

impl BertNormalizer {
    /// HF's `BertNormalizer(clean_text, handle_chinese_chars, strip_accents, lowercase)`,
    /// including its rule that `strip_accents=None` follows `lowercase`.
    pub fn hf(clean_text: bool, handle_chinese_chars: bool, strip_accents: Option<bool>, lowercase: bool) -> Self {
        BertNormalizer {
            clean_text,
            handle_chinese_chars,
            strip_accents: strip_accents.unwrap_or(lowercase),
            lowercase,
            unicode_form: None,
        }
    }

    /// HF's default BertNormalizer (everything on, uncased BERT).
    pub fn bert() -> Self {
        Self::hf(true, true, None, true)
    }

    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len() + text.len() / 8);
        self.normalize_into(text, &mut out);
        out
    }

    /// Appends the normalized `text` to `out` (lets callers reuse one buffer).
    pub fn normalize_into(&self, text: &str, out: &mut String) {
        match self.unicode_form {
            None => self.bert_steps(text, out),
            Some(form) => {
                // Skip the extra copy when the text is already in the wanted form (ASCII always is).
                let pre: String = if text.is_ascii() {
                    return self.bert_steps(text, out);
                } else {
                    match form {
                        Form::Nfc => text.nfc().collect(),
                        Form::Nfkc => text.nfkc().collect(),
                        Form::Nfd => text.nfd().collect(),
                        Form::Nfkd => text.nfkd().collect(),
                    }
                };
                self.bert_steps(&pre, out)
            }
        }
    }

    #[inline]
    fn ascii_action(&self, b: u8) -> u8 {
        if !self.clean_text {
            return KEEP;
        }
        match b {
            b'\t' | b'\n' | b'\r' => SPACE,
            0x00..=0x1F | 0x7F => DROP, // includes \x0B and \x0C: HF tests "control" before "whitespace"
            _ => KEEP,
        }
    }

    fn bert_steps(&self, text: &str, out: &mut String) {
        let bytes = text.as_bytes();
        // Start of the pending stretch that needs the general (non-ASCII) path.
        let mut slow_start = 0;
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                let action = self.ascii_action(b);
                if action != DROP {
                    // A surviving ASCII char: flush the pending stretch, then emit it directly.
                    if slow_start < i {
                        self.general(&text[slow_start..i], out);
                    }
                    let c = if action == SPACE {
                        ' '
                    } else if self.lowercase {
                        b.to_ascii_lowercase() as char
                    } else {
                        b as char
                    };
                    out.push(c);
                    slow_start = i + 1;
                }
                // A dropped control stays inside the pending stretch: in HF it vanishes before NFD,
                // so it must not act as a reordering barrier.
            }
            i += 1;
        }
        if slow_start < bytes.len() {
            self.general(&text[slow_start..], out);
        }
    }

    /// The full per-char pipeline for a stretch containing non-ASCII text.
    fn general(&self, seg: &str, out: &mut String) {
        let mut stage1 = Stage1 { chars: seg.chars(), cfg: self, pending: [' '; 2], npending: 0, held: None };
        if self.strip_accents {
            // Stage1 pauses at a char HF's NFD would leave alone; it is a starter there, so
            // running NFD separately on either side of it gives HF's result.
            loop {
                for c in (&mut stage1).nfd() {
                    if !is_strip_mark(c) {
                        self.push_lower(c, out);
                    }
                }
                match stage1.held.take() {
                    Some(k) => self.push_lower(k, out),
                    None => break,
                }
            }
        } else {
            for c in stage1 {
                self.push_lower(c, out);
            }
        }
    }

    #[inline]
    fn push_lower(&self, c: char, out: &mut String) {
        if !self.lowercase {
            out.push(c);
        } else if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else {
            // Per char, like HF's NormalizedString::lowercase (so no context-dependent final sigma).
            out.extend(c.to_lowercase());
        }
    }
}

/// Clean + CJK spacing as a char iterator, so NFD can be chained after it without a buffer.
struct Stage1<'a> {
    chars: std::str::Chars<'a>,
    cfg: &'a BertNormalizer,
    /// Chars still to yield after a CJK ideograph (the ideograph and the trailing space), reversed.
    pending: [char; 2],
    npending: u8,
    /// Set (and the iterator pauses, returning None) on an `is_nfd_keep` char in strip mode.
    held: Option<char>,
}

impl Iterator for Stage1<'_> {
    type Item = char;
    #[inline]
    fn next(&mut self) -> Option<char> {
        if self.held.is_some() {
            return None; // stay paused until the caller takes `held` (don't rely on Fuse downstream)
        }
        if self.npending > 0 {
            self.npending -= 1;
            return Some(self.pending[self.npending as usize]);
        }
        loop {
            let mut c = self.chars.next()?;
            if self.cfg.clean_text {
                if is_clean_removed(c) {
                    continue;
                }
                if is_clean_whitespace(c) {
                    c = ' ';
                }
            }
            if self.cfg.handle_chinese_chars && is_cjk(c) {
                self.pending = [' ', c];
                self.npending = 2;
                return Some(' ');
            }
            if self.cfg.strip_accents && is_nfd_keep(c) {
                self.held = Some(c);
                return None;
            }
            return Some(c);
        }
    }
}

/// Character class for the pre-tokenizer's ASCII fast path: 0 word char, 1 whitespace, 2 punctuation.
static ASCII_CLASS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let b = i as u8;
        t[i] = if matches!(b, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ') {
            1
        } else if b.is_ascii_punctuation() {
            2
        } else {
            0
        };
        i += 1;
    }
    t
};

/// BERT pre-tokenizer (HF `BertPreTokenizer`): split on whitespace (dropped), then isolate every
/// punctuation char as its own word. Calls `f` for each non-empty word, in order, borrowing from
/// `normalized` (no allocation; the slices live as long as `normalized`).
pub fn pre_tokenize<'a>(normalized: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = normalized.as_bytes();
    let mut word_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let (class, len) = if b < 0x80 {
            (ASCII_CLASS[b as usize], 1)
        } else {
            let c = normalized[i..].chars().next().unwrap();
            let class = if is_pretok_whitespace(c) {
                1
            } else if is_pretok_punct(c) {
                2
            } else {
                0
            };
            (class, c.len_utf8())
        };
        if class != 0 {
            if word_start < i {
                f(&normalized[word_start..i]);
            }
            if class == 2 {
                f(&normalized[i..i + len]);
            }
            word_start = i + len;
        }
        i += len;
    }
    if word_start < bytes.len() {
        f(&normalized[word_start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        let mut v = Vec::new();
        pre_tokenize(s, |w| v.push(w.to_string()));
        v
    }

    #[test]
    fn strip_accents_and_lowercase() {
        let n = BertNormalizer::bert();
        assert_eq!(n.normalize("Café Crème ÅNGSTRÖM"), "cafe creme angstrom");
        // İ -> NFD "I" + U+0307 (Mn, dropped) -> "i".
        assert_eq!(n.normalize("İstanbul"), "istanbul");
        // strip_accents off keeps accents but still lowercases non-ASCII.
        let n2 = BertNormalizer::hf(true, true, Some(false), true);
        assert_eq!(n2.normalize("Café ÉCOLE"), "café école");
        // Per-char lowercase: no final-sigma rule (HF gives σ at the end too).
        assert_eq!(n2.normalize("ΟΔΟΣ"), "οδοσ");
        // strip without lowercase keeps case; Hangul syllables end up decomposed (NFD).
        let n3 = BertNormalizer::hf(true, true, Some(true), false);
        assert_eq!(n3.normalize("Ñandú"), "Nandu");
        assert_eq!(n3.normalize("한").chars().count(), 3);
        // U+11938 decomposes in Unicode 16 but not in HF's tables: kept whole, marks around it still go.
        assert_eq!(n3.normalize("e\u{301}\u{11938}e\u{301}"), "e\u{11938}e");
    }

    #[test]
    fn cjk_isolation() {
        let n = BertNormalizer::bert();
        assert_eq!(n.normalize("野口里佳 Noguchi"), " 野  口  里  佳  noguchi");
        assert_eq!(
            words(&n.normalize("Debian 参考手册（版本）")),
            ["debian", "参", "考", "手", "册", "（", "版", "本", "）"]
        );
        // Hiragana is not a CJK ideograph: no spacing (but the dakuten U+3099 is Mn after NFD,
        // so strip_accents drops it, as in HF).
        assert_eq!(n.normalize("ひらがな"), "ひらかな");
        let off = BertNormalizer { handle_chinese_chars: false, ..BertNormalizer::bert() };
        assert_eq!(off.normalize("北京"), "北京");
    }

    #[test]
    fn clean_text_controls_and_whitespace() {
        let n = BertNormalizer::hf(true, false, Some(false), false);
        assert_eq!(n.normalize("a\tb\nc\rd"), "a b c d");
        // \x0B, \x0C, U+0085 are controls for HF (removed, not spaced); NUL, U+FFFD, ZWSP, soft hyphen removed.
        assert_eq!(n.normalize("a\x0Bb\x0Cc\u{85}d\0e\u{FFFD}f\u{200B}g\u{AD}h"), "abcdefgh");
        // Unicode spaces become ' '.
        assert_eq!(n.normalize("a\u{A0}b\u{3000}c\u{2009}d"), "a b c d");
        // A removed control between two marks does not stop NFD from treating them as one run.
        let s = BertNormalizer::hf(true, false, Some(true), false);
        assert_eq!(s.normalize("e\u{301}\x01\u{316}x"), "ex");
        // clean_text off: controls survive.
        assert_eq!(BertNormalizer::default().normalize("a\x01b\tc"), "a\x01b\tc");
    }

    #[test]
    fn unicode_form_runs_first() {
        let n = BertNormalizer { unicode_form: Some(Form::Nfkc), ..BertNormalizer::hf(true, true, Some(false), true) };
        assert_eq!(n.normalize("ﬁ Ｆｕｌｌ"), "fi full");
    }

    #[test]
    fn pre_tokenizer_like_hf() {
        assert_eq!(words("Hey friend!     How are you?!?"), ["Hey", "friend", "!", "How", "are", "you", "?", "!", "?"]);
        assert_eq!(
            words("a·b «x» a$b a^b a`b 1+2"),
            ["a", "·", "b", "«", "x", "»", "a", "$", "b", "a", "^", "b", "a", "`", "b", "1", "+", "2"]
        );
        assert_eq!(words("\u{A0}x\u{3000}y\u{85}z "), ["x", "y", "z"]);
        assert!(words("   ").is_empty());
    }
}
