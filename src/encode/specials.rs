//! The one special-token rule, in front of every encoder: tiktoken's.
//!
//! A version's special tokens are (text, id) pairs; which tokens those are comes from the
//! content (see `load.rs`). A call says which specials it allows and which strings it refuses,
//! and `Specials::rule` makes that into a `Rule` once:
//!
//! - allowed (`None`: every special token) are cut out of the text at their occurrences: the
//!   leftmost occurrence first, and at one position the longest special wins. Each segment
//!   between them is encoded as an independent text (a SentencePiece segment gets its own dummy
//!   prefix, as it would alone), and each occurrence becomes its special's id;
//! - refused (`None`: every special token not allowed; a list may hold strings that are not
//!   special tokens, as tiktoken's `disallowed_special` may) make the call fail with
//!   `CoreError::Refused`, naming the leftmost (at one position the longest) found;
//! - anything else, specials included, is ordinary text.

use std::sync::{Arc, Mutex, OnceLock};

use fancy_regex::Regex;
use rustc_hash::{FxHashMap, FxHashSet};

use super::Encode;
use crate::error::CoreError;

/// Sets of strings whose alternation is kept compiled; past it the cache starts over.
const CACHED_SETS: usize = 64;

pub struct Specials {
    ids: FxHashMap<String, u32>,
    /// Compiled alternations, by the (sorted) set of strings asked for: a short text would
    /// otherwise spend ~40 µs compiling one per `encode` call.
    regexes: Mutex<FxHashMap<Vec<String>, Arc<Regex>>>,
    /// The alternation of every special token: what a default call refuses.
    every: OnceLock<Option<Arc<Regex>>>,
}

/// One call's special-token rule (see the module's doc), made by `Specials::rule`.
#[derive(Clone, Default)]
pub struct Rule {
    /// The allowed specials' alternation, or None when the text is ordinary throughout.
    pub(super) emit: Option<Arc<Regex>>,
    /// The refused strings' alternation, or None when nothing is refused.
    refuse: Option<Arc<Regex>>,
}

impl Rule {
    /// Fails with `CoreError::Refused` when `text` holds a refused string (the leftmost, at one
    /// position the longest); `index` is the text's place in a batch.
    pub fn check(&self, text: &str, index: Option<usize>) -> Result<(), CoreError> {
        match first(self.refuse.as_deref(), text)? {
            Some(token) => Err(CoreError::Refused { token, index }),
            None => Ok(()),
        }
    }
}

/// The leftmost match of `re` in `text` (at one position the longest: alternations are sorted
/// longest first).
fn first(re: Option<&Regex>, text: &str) -> Result<Option<String>, CoreError> {
    let Some(re) = re else { return Ok(None) };
    let m = re.find(text).map_err(|e| CoreError::input(format!("matching special tokens failed: {e}")))?;
    Ok(m.map(|m| m.as_str().to_string()))
}

