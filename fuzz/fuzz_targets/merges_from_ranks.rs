//! Arbitrary rank maps: the 256 bytes (some of them dropped or renumbered by the input) and
//! tokens cut from the input, at ids taken from it. Recovering the merges must refuse or
//! succeed, never panic, and never allocate by the largest id.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut tokens: Vec<(u32, Vec<u8>)> = (0..=255u8).map(|b| (b as u32, vec![b])).collect();
    let mut it = data.chunks(6);
    if let Some(first) = it.next() {
        for &b in first {
            // a few bytes lose their token, or get an id far away
            match b % 4 {
                0 => {
                    tokens.retain(|t| t.1 != [b]);
                }
                1 => tokens.iter_mut().filter(|t| t.1 == [b]).for_each(|t| t.0 = u32::MAX - b as u32),
                _ => {}
            }
        }
    }
    for (k, chunk) in it.enumerate() {
        if chunk.len() < 3 {
            continue;
        }
        let id = match chunk[0] % 3 {
            0 => 256 + k as u32,
            1 => chunk[1] as u32,
            _ => u32::from_le_bytes([chunk[1], chunk[2], 0, chunk[0]]),
        };
        tokens.push((id, chunk[2..].to_vec()));
    }
    let _ = _core::bpe::merges_from_ranks(tokens);
});
