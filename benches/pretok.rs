//! The hand-written pre-tokenizers against fancy-regex running the same official patterns, on
//! the shared corpora, in MB/s: `cargo bench --bench pretok`.

mod data;

use _core::pretok::fast::{split, Builtin};
use fancy_regex::Regex;

const CORPORA: [&str; 3] = ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"];

fn main() {
    let regexes: Vec<(Builtin, Regex)> = [Builtin::Gpt2, Builtin::Cl100k, Builtin::O200k]
        .into_iter()
        .map(|b| (b, Regex::new(b.pattern()).unwrap()))
        .collect();
    for name in CORPORA {
        let Some(text) = data::read(name) else { continue };
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
