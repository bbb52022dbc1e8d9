//! The WordPiece encoder: greedy longest-match-first over a byte trie, with the same results as
//! Hugging Face tokenizers' `WordPiece` model (classic algorithm: at the start of a word any
//! vocab string may match verbatim; after that only `prefix + piece` entries match).
//!
//! Layout: one flat trie with two roots. Root 0 holds every vocab string verbatim (word start);
//! root 1 holds the entries that begin with the continuing prefix, with the prefix removed. The
//! longest match from a position is the last token-bearing node met while walking the bytes, so
//! a word costs one pass over its bytes plus one restart per emitted piece: no hashing, no
//! allocation beyond pushing to the caller's output vector.

use crate::error::CoreError;
use crate::normalize::{pre_tokenize, BertNormalizer};

const NO_TOKEN: u32 = u32::MAX;
const NO_DENSE: u32 = u32::MAX;
/// Nodes with at least this many children get a 256-entry table instead of a scanned edge list.
const DENSE_MIN_CHILDREN: usize = 8;

#[derive(Clone, Debug)]
struct Node {
    /// Token id ending here, or NO_TOKEN.
    token: u32,
    /// Index into `dense` (a 256-entry child table), or NO_DENSE.
    dense: u32,
    /// Children as a slice of `labels`/`children` (sorted by label) when not dense.
    edge_start: u32,
    edge_len: u32,
}

#[derive(Clone, Debug)]
pub struct Encoder {
    nodes: Vec<Node>,
    labels: Vec<u8>,
    children: Vec<u32>,
    /// Child tables of the busy nodes; 0 = no child (node 0 is a root, never a child).
    dense: Vec<[u32; 256]>,
    unk_id: u32,
    max_input_chars_per_word: usize,
    vocab_size: usize,
}

const ROOT_START: u32 = 0;
const ROOT_CONT: u32 = 1;

/// Growable trie used only while building (children as sorted vectors).
struct BuildNode {
    token: u32,
    kids: Vec<(u8, u32)>,
}

fn insert(nodes: &mut Vec<BuildNode>, root: u32, key: &[u8], id: u32) {
    let mut cur = root as usize;
    for &b in key {
        let next = match nodes[cur].kids.binary_search_by_key(&b, |&(l, _)| l) {
            Ok(i) => nodes[cur].kids[i].1,
            Err(i) => {
                let n = nodes.len() as u32;
                nodes.push(BuildNode { token: NO_TOKEN, kids: Vec::new() });
                nodes[cur].kids.insert(i, (b, n));
                n
            }
        };
        cur = next as usize;
    }
    // Duplicate strings in the vocab: the first (lowest) id wins.
    if nodes[cur].token == NO_TOKEN {
        nodes[cur].token = id;
    }
}

impl Encoder {
    /// `vocab` is in id order (id = index). Errors if `unk_token` is not in the vocab or the
    /// vocab is too large for u32 ids. Duplicate strings: the lowest id is used.
    pub fn new(
        vocab: &[String],
        unk_token: &str,
        continuing_prefix: &str,
        max_input_chars_per_word: usize,
    ) -> Result<Encoder, CoreError> {
        if vocab.len() >= NO_TOKEN as usize {
            return Err(CoreError::input(format!("a WordPiece vocabulary of {} tokens is too large", vocab.len())));
        }
        let unk_id = vocab.iter().position(|t| t == unk_token).ok_or_else(|| {
            CoreError::input(format!(
                "the unknown token {unk_token:?} is not in the WordPiece vocabulary; add it or name the one it has"
            ))
        })? as u32;
        let mut b =
            vec![BuildNode { token: NO_TOKEN, kids: Vec::new() }, BuildNode { token: NO_TOKEN, kids: Vec::new() }];
        for (id, tok) in vocab.iter().enumerate() {
            let id = id as u32;
            // The empty string can never be a match (a match must make progress).
            if !tok.is_empty() {
                insert(&mut b, ROOT_START, tok.as_bytes(), id);
            }
            if let Some(rest) = tok.strip_prefix(continuing_prefix) {
                if !rest.is_empty() {
                    insert(&mut b, ROOT_CONT, rest.as_bytes(), id);
                }
            }
        }
        // Flatten.
        let mut nodes = Vec::with_capacity(b.len());
        let mut labels = Vec::new();
        let mut children = Vec::new();
        let mut dense = Vec::new();
        for bn in &b {
            let mut node = Node { token: bn.token, dense: NO_DENSE, edge_start: labels.len() as u32, edge_len: 0 };
            if bn.kids.len() >= DENSE_MIN_CHILDREN {
                let mut t = [0u32; 256];
                for &(l, c) in &bn.kids {
                    t[l as usize] = c;
                }
                node.dense = dense.len() as u32;
                dense.push(t);
            } else {
                for &(l, c) in &bn.kids {
                    labels.push(l);
                    children.push(c);
                }
                node.edge_len = bn.kids.len() as u32;
            }
            nodes.push(node);
        }
        Ok(Encoder { nodes, labels, children, dense, unk_id, max_input_chars_per_word, vocab_size: vocab.len() })
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    #[inline(always)]
    fn child(&self, node: u32, b: u8) -> u32 {
        let n = &self.nodes[node as usize];
        if n.dense != NO_DENSE {
            // 0 means "none": node 0 is a root and never anyone's child.
            return self.dense[n.dense as usize][b as usize];
        }
        let s = n.edge_start as usize;
        let labels = &self.labels[s..s + n.edge_len as usize];
        for (i, &l) in labels.iter().enumerate() {
            if l == b {
                return self.children[s + i];
            }
            if l > b {
                break;
            }
        }
        0
    }

    /// Longest vocab match of `bytes[pos..]` starting from `root`: (token id, end) or None.
    #[inline(always)]
    fn longest(&self, root: u32, bytes: &[u8], pos: usize) -> Option<(u32, usize)> {
        let mut node = root;
        let mut best = None;
        let mut i = pos;
        while i < bytes.len() {
            node = self.child(node, bytes[i]);
            if node == 0 {
                break;
            }
            i += 1;
            let t = self.nodes[node as usize].token;
            if t != NO_TOKEN {
                best = Some((t, i));
            }
        }
        best
    }

    /// Greedy longest-match-first. A word with more than `max_input_chars_per_word` chars, or one
    /// that cannot be fully covered, becomes a single unk id. Empty words produce nothing.
    pub fn encode_word(&self, word: &str, out: &mut Vec<u32>) {
        let bytes = word.as_bytes();
        if bytes.len() > self.max_input_chars_per_word && word.chars().count() > self.max_input_chars_per_word {
            out.push(self.unk_id);
            return;
        }
        let mark = out.len();
        let mut pos = 0;
        let mut root = ROOT_START;
        while pos < bytes.len() {
            match self.longest(root, bytes, pos) {
                Some((id, end)) => {
                    out.push(id);
                    pos = end;
                    root = ROOT_CONT;
                }
                None => {
                    out.truncate(mark);
                    out.push(self.unk_id);
                    return;
                }
            }
        }
    }

    /// normalize + pre_tokenize + encode_word.
    pub fn encode(&self, normalizer: &BertNormalizer, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 4 + 1);
        let mut scratch = String::new();
        self.encode_into(normalizer, text, &mut scratch, &mut out);
        out
    }

