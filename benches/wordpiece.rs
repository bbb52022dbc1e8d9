//! WordPiece on the shared corpora: training a BERT-uncased vocabulary of 8000 on dr.en.txt +
//! kjv.txt (timed on 1 and 2 threads, which must agree), then encoding dr.en.txt with it, per
//! line and whole, and by stage, in MB/s: `cargo bench --bench wordpiece`.

mod data;

use std::time::Instant;

use _core::normalize::{pre_tokenize, BertNormalizer};
use _core::wordpiece::{train, Encoder, TrainerConfig};
use rustc_hash::FxHashMap;

fn main() {
    let (Some(en), Some(kjv)) = (data::read("dr.en.txt"), data::read("kjv.txt")) else { return };
    let norm = BertNormalizer::bert();

    // Training: count the words as the corpus run does, then the merge loop alone.
    let mut counts: FxHashMap<String, u64> = FxHashMap::default();
    for text in [&en, &kjv] {
        for line in text.split('\n') {
            pre_tokenize(&norm.normalize(line), |w| *counts.entry(w.to_string()).or_default() += 1);
        }
    }
    let mut words: Vec<(String, u64)> = counts.into_iter().collect();
    words.sort_unstable();
    let cfg = TrainerConfig {
        vocab_size: 8000,
        special_tokens: ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"].map(String::from).to_vec(),
        ..Default::default()
    };
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let t = Instant::now();
        let r = pool.install(|| train(&words, &cfg, &mut |_, _, _| true).unwrap());
        (r, t.elapsed().as_secs_f64())
    };
    let (r2, t2) = run(2);
    let (r1, t1) = run(1);
    assert_eq!(r1, r2, "training depends on the thread count");
    println!(
        "train: {} distinct words -> {} tokens; {t2:.2} s on 2 threads, {t1:.2} s on 1",
        words.len(),
        r2.tokens.len()
    );

    // Encoding dr.en.txt with that vocabulary.
    let vocab: Vec<String> = r2.tokens.into_iter().map(|t| t.0).collect();
    let enc = Encoder::new(&vocab, "[UNK]", "##", 100).unwrap();
    let lines: Vec<&str> = en.split('\n').collect();
    let per_line = data::mb_per_s(en.len(), 5, &mut || {
        let (mut scratch, mut out) = (String::new(), Vec::new());
        for l in &lines {
            out.clear();
            enc.encode_into(&norm, l, &mut scratch, &mut out);
        }
        out.len()
    });
    let whole = data::mb_per_s(en.len(), 5, &mut || enc.encode(&norm, &en).len());
    println!("encode dr.en.txt: per line {per_line:.1} MB/s, whole text {whole:.1} MB/s");

    let normalize = data::mb_per_s(en.len(), 5, &mut || norm.normalize(&en).len());
    let normalized = norm.normalize(&en);
    let pretok = data::mb_per_s(en.len(), 5, &mut || {
        let mut n = 0;
        pre_tokenize(&normalized, |_| n += 1);
        n
    });
    let mut ws = Vec::new();
    pre_tokenize(&normalized, |w| ws.push(w));
    let match_words = data::mb_per_s(en.len(), 5, &mut || {
        let mut out = Vec::new();
        for w in &ws {
            enc.encode_word(w, &mut out);
        }
        out.len()
    });
    println!("stages: normalize {normalize:.1} MB/s, pre_tokenize {pretok:.1} MB/s, encode_word {match_words:.1} MB/s");
}
