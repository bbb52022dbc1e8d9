//! Arbitrary text, ids and parameters through a small tokenizer of every algorithm: encode,
//! encode with special tokens, batches, decode, token lookup, n-best and sampling with any
//! k, alpha (NaN and infinities included) and seed. Errors are fine; panics are not.

#![no_main]

use std::sync::OnceLock;

use _core::encode::Tokenizer;
use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fn tokenizers() -> &'static [Tokenizer] {
    static TOKS: OnceLock<Vec<Tokenizer>> = OnceLock::new();
    TOKS.get_or_init(common::tokenizers)
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let (head, rest) = data.split_at(10);
    let tok = &tokenizers()[head[0] as usize % 5];
    let text = String::from_utf8_lossy(rest);
    let _ = tok.encode_ordinary(&text);
    let allowed = ["<s>".to_string(), String::from_utf8_lossy(&head[1..3]).into_owned()];
    if let Ok(rule) = tok.allowing(&allowed) {
        let _ = tok.encode(&text, &rule);
    }
    if let Ok(rule) = tok.rule(Some(&[]), Some(&allowed)) {
        let _ = tok.encode(&text, &rule);
    }
    let ids: Vec<u32> = rest.chunks(4).map(|c| c.iter().fold(0u32, |a, &b| a << 8 | b as u32 % 300)).collect();
    let _ = tok.decode_bytes(&ids);
    let _ = tok.token_bytes(u32::from_le_bytes([head[1], head[2], head[3], head[4]]));
    // Threads: small counts run; an absurd one must be refused before any thread starts.
    let threads = if head[5] == 0xFF { usize::MAX } else { (head[5] % 3) as usize };
    let texts: Vec<&str> = text.split('\n').collect();
    let _ = tok.encode_batch(&texts, &Default::default(), threads);
    let alpha = f64::from_le_bytes([head[2], head[3], head[4], head[5], head[6], head[7], head[8], head[9]]);
    let _ = tok.sample(&text, alpha, head[1] as u64);
    let _ = tok.nbest(&text, head[6] as usize * 1_000_000 + head[7] as usize);
});
