//! The one special-token rule, in front of every encoder.
//!
//! A version's special tokens are (text, id) pairs; which tokens those are comes from the
//! content (see `load.rs`). Encoding with a set of allowed specials cuts the text at their
//! occurrences: the leftmost occurrence first, and at one position the longest special wins.
//! Each segment between them is encoded as an independent text (a SentencePiece segment gets
//! its own dummy prefix, as it would alone), and each occurrence becomes its special's id.
//! Specials that are not allowed are ordinary text.

use std::sync::{Arc, Mutex};

use fancy_regex::Regex;
use rustc_hash::FxHashMap;

use super::Encode;
use crate::error::CoreError;

/// Sets of allowed specials whose alternation is kept compiled; past it the cache starts over.
const CACHED_SETS: usize = 64;

pub struct Specials {
    ids: FxHashMap<String, u32>,
    /// Compiled alternations, by the (sorted) set of names asked for: a short text would
    /// otherwise spend ~40 µs compiling one per `encode` call.
    regexes: Mutex<FxHashMap<Vec<String>, Arc<Regex>>>,
}

impl Specials {
    /// From (text, id) pairs; a text given twice keeps its last id.
    pub fn new(specials: Vec<(String, u32)>) -> Specials {
        Specials { ids: specials.into_iter().collect(), regexes: Mutex::new(FxHashMap::default()) }
    }

    /// (text, id) of every special token, by id.
    pub fn list(&self) -> Vec<(String, u32)> {
        let mut v: Vec<(String, u32)> = self.ids.iter().map(|(s, &i)| (s.clone(), i)).collect();
        v.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        v
    }

    /// The id of special token `name` (one the matcher found).
    pub(super) fn id(&self, name: &str) -> u32 {
        self.ids[name]
    }

    /// The matcher for the specials among `names` (others are ignored); `None` when none of
    /// them is a special token, and the text is then ordinary throughout.
    pub fn matcher(&self, names: &[String]) -> Result<Option<Arc<Regex>>, CoreError> {
        let mut names: Vec<String> = names.iter().filter(|n| self.ids.contains_key(*n)).cloned().collect();
        if names.is_empty() {
            return Ok(None);
        }
        // Longest first: regex alternation takes the first branch that matches at a position.
        names.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        names.dedup();
        let mut cache = self.regexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(re) = cache.get(&names) {
            return Ok(Some(re.clone()));
        }
        let alternation: Vec<String> = names.iter().map(|n| fancy_regex::escape(n).into_owned()).collect();
        let re = Regex::new(&alternation.join("|"))
            .map_err(|e| CoreError::input(format!("cannot match the special tokens {names:?}: {e}")))?;
        let re = Arc::new(re);
        if cache.len() >= CACHED_SETS {
            cache.clear(); // callers asking for ever new sets: keep the memory bounded
        }
        cache.insert(names, re.clone());
        Ok(Some(re))
    }

    /// Appends the ids of `text` to `out`: the occurrences that `matcher` finds as their
    /// specials' ids, the segments between them encoded by `encoder` (an empty segment encodes
    /// to nothing with every encoder, so it is skipped).
    pub fn encode_with(
        &self,
        matcher: Option<&Regex>,
        text: &str,
        encoder: &dyn Encode,
        out: &mut Vec<u32>,
    ) -> Result<(), CoreError> {
        let Some(re) = matcher else { return encoder.encode_into(text, out) };
        let mut start = 0;
        for m in re.find_iter(text) {
            let m = m.map_err(|e| CoreError::input(format!("matching special tokens failed: {e}")))?;
            if m.start() > start {
                encoder.encode_into(&text[start..m.start()], out)?;
            }
            out.push(self.ids[m.as_str()]);
            start = m.end();
        }
        if start < text.len() {
            encoder.encode_into(&text[start..], out)?;
        }
        Ok(())
    }