    /// Like [`Encoder::encode`] but appends to `out` and reuses `scratch` for the normalized text.
    pub fn encode_into(&self, normalizer: &BertNormalizer, text: &str, scratch: &mut String, out: &mut Vec<u32>) {
        scratch.clear();
        normalizer.normalize_into(text, scratch);
        pre_tokenize(scratch, |w| self.encode_word(w, out));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(vocab: &[&str], max: usize) -> Encoder {
        let v: Vec<String> = vocab.iter().map(|s| s.to_string()).collect();
        Encoder::new(&v, "[UNK]", "##", max).unwrap()
    }

    fn ids(e: &Encoder, w: &str) -> Vec<u32> {
        let mut o = Vec::new();
        e.encode_word(w, &mut o);
        o
    }

    #[test]
    fn greedy_longest_match_with_prefix() {
        //            0        1    2     3     4      5      6      7
        let e = enc(&["[UNK]", "a", "##a", "b", "##b", "ab", "##bb", "un"], 100);
        assert_eq!(ids(&e, "aaaaa"), [1, 2, 2, 2, 2]);
        assert_eq!(ids(&e, "abbb"), [5, 6]); // longest first: "ab", then "##bb" (not ##b ##b ##b)
        assert_eq!(ids(&e, "abbbb"), [5, 6, 4]);
        assert_eq!(ids(&e, "ba"), [3, 2]);
        assert_eq!(ids(&e, ""), Vec::<u32>::new());
        // banana: HF's own example
        let e2 = enc(&["##na", "ba", "[UNK]"], 100);
        assert_eq!(ids(&e2, "banana"), [1, 0, 0]);
        assert_eq!(ids(&e2, "nanana"), [2]); // "na" cannot start a word
    }

    #[test]
    fn unk_for_uncoverable_and_too_long() {
        let e = enc(&["[UNK]", "a", "##a", "b"], 5);
        assert_eq!(ids(&e, "c"), [0]);
        assert_eq!(ids(&e, "ac"), [0]); // partial cover -> whole word unk, earlier pieces dropped
        assert_eq!(ids(&e, "ab"), [0]); // "b" exists but not "##b"
        assert_eq!(ids(&e, "aaaaa"), [1, 2, 2, 2, 2]);
        assert_eq!(ids(&e, "aaaaaa"), [0]); // 6 chars > 5
                                            // The limit counts chars, not bytes.
        let e3 = enc(&["[UNK]", "é", "##é"], 3);
        assert_eq!(ids(&e3, "ééé"), [1, 2, 2]);
        assert_eq!(ids(&e3, "éééé"), [0]);
        let mut o = vec![9];
        e.encode_word("ac", &mut o);
        assert_eq!(o, [9, 0]); // output before the word is untouched
    }

    #[test]
    fn verbatim_match_at_word_start() {
        // At the start of a word a "##x" entry matches verbatim (HF looks the substring up as is).
        let e = enc(&["[UNK]", "#", "###", "##"], 100);
        assert_eq!(ids(&e, "##"), [3]);
        assert!(Encoder::new(&["a".to_string()], "[UNK]", "##", 100).is_err());
    }

    #[test]
    fn dense_nodes() {
        let mut v = vec!["[UNK]".to_string()];
        for c in b'a'..=b'z' {
            v.push((c as char).to_string());
            v.push(format!("##{}", c as char));
            v.push(format!("q{}", c as char));
        }
        let e = Encoder::new(&v, "[UNK]", "##", 100).unwrap();
        let q = v.iter().position(|s| s == "qz").unwrap() as u32;
        let z = v.iter().position(|s| s == "##z").unwrap() as u32;
        assert_eq!(ids(&e, "qzz"), [q, z]);
    }

    #[test]
    fn encode_pipeline() {
        let e = enc(&["[UNK]", "hello", "!", "wor", "##ld", "北"], 100);
        let n = BertNormalizer::bert();
        assert_eq!(e.encode(&n, "Hello, WORLD! 北京"), [1, 0, 3, 4, 2, 5, 0]);
    }
}