impl Specials {
    /// From (text, id) pairs; a text given twice keeps its last id.
    pub fn new(specials: Vec<(String, u32)>) -> Specials {
        Specials {
            ids: specials.into_iter().collect(),
            regexes: Mutex::new(FxHashMap::default()),
            every: OnceLock::new(),
        }
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

    /// The rule of one call: `allowed` specials become their ids (None: all of them; names that
    /// are not special tokens are ignored), and the text must not hold any of `refused` (None:
    /// every special token not allowed; empty strings are ignored).
    pub fn rule(&self, allowed: Option<&[String]>, refused: Option<&[String]>) -> Result<Rule, CoreError> {
        let emit: FxHashSet<&String> = match allowed {
            None => self.ids.keys().collect(),
            Some(names) => names.iter().filter(|n| self.ids.contains_key(*n)).collect(),
        };
        let refuse = match refused {
            // The default call (nothing allowed, every special refused) skips the key building.
            None if emit.is_empty() => {
                self.every.get_or_init(|| self.alternation(self.ids.keys().cloned().collect()).ok().flatten()).clone()
            }
            None => self.alternation(self.ids.keys().filter(|n| !emit.contains(n)).cloned().collect())?,
            Some(strings) => self.alternation(strings.iter().filter(|s| !s.is_empty()).cloned().collect())?,
        };
        Ok(Rule { emit: self.alternation(emit.into_iter().cloned().collect())?, refuse })
    }

    /// The compiled alternation of `strings` (longest first, so that at one position the
    /// longest wins), or None for no strings; cached by the set.
    fn alternation(&self, mut strings: Vec<String>) -> Result<Option<Arc<Regex>>, CoreError> {
        if strings.is_empty() {
            return Ok(None);
        }
        strings.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        strings.dedup();
        let mut cache = self.regexes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(re) = cache.get(&strings) {
            return Ok(Some(re.clone()));
        }
        let alternation: Vec<String> = strings.iter().map(|n| fancy_regex::escape(n).into_owned()).collect();
        let re = Regex::new(&alternation.join("|"))
            .map_err(|e| CoreError::input(format!("cannot match the special tokens {strings:?}: {e}")))?;
        let re = Arc::new(re);
        if cache.len() >= CACHED_SETS {
            cache.clear(); // callers asking for ever new sets: keep the memory bounded
        }
        cache.insert(strings, re.clone());
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
                encoder.encode_segment(&text[start..m.start()], start, out)?;
            }
            out.push(self.ids[m.as_str()]);
            start = m.end();
        }
        if start < text.len() {
            encoder.encode_segment(&text[start..], start, out)?;
        }
        Ok(())
    }

    /// The first of `names` (special tokens; others are ignored) that occurs in `text`, by
    /// position; at one position the longest.
    pub fn find(&self, text: &str, names: &[String]) -> Result<Option<String>, CoreError> {
        let names: Vec<String> = names.iter().filter(|n| self.ids.contains_key(*n)).cloned().collect();
        first(self.alternation(names)?.as_deref(), text)
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

    /// `encode` with `allowed` specials and nothing refused.
    fn enc(t: &Tokenizer, text: &str, allowed: &[String]) -> Vec<u32> {
        t.encode(text, &t.allowing(allowed).unwrap()).unwrap()
    }

    #[test]
    fn segments_are_independent_texts_and_specials_their_ids() {
        let t = tok();
        assert_eq!(enc(&t, "xy<a>z", &names(&["<a>"])), [1120, 121, 1, 1122]);
        assert_eq!(enc(&t, "<a><a>", &names(&["<a>"])), [1, 1]);
        assert_eq!(enc(&t, "", &names(&["<a>"])), Vec::<u32>::new());
        // not allowed, or not special: plain text
        assert_eq!(enc(&t, "<c>", &names(&["<a>", "<zz>"])), t.encode_ordinary("<c>").unwrap());
        assert_eq!(enc(&t, "<c>", &[]).len(), 3);
    }

    #[test]
    fn leftmost_first_and_longest_at_one_position() {
        let t = tok();
        let all = names(&["<a>", "<a>b", "<c>"]);
        assert_eq!(enc(&t, "<c><a>b", &all), [3, 2]);
        assert_eq!(enc(&t, "<a>c", &all), [1, 1099]);
        assert_eq!(t.find_special("x<c>y<a>b", &names(&["<a>b", "<c>"])).unwrap().as_deref(), Some("<c>"));
        assert_eq!(t.find_special("x<a>b", &all).unwrap().as_deref(), Some("<a>b"));
        assert_eq!(t.find_special("x", &all).unwrap(), None);
    }

    #[test]
    fn refused_strings_fail_the_call_naming_the_leftmost_and_longest() {
        let t = tok();
        let refused = |text: &str, allowed: Option<&[String]>, refused: Option<&[String]>| match t
            .encode(text, &t.rule(allowed, refused).unwrap())
        {
            Err(CoreError::Refused { token, index: None }) => Some(token),
            Ok(_) => None,
            Err(e) => panic!("{e}"),
        };
        // The default: nothing allowed, every special refused.
        assert_eq!(refused("x<c>y<a>b", Some(&[]), None).as_deref(), Some("<c>"));
        assert_eq!(refused("x<a>b<c>", Some(&[]), None).as_deref(), Some("<a>b"));
        assert_eq!(refused("plain", Some(&[]), None), None);
        // Allowed specials are not refused by default; the others still are.
        assert_eq!(refused("x<a>b<c>", Some(&names(&["<c>"])), None).as_deref(), Some("<a>b"));
        // As in tiktoken, an allowed special's text may hold a refused one: it is refused.
        assert_eq!(refused("<a>b", Some(&names(&["<a>b"])), None).as_deref(), Some("<a>"));
        assert_eq!(refused("<a>b<a>", Some(&names(&["<a>b", "<a>"])), None), None);
        assert_eq!(refused("<c>", None, None), None);
        // A refused list may hold any string, and is taken as given (empty strings ignored).
        assert_eq!(refused("say foo", Some(&[]), Some(&names(&["foo", ""]))).as_deref(), Some("foo"));
        assert_eq!(refused("<a>", None, Some(&names(&["<a>"]))).as_deref(), Some("<a>"));
        assert_eq!(refused("<c>", Some(&[]), Some(&[])), None);
        assert_eq!(t.count("x<a>", &t.rule(None, None).unwrap()).unwrap(), 2);
    }

    #[test]
    fn a_batch_names_its_first_refused_text_whatever_the_thread_count() {
        let t = tok();
        let texts: Vec<String> = (0..5000).map(|i| if i % 1000 == 999 { "x<c>".into() } else { "ab".into() }).collect();
        for threads in [1, 2, 3, 0] {
            match t.encode_batch(&texts, &t.rule(Some(&[]), None).unwrap(), threads) {
                Err(CoreError::Refused { token, index }) => assert_eq!((token.as_str(), index), ("<c>", Some(999))),
                other => panic!("threads {threads}: {:?}", other.map(|p| p.len())),
            }
        }
    }

    #[test]
    fn specials_by_id_and_the_cache_stays_bounded() {
        let t = tok();
        assert_eq!(t.specials(), [("<a>".to_string(), 1), ("<a>b".to_string(), 2), ("<c>".to_string(), 3)]);
        for i in 0..200 {
            let set = if i % 2 == 0 { names(&["<a>", "<c>"]) } else { names(&["<c>", "<a>", "<a>"]) };
            let _ = enc(&t, "<a>", &[set, names(&[&format!("<{i}>")])].concat());
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
