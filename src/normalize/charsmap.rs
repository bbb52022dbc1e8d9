//! `CharsMap`: SentencePiece's precompiled normalization rules (`NormalizerSpec.precompiled_charsmap`),
//! read from the bytes a `.model` file carries, and the one lookup the normalizer needs: the
//! longest rule that matches at the start of a text.
//!
//! # The format (SentencePiece's normalizer.cc / builder.cc, darts-clone's double array)
//!
//! ```text
//! u32 LE  trie_size                 size in bytes of the trie below (a multiple of 4)
//! u32 LE  units[trie_size / 4]      a darts-clone double array over the rules' UTF-8 source strings
//! bytes   normalized                the replacement strings, each ended by NUL; a key's value is
//!                                   the offset of its replacement in `normalized`
//! ```
//!
//! A unit packs: bits 0-7 the label (the byte that leads to it), bit 8 "has a leaf" (a key ends
//! here; its value sits in the unit at `this ^ offset`), bit 9 an offset scale, bits 10-31 the
//! offset. A leaf unit's value is its low 31 bits. Walking from unit 0: `id ^= offset(unit)`,
//! then per byte `id ^= byte`, and the unit at `id` must carry that byte as its label.
//!
//! A blob is checked whole when it is read (`CharsMap::new`): every unit reachable from the
//! root lies inside the array and every key's replacement is a NUL-ended UTF-8 string inside
//! `normalized`, so lookups need no checks of their own and a damaged blob is refused up front
//! rather than misbehaving on some rare input.

use crate::error::CoreError;

/// SentencePiece keeps at most this many prefix matches per lookup (its stack buffer); the
/// builder guarantees no key has more prefixes that are keys. Matches past it are ignored, as
/// SentencePiece ignores them.
const MAX_MATCHES: usize = 32;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CharsMap {
    units: Vec<u32>,
    /// The replacements, each ended by NUL (`new` checked every reachable one).
    normalized: Vec<u8>,
    /// The longest key: a lookup never walks further.
    max_key_len: usize,
}

fn has_leaf(unit: u32) -> bool {
    (unit >> 8) & 1 == 1
}

fn value(unit: u32) -> u32 {
    unit & ((1 << 31) - 1)
}

fn label(unit: u32) -> u32 {
    unit & ((1 << 31) | 0xFF)
}

fn offset(unit: u32) -> usize {
    ((unit >> 10) << ((unit & (1 << 9)) >> 6)) as usize
}

impl CharsMap {
    /// Reads and checks a precompiled charsmap blob. `Err` says what is wrong with it in words
    /// (the caller names the file).
    pub fn new(blob: &[u8]) -> Result<CharsMap, CoreError> {
        let broken = |why: &str| CoreError::input(format!("its precompiled_charsmap is damaged or truncated ({why})"));
        if blob.len() <= 4 {
            return Err(broken("shorter than its header"));
        }
        let trie_size = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
        if 4 + trie_size > blob.len() {
            return Err(broken("the trie runs past the end"));
        }
        if trie_size % 4 != 0 || trie_size == 0 {
            return Err(broken("the trie is not a whole number of units"));
        }
        let units: Vec<u32> =
            blob[4..4 + trie_size].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let normalized = blob[4 + trie_size..].to_vec();
        let mut map = CharsMap { units, normalized, max_key_len: 0 };
        map.max_key_len = map.check().map_err(|why| broken(&why))?;
        Ok(map)
    }

    /// Walks every key reachable from the root; returns the longest key's length, or why the
    /// blob cannot be used.
    fn check(&self) -> Result<usize, String> {
        let n = self.units.len();
        let mut longest = 0;
        let mut keys = 0usize;
        // (unit id after applying its offset, depth)
        let mut stack = vec![(offset(self.units[0]), 0usize)];
        let mut seen = vec![false; n];
        while let Some((base, depth)) = stack.pop() {
            for byte in 1..=255usize {
                let id = base ^ byte;
                if id >= n {
                    continue;
                }
                let unit = self.units[id];
                if label(unit) != byte as u32 || seen[id] {
                    continue;
                }
                seen[id] = true;
                let next = id ^ offset(unit);
                if next >= n {
                    return Err(format!("unit {id} points past the end of the trie"));
                }
                if has_leaf(unit) {
                    let v = value(self.units[next]) as usize;
                    self.replacement_checked(v).ok_or_else(|| format!("rule {keys} has no valid replacement"))?;
                    keys += 1;
                    longest = longest.max(depth + 1);
                }
                stack.push((next, depth + 1));
            }
        }
        if keys == 0 {
            return Err("it holds no rules".into());
        }
        Ok(longest)
    }

