// tokreg wordpiece: #[ignore] tests against reference data built with Hugging Face tokenizers,
// plus the encoder benchmark and a full-corpus training run. Test-only file I/O lives here.
//
// Reference data (default dir /tmp/wordpiece-ref, override with WORDPIECE_REF): `vocab.txt`
// (one token per line, id order, from an HF WordPiece tokenizer trained on dr.en.txt + kjv.txt),
// `<corpus>.<options>.ids` (HF's `encode(line, add_special_tokens=False).ids` for every line of
// the corpus split on '\n', space separated), and `lower_map.txt` / `strip_map.txt` (HF's output
// for every code point that lowercasing / accent stripping changes: "cp out_cp...").
// Run: cargo test --release -- --ignored --nocapture

use super::{pre_tokenize, train, BertNormalizer, Encoder, TrainerConfig};
use rustc_hash::FxHashMap;
use std::time::Instant;

fn ref_dir() -> String {
    std::env::var("WORDPIECE_REF").unwrap_or_else(|_| "/tmp/wordpiece-ref".to_string())
}
const DATA: &str = "/work/shared/data";

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn ref_encoder() -> Encoder {
    let vocab: Vec<String> = read(&format!("{}/vocab.txt", ref_dir())).lines().map(String::from).collect();
    Encoder::new(&vocab, "[UNK]", "##", 100).unwrap()
}

const OPTION_SETS: [(&str, bool, bool, Option<bool>, bool); 5] = [
    // name, clean_text, handle_chinese_chars, strip_accents, lowercase
    ("lower_strip", true, true, None, true),
    ("lower_nostrip", true, true, Some(false), true),
    ("nolower_strip", true, true, Some(true), false),
    ("nolower_nostrip", true, true, Some(false), false),
    ("raw", false, false, Some(false), false),
];

#[test]
#[ignore]
fn hf_parity_corpora() {
    let enc = ref_encoder();
    let mut all_ok = true;
    for (name, clean, chinese, strip, lower) in OPTION_SETS {
        let norm = BertNormalizer::hf(clean, chinese, strip, lower);
        for corpus in ["dr.en", "dr.zh-cn", "kjv"] {
            let text = read(&format!("{DATA}/{corpus}.txt"));
            let ids = read(&format!("{}/{corpus}.{name}.ids", ref_dir()));
            let lines: Vec<&str> = text.split('\n').collect();
            let want: Vec<&str> = ids.split('\n').collect();
            assert_eq!(want.len(), lines.len() + 1, "{corpus}.{name}: line count");
            let (mut same, mut shown) = (0usize, 0);
            for (line, w) in lines.iter().zip(&want) {
                let want_ids: Vec<u32> = w.split_ascii_whitespace().map(|x| x.parse().unwrap()).collect();
                let got = enc.encode(&norm, line);
                if got == want_ids {
                    same += 1;
                } else if shown < 3 {
                    shown += 1;
                    println!("MISMATCH {corpus}.{name}: {line:?}\n  got  {got:?}\n  want {want_ids:?}");
                }
            }
            println!(
                "parity {corpus:9} {name:16} {same}/{} lines identical ({:.4}%)",
                lines.len(),
                100.0 * same as f64 / lines.len() as f64
            );
            all_ok &= same == lines.len();
        }
    }
    assert!(all_ok);
}

/// Every code point: our lowercasing and accent stripping give what HF gave.
#[test]
#[ignore]
fn hf_parity_codepoints() {
    let load = |f: &str| -> FxHashMap<u32, String> {
        read(&format!("{}/{f}", ref_dir()))
            .lines()
            .map(|l| {
                let mut it = l.split_ascii_whitespace().map(|x| x.parse::<u32>().unwrap());
                let cp = it.next().unwrap();
                (cp, it.map(|c| char::from_u32(c).unwrap()).collect())
            })
            .collect()
    };
    let lower = load("lower_map.txt");
    let strip = load("strip_map.txt");
    let nl = BertNormalizer { lowercase: true, ..Default::default() };
    let ns = BertNormalizer { strip_accents: true, ..Default::default() };
    let (mut bad_l, mut bad_s) = (Vec::new(), Vec::new());
    for c in (0..0x110000u32).filter_map(char::from_u32) {
        let s = c.to_string();
        let want = lower.get(&(c as u32)).cloned().unwrap_or_else(|| s.clone());
        if nl.normalize(&s) != want {
            bad_l.push(c as u32);
        }
        let want = strip.get(&(c as u32)).cloned().unwrap_or_else(|| s.clone());
        if ns.normalize(&s) != want {
            bad_s.push(c as u32);
        }
    }
    println!("lowercase: {} code points differ {:X?}", bad_l.len(), &bad_l[..bad_l.len().min(20)]);
    println!("strip_accents: {} code points differ {:X?}", bad_s.len(), &bad_s[..bad_s.len().min(40)]);
    assert!(bad_l.is_empty() && bad_s.is_empty());
}

