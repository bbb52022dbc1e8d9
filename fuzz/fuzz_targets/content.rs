//! Arbitrary bytes as canonical content, built into every algorithm's tokenizer; whatever
//! builds must then encode and decode without panicking. The first byte picks the algorithm.

#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else { return };
    let _ = _core::content::parse(rest);
    if let Some(tok) = common::build(which, rest) {
        let _ = tok.encode_ordinary("hello wörld 日本 <s> \u{2581}a ab");
        let _ = tok.encode("x<s>y", &["<s>".to_string()]);
        let ids: Vec<u32> = rest.chunks(4).map(|c| c.iter().fold(0u32, |a, &b| a << 8 | b as u32)).collect();
        let _ = tok.decode_bytes(&ids);
    }
});