    fn replacement_checked(&self, at: usize) -> Option<&str> {
        let rest = self.normalized.get(at..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&rest[..end]).ok()
    }

    /// The replacement of the shortest rule matching at the start of `input`, whatever its
    /// length: Hugging Face's `Precompiled` normalizer (spm_precompiled's `transform`) applies
    /// it to the whole chunk it was given. `None` when no rule matches.
    pub fn shortest_prefix(&self, input: &str) -> Option<&str> {
        let units = &self.units;
        let mut id = offset(units[0]);
        for &b in input.as_bytes().iter().take(self.max_key_len) {
            // darts-clone's search ends at a NUL byte, as spm_precompiled's does.
            if b == 0 {
                return None;
            }
            id ^= b as usize;
            let unit = *units.get(id)?;
            if label(unit) != b as u32 {
                return None;
            }
            id ^= offset(unit);
            if has_leaf(unit) {
                return Some(self.replacement_checked(value(units[id]) as usize).unwrap_or(""));
            }
        }
        None
    }

    /// The longest rule matching at the start of `input`: (its replacement, the bytes it
    /// consumes). `None` when no rule matches. A match that would end inside a character is
    /// not taken (keys are whole characters, so this only guards a strange blob).
    pub fn longest_prefix<'a>(&'a self, input: &str) -> Option<(&'a str, usize)> {
        let key = input.as_bytes();
        let units = &self.units;
        let mut id = offset(units[0]);
        let mut best: Option<(u32, usize)> = None;
        let mut found = 0usize;
        for (i, &b) in key.iter().enumerate().take(self.max_key_len) {
            id ^= b as usize;
            let Some(&unit) = units.get(id) else { break };
            if label(unit) != b as u32 {
                break;
            }
            id ^= offset(unit);
            if has_leaf(unit) {
                if found < MAX_MATCHES && input.is_char_boundary(i + 1) {
                    best = Some((value(units[id]), i + 1));
                }
                found += 1;
            }
        }
        let (v, len) = best?;
        // `check` proved every reachable value valid.
        Some((self.replacement_checked(v as usize).unwrap_or(""), len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A double array by hand with two keys: "a" -> "b" and "ab" -> "X".
    /// Root unit 0: offset 0 (children at 0 ^ byte). "a" (0x61) at unit 0x61: label 0x61,
    /// leaf, offset 0x80 (its value unit at 0x61 ^ 0x80 = 0xE1, children at 0xE1 ^ byte).
    /// "ab" at 0xE1 ^ 0x62 = 0x83: label 0x62, leaf, offset 0x100 -> value unit 0x183.
    fn blob() -> Vec<u8> {
        let mut units = vec![0u32; 0x200];
        units[0x61] = 0x61 | (1 << 8) | (0x80 << 10);
        units[0xE1] = 0; // value of "a": offset 0 into normalized ("b")
        units[0x83] = 0x62 | (1 << 8) | (0x100 << 10);
        units[0x183] = 2; // value of "ab": offset 2 ("X")
        let mut out = ((units.len() * 4) as u32).to_le_bytes().to_vec();
        for u in units {
            out.extend_from_slice(&u.to_le_bytes());
        }
        out.extend_from_slice(b"b\0X\0");
        out
    }

    #[test]
    fn longest_rule_wins() {
        let m = CharsMap::new(&blob()).unwrap();
        assert_eq!(m.longest_prefix("abc"), Some(("X", 2)));
        assert_eq!(m.longest_prefix("ac"), Some(("b", 1)));
        assert_eq!(m.longest_prefix("c"), None);
    }

    #[test]
    fn damaged_blobs_are_refused() {
        let b = blob();
        assert!(CharsMap::new(&b[..3]).is_err());
        assert!(CharsMap::new(&b[..100]).is_err());
        let mut no_nul = b.clone();
        no_nul.truncate(b.len() - 1);
        assert!(CharsMap::new(&no_nul).is_err());
    }
}