#[test]
#[ignore]
fn bench_encode() {
    let enc = ref_encoder();
    let norm = BertNormalizer::bert();
    let text = read(&format!("{DATA}/dr.en.txt"));
    let lines: Vec<&str> = text.split('\n').collect();
    let mb = text.len() as f64 / 1e6;
    let reps = 20;
    // Per line, like HF's per-line encode; buffers reused across lines.
    let mut best_lines = f64::MAX;
    let mut n_ids = 0;
    for _ in 0..reps {
        let t = Instant::now();
        let (mut scratch, mut out) = (String::new(), Vec::new());
        n_ids = 0;
        for l in &lines {
            out.clear();
            enc.encode_into(&norm, l, &mut scratch, &mut out);
            n_ids += out.len();
        }
        best_lines = best_lines.min(t.elapsed().as_secs_f64());
    }
    // Whole file in one call.
    let mut best_whole = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        let ids = enc.encode(&norm, &text);
        std::hint::black_box(&ids);
        best_whole = best_whole.min(t.elapsed().as_secs_f64());
    }
    // Stages separately, whole file.
    let t = Instant::now();
    let normalized = norm.normalize(&text);
    let t_norm = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut nw = 0usize;
    pre_tokenize(&normalized, |_| nw += 1);
    let t_pre = t.elapsed().as_secs_f64();
    let mut words = Vec::new();
    pre_tokenize(&normalized, |w| words.push(w));
    let t = Instant::now();
    let mut out = Vec::new();
    for w in &words {
        enc.encode_word(w, &mut out);
    }
    let t_words = t.elapsed().as_secs_f64();
    println!("dr.en.txt {:.3} MB, {} ids, {} words", mb, n_ids, nw);
    println!("per-line encode : {:.1} MB/s ({:.2} ms)", mb / best_lines, best_lines * 1e3);
    println!("whole-text encode: {:.1} MB/s ({:.2} ms)", mb / best_whole, best_whole * 1e3);
    println!(
        "stages: normalize {:.1} MB/s, pre_tokenize {:.1} MB/s, encode_word {:.1} MB/s",
        mb / t_norm,
        mb / t_pre,
        mb / t_words
    );
}

/// Trains on dr.en.txt + kjv.txt (BERT uncased pipeline) to vocab 8000; times it, checks
/// determinism across thread counts on real data, and compares the encoding with HF's vocab.
#[test]
#[ignore]
fn train_real_corpus() {
    let norm = BertNormalizer::bert();
    let mut counts: FxHashMap<String, u64> = FxHashMap::default();
    for f in ["dr.en.txt", "kjv.txt"] {
        let text = read(&format!("{DATA}/{f}"));
        for line in text.split('\n') {
            let n = norm.normalize(line);
            pre_tokenize(&n, |w| *counts.entry(w.to_string()).or_default() += 1);
        }
    }
    let words: Vec<(String, u64)> = counts.into_iter().collect();
    let cfg = TrainerConfig {
        vocab_size: 8000,
        special_tokens: ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"].map(String::from).to_vec(),
        ..Default::default()
    };
    let run = |threads: usize, ws: &[(String, u64)]| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let t = Instant::now();
        let r = pool.install(|| train(ws, &cfg, &mut |_, _, _| true).unwrap());
        (r, t.elapsed().as_secs_f64())
    };
    let (r2, t2) = run(2, &words);
    let mut rev = words.clone();
    rev.reverse();
    let (r1, t1) = run(1, &rev);
    println!(
        "{} distinct words -> {} tokens, {} merges; train {:.2}s (2 threads), {:.2}s (1 thread)",
        words.len(),
        r2.tokens.len(),
        r2.merges.len(),
        t2,
        t1
    );
    assert_eq!(r1, r2);
    for m in r2.merges.iter().take(5).chain(r2.merges.iter().rev().take(3)) {
        println!(
            "  {} + {} -> {} score {:.3e} ({} / {}*{})",
            r2.tokens[m.left as usize].0,
            r2.tokens[m.right as usize].0,
            r2.tokens[m.result as usize].0,
            m.score,
            m.pair_count,
            m.left_count,
            m.right_count
        );
    }
    let vocab: Vec<String> = r2.tokens.iter().map(|t| t.0.clone()).collect();
    let enc = Encoder::new(&vocab, "[UNK]", "##", 100).unwrap();
    let text = read(&format!("{DATA}/dr.en.txt"));
    let ids = enc.encode(&norm, &text);
    let unk = ids.iter().filter(|&&i| i == enc.unk_id()).count();
    println!("dr.en.txt with our vocab: {} ids, {} unk", ids.len(), unk);
}
