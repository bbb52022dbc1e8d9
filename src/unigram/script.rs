//! Coarse Unicode script classes for the trainer's piece-validity rule.
//! Owns: `script_of`, a small range table (not the full Unicode Scripts.txt).
//!
//! Why: SentencePiece never lets a seed piece mix scripts (`split_by_unicode_script`, on by
//! default): "s," or "a1" are not pieces. Getting the big scripts right is what matters for
//! piece quality, so this table covers them by range and folds everything else into a
//! per-128-codepoint block class, which keeps unknown scripts apart from each other. Like
//! SentencePiece, Hiragana/Katakana (and U+30FC) are merged into Han, combining marks are
//! "inherited" (take the previous character's script) and ASCII digits form their own class,
//! which the trainer reads as Common (Unicode's script for them) or, with `split_by_number`
//! off, as any script.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Script {
    /// Takes the script of the previous character (combining marks).
    Inherited,
    Common,
    Digit,
    Latin,
    Greek,
    Cyrillic,
    Armenian,
    Hebrew,
    Arabic,
    Devanagari,
    Thai,
    Hangul,
    Han,
    /// Anything else, told apart by 128-codepoint block.
    Other(u32),
}

pub(crate) fn script_of(c: char) -> Script {
    let u = c as u32;
    match u {
        0x30..=0x39 => Script::Digit,
        0x41..=0x5A | 0x61..=0x7A => Script::Latin,
        0x00..=0x7F => Script::Common,
        0xAA | 0xBA => Script::Latin,
        0x80..=0xBF | 0xD7 | 0xF7 => Script::Common,
        0xC0..=0x24F => Script::Latin,
        0x250..=0x2AF | 0x1D00..=0x1DBF | 0x1E00..=0x1EFF | 0x2C60..=0x2C7F | 0xA720..=0xA7FF => Script::Latin,
        0x2B0..=0x2FF => Script::Common,
        0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE00..=0xFE0F | 0xFE20..=0xFE2F => {
            Script::Inherited
        }
        0x370..=0x3FF | 0x1F00..=0x1FFF => Script::Greek,
        0x400..=0x52F | 0x2DE0..=0x2DFF | 0xA640..=0xA69F | 0x1C80..=0x1C8F => Script::Cyrillic,
        0x530..=0x58F => Script::Armenian,
        0x590..=0x5FF => Script::Hebrew,
        0x600..=0x6FF | 0x750..=0x77F | 0x8A0..=0x8FF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFF => Script::Arabic,
        0x900..=0x97F => Script::Devanagari,
        0xE00..=0xE7F => Script::Thai,
        0x1100..=0x11FF | 0x3130..=0x318F | 0xA960..=0xA97F | 0xAC00..=0xD7FF => Script::Hangul,
        0x2000..=0x2BFF | 0x2E00..=0x2E7F => Script::Common,
        0x3000..=0x3003 | 0x3008..=0x3020 | 0x3030..=0x303F => Script::Common,
        0x3005..=0x3007 | 0x3021..=0x302D => Script::Han,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF66..=0xFF9F => Script::Han,
        0x2E80..=0x2FDF | 0x3190..=0x319F | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => Script::Han,
        0x20000..=0x3FFFF => Script::Han,
        0xFF10..=0xFF19 => Script::Common,
        0xFF21..=0xFF3A | 0xFF41..=0xFF5A => Script::Latin,
        0xFF00..=0xFFEF => Script::Common,
        0xFE30..=0xFE6F => Script::Common,
        0x1F000..=0x1FAFF => Script::Common,
        _ => Script::Other(u >> 7),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn classes() {
        assert_eq!(script_of('a'), Script::Latin);
        assert_eq!(script_of('é'), Script::Latin);
        assert_eq!(script_of(','), Script::Common);
        assert_eq!(script_of('7'), Script::Digit);
        assert_eq!(script_of('中'), Script::Han);
        assert_eq!(script_of('カ'), Script::Han);
        assert_eq!(script_of('ー'), Script::Han);
        assert_eq!(script_of('，'), Script::Common);
        assert_eq!(script_of('\u{301}'), Script::Inherited);
    }
}
