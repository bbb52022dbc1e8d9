//! What the targets share: tokreg's canonical content written from plain data (the format of
//! `tokreg/content.py`), and one small tokenizer of every algorithm to encode with.

#![allow(dead_code)]

use _core::encode::Tokenizer;
use _core::normalize::{BertNormalizer, SpNormalizer};
use _core::pretok::{GPT2, WHITESPACE};

/// (id, kind, bytes, score) per token, then (left, right, result) per merge.
pub fn content(header: &str, tokens: &[(u32, &str, Vec<u8>, Option<f64>)], merges: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut out = b"tokreg-content-v1\n".to_vec();
    out.extend_from_slice(header.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(format!("tokens {}\n", tokens.len()).as_bytes());
    for (id, kind, bytes, score) in tokens {
        out.extend_from_slice(&id.to_le_bytes());
        out.extend_from_slice(&(kind.len() as u16).to_le_bytes());
        out.extend_from_slice(kind.as_bytes());
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
        match score {
            None => out.push(0),
            Some(s) => {
                out.push(1);
                out.extend_from_slice(&s.to_le_bytes());
            }
        }
    }
    out.extend_from_slice(format!("merges {}\n", merges.len()).as_bytes());
    for (a, b, z) in merges {
        for v in [a, b, z] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

fn sp_norm() -> SpNormalizer {
    SpNormalizer { add_dummy_prefix: true, remove_extra_whitespaces: false, escape_whitespaces: true }
}

/// Builds a tokenizer of algorithm `which % 5` from content bytes; errors are fine, panics not.
pub fn build(which: u8, content: &[u8]) -> Option<Tokenizer> {
    match which % 5 {
        0 => Tokenizer::byte_bpe(content, GPT2, which & 0x80 != 0),
        1 => Tokenizer::char_bpe(content, WHITESPACE, which & 0x80 != 0, None, Some("<unk>")),
        2 => Tokenizer::wordpiece(content, "[UNK]", "##", 100, BertNormalizer::hf(true, true, None, true), ("##", true)),
        3 => Tokenizer::unigram(content, sp_norm(), " \u{2047} "),
        _ => Tokenizer::sp_bpe(content, sp_norm(), " \u{2047} "),
    }
    .ok()
}

/// One small valid tokenizer of each algorithm.
pub fn tokenizers() -> Vec<Tokenizer> {
    let bytes: Vec<(u32, &str, Vec<u8>, Option<f64>)> =
        (0..=255u8).map(|b| (b as u32, "byte", vec![b], None)).collect();
    let mut bb = bytes.clone();
    bb.extend([(256, "merged", b"ab".to_vec(), None), (257, "merged", b" ab".to_vec(), None)]);
    bb.push((300, "special", b"<s>".to_vec(), None));
    let byte_bpe = content(r#"{"algorithm":"bpe","config":{}}"#, &bb, &[(97, 98, 256), (32, 256, 257)]);

    // the alphabet first (kind char), then merge results, then the special unknown token
    let cb: Vec<(u32, &str, Vec<u8>, Option<f64>)> = vec![
        (0, "char", b"a".to_vec(), None),
        (1, "char", b"b".to_vec(), None),
        (2, "char", b"c".to_vec(), None),
        (3, "merged", b"ab".to_vec(), None),
        (4, "special", b"<unk>".to_vec(), None),
    ];
    let char_bpe = content(r#"{"algorithm":"bpe","config":{}}"#, &cb, &[(0, 1, 3)]);

    let wp_tokens = ["[UNK]", "[CLS]", "a", "b", "##a", "##b", "ab", "##ab", "日"];
    let wp: Vec<(u32, &str, Vec<u8>, Option<f64>)> = wp_tokens
        .iter()
        .enumerate()
        .map(|(i, t)| (i as u32, if t.starts_with('[') { "special" } else { "char" }, t.as_bytes().to_vec(), None))
        .collect();
    let wordpiece = content(r#"{"algorithm":"wordpiece","config":{}}"#, &wp, &[]);

    let mut pieces: Vec<(u32, &str, Vec<u8>, Option<f64>)> =
        vec![(0, "unknown", b"<unk>".to_vec(), Some(0.0)), (1, "control", b"<s>".to_vec(), Some(0.0))];
    for b in 0..=255u32 {
        pieces.push((2 + b, "byte", format!("<0x{b:02X}>").into_bytes(), Some(0.0)));
    }
    for (k, (t, s)) in
        [("\u{2581}", -2.0), ("a", -3.0), ("b", -3.0), ("\u{2581}a", -2.5), ("ab", -1.0), ("\u{2581}ab", -1.5)]
            .iter()
            .enumerate()
    {
        pieces.push((258 + k as u32, "normal", t.as_bytes().to_vec(), Some(*s)));
    }
    let sp = content(r#"{"algorithm":"unigram","config":{}}"#, &pieces, &[]);
    [(0, byte_bpe), (1, char_bpe), (2, wordpiece), (3, sp.clone()), (4, sp)]
        .into_iter()
        .map(|(w, c)| build(w, &c).expect("the fixed tokenizers build"))
        .collect()
}
