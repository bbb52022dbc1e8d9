//! The hand-written pre-tokenizers against fancy-regex running the same official patterns, on
//! the shared corpora, the kernel source and random bytes, in MB/s: `cargo bench --bench pretok`.

mod data;

use _core::pretok::fast::{split, Builtin};
use fancy_regex::Regex;

const CORPORA: [&str; 3] = ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"];

/// The shared corpora, then (when `TOKREG_BENCH_CORPUS` names the benchmark corpus folder) 4 MB
/// of the kernel source, then 1 MB of random bytes decoded with replacement (half U+FFFD).
fn inputs() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        CORPORA.iter().filter_map(|&name| Some((name.to_string(), data::read(name)?))).collect();
    if let Some(dir) = std::env::var_os("TOKREG_BENCH_CORPUS") {
        if let Ok(raw) = std::fs::read(std::path::Path::new(&dir).join("kernel.txt")) {
            let raw = &raw[..raw.len().min(4_000_000)];
            out.push(("kernel 4 MB".into(), String::from_utf8_lossy(raw).into_owned()));
        }
    }
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let random: Vec<u8> = (0..1_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    out.push(("random 1 MB".into(), String::from_utf8_lossy(&random).into_owned()));
    out
}

fn main() {
    let regexes: Vec<(Builtin, Regex)> = [Builtin::Gpt2, Builtin::Cl100k, Builtin::O200k]
        .into_iter()
        .map(|b| (b, Regex::new(b.pattern()).unwrap()))
        .collect();
    for (name, text) in inputs() {
        for (b, re) in &regexes {
            let fast = data::mb_per_s(text.len(), 3, &mut || {
                let mut n = 0usize;
                split(*b, &text, |s, e| n += e - s);
                n
            });
            let slow = data::mb_per_s(text.len(), 1, &mut || re.find_iter(&text).count());
            println!(
                "{name:>13} {:<7} fast {fast:8.1} MB/s  fancy-regex {slow:6.1} MB/s  x{:.1}",
                format!("{b:?}"),
                fast / slow
            );
        }
    }
}