    /// The first of `names` (special tokens; others are ignored) that occurs in `text`, by
    /// position; at one position the longest.
    pub fn find(&self, text: &str, names: &[String]) -> Result<Option<String>, CoreError> {
        match self.matcher(names)? {
            Some(re) => {
                let m = re.find(text).map_err(|e| CoreError::input(format!("matching special tokens failed: {e}")))?;
                Ok(m.map(|m| m.as_str().to_string()))
            }
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::{Kind, Tokenizer};

    /// Each character is one id (its code point); a text's ids are offset by 1000 when it
    /// starts a segment, so the tests can see where segments begin.
    struct Chars;

    impl Encode for Chars {
        fn kind(&self) -> Kind {
            Kind::CharBpe
        }
        fn encode_into(&self, text: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
            out.extend(text.chars().enumerate().map(|(i, c)| c as u32 + if i == 0 { 1000 } else { 0 }));
            Ok(())
        }
        fn decode_bytes(&self, _ids: &[u32]) -> Result<Vec<u8>, CoreError> {
            Ok(Vec::new())
        }
        fn token_bytes(&self, _id: u32) -> Option<&[u8]> {
            None
        }
        fn vocab_size(&self) -> usize {
            0
        }
    }

    fn tok() -> Tokenizer {
        Tokenizer::new(Box::new(Chars), vec![("<a>".into(), 1), ("<a>b".into(), 2), ("<c>".into(), 3)])
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn segments_are_independent_texts_and_specials_their_ids() {
        let t = tok();
        assert_eq!(t.encode("xy<a>z", &names(&["<a>"])).unwrap(), [1120, 121, 1, 1122]);
        assert_eq!(t.encode("<a><a>", &names(&["<a>"])).unwrap(), [1, 1]);
        assert_eq!(t.encode("", &names(&["<a>"])).unwrap(), Vec::<u32>::new());
        // not allowed, or not special: plain text
        assert_eq!(t.encode("<c>", &names(&["<a>", "<zz>"])).unwrap(), t.encode_ordinary("<c>").unwrap());
        assert_eq!(t.encode("<c>", &[]).unwrap().len(), 3);
    }

    #[test]
    fn leftmost_first_and_longest_at_one_position() {
        let t = tok();
        let all = names(&["<a>", "<a>b", "<c>"]);
        assert_eq!(t.encode("<c><a>b", &all).unwrap(), [3, 2]);
        assert_eq!(t.encode("<a>c", &all).unwrap(), [1, 1099]);
        assert_eq!(t.find_special("x<c>y<a>b", &names(&["<a>b", "<c>"])).unwrap().as_deref(), Some("<c>"));
        assert_eq!(t.find_special("x<a>b", &all).unwrap().as_deref(), Some("<a>b"));
        assert_eq!(t.find_special("x", &all).unwrap(), None);
    }

    #[test]
    fn specials_by_id_and_the_cache_stays_bounded() {
        let t = tok();
        assert_eq!(t.specials(), [("<a>".to_string(), 1), ("<a>b".to_string(), 2), ("<c>".to_string(), 3)]);
        for i in 0..200 {
            let set = if i % 2 == 0 { names(&["<a>", "<c>"]) } else { names(&["<c>", "<a>", "<a>"]) };
            let _ = t.encode("<a>", &[set, names(&[&format!("<{i}>")])].concat()).unwrap();
        }
        assert!(t.specials.regexes.lock().unwrap().len() <= CACHED_SETS);
    }

    #[test]
    fn nbest_and_sample_are_unsupported_by_default() {
        let t = tok();
        let unsupported = |e: CoreError| matches!(e, CoreError::Unsupported { kind: Kind::CharBpe, .. });
        assert!(unsupported(t.nbest("a", 2).unwrap_err()));
        assert!(unsupported(t.sample("a", 0.1, 1).unwrap_err()));
        assert_eq!(t.token_bytes(5), Err(CoreError::UnknownId { id: 5, bound: 0 }));
    }
}
