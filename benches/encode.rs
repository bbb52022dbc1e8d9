//! The byte-level BPE encoder alone (no Python), on cl100k_base / o200k_base from the shared
//! `.tiktoken` files, in MB/s: `cargo bench --bench encode [-- VOCAB FILE...]`. With
//! `TOKREG_BENCH_ONCE=1` each file is encoded once and nothing is timed, for instruction
//! counts under `valgrind --tool=callgrind` (repeatable whatever the machine's load). With
//! `TOKREG_BENCH_COLD=1` each file is timed on the first call of a fresh encoder (best of 5, or of `TOKREG_BENCH_COLD_REPS`, CPU time);
//! with `TOKREG_BENCH_COLD_LOOP=N`, N times on one encoder that forgets its caches before each call.
//! With `TOKREG_BENCH_STREAM=1` each file is cut into documents of about 64 KB and a fresh
//! encoder encodes them one call each, as `benchmarks/versus.py`'s stream does (best of 3, CPU
//! time), beside the pre-tokenizer alone over the same documents: the rest is the encoder's.

mod data;

use _core::bpe::RankEncoder;
use _core::encode::Encode;
use _core::pretok::{Splitter, CL100K, O200K};

/// A `.tiktoken` file: one `base64(token) rank` per line.
fn load(path: &std::path::Path) -> Vec<(u32, Vec<u8>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (b64, rank) = l.split_once(' ').expect("a `base64 rank` line");
            (rank.parse().expect("a rank"), base64(b64))
        })
        .collect()
}

fn base64(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    } as u32;
    let s = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c) << (18 - 6 * i);
        }
        out.extend_from_slice(&acc.to_be_bytes()[1..chunk.len()]);
    }
    out
}

/// This thread's CPU time, so that the time slices a loaded machine gives other jobs are not
/// counted (`clock_gettime(CLOCK_THREAD_CPUTIME_ID)`, declared here: no libc crate for a bench).
fn cpu_seconds() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.sec as f64 + ts.nsec as f64 / 1e9
}

/// `text` cut into documents of about 64 KB, at character boundaries.
fn documents(text: &str) -> Vec<&str> {
    let mut docs = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(1 << 16);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (doc, tail) = rest.split_at(cut);
        docs.push(doc);
        rest = tail;
    }
    docs
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let vocab = args.first().map(String::as_str).unwrap_or("cl100k_base");
    let pattern = if vocab.starts_with("o200k") { O200K } else { CL100K };
    let dir = std::env::var_os("TOKREG_TEST_DATA").unwrap_or_else(|| "../shared/data".into());
    let tokens = load(&std::path::Path::new(&dir).join(format!("{vocab}.tiktoken")));
    // (label, text): the files named, else the shared corpora.
    let texts: Vec<(String, String)> = if args.len() > 1 {
        args[1..]
            .iter()
            .map(|f| (f.clone(), std::fs::read_to_string(f).unwrap_or_else(|e| panic!("{f}: {e}"))))
            .collect()
    } else {
        ["kjv.txt", "dr.en.txt", "dr.zh-cn.txt"].iter().filter_map(|f| Some((f.to_string(), data::read(f)?))).collect()
    };
    let once = std::env::var_os("TOKREG_BENCH_ONCE").is_some();
    if let Some(reps) = std::env::var("TOKREG_BENCH_COLD_LOOP").ok().and_then(|r| r.parse::<usize>().ok()) {
        // Cold, many times over one encoder: before each call it forgets its caches, so the call
        // runs as a fresh encoder's first does, without building the tables again (for
        // profiling the cold path). Best and median CPU time.
        let mut enc = RankEncoder::new(tokens.clone(), vec![], Splitter::new(pattern).unwrap()).unwrap();
        for (f, text) in texts {
            let mut times = Vec::with_capacity(reps);
            let mut out = Vec::new();
            // With TOKREG_BENCH_EVICT_MB, that many megabytes are written before each call (not
            // timed), so the encoder's tables are out of L2 cache as a freshly built encoder's are.
            let evict_mb =
                std::env::var("TOKREG_BENCH_EVICT_MB").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(0);
            let mut scratch = vec![0u8; evict_mb << 20];
            for rep in 0..reps {
                enc.forget_caches();
                out.clear();
                for (i, b) in scratch.iter_mut().enumerate().step_by(64) {
                    *b = (i + rep) as u8;
                }
                std::hint::black_box(&scratch);
                let t = cpu_seconds();
                enc.encode_into(&text, &mut out).unwrap();
                times.push(cpu_seconds() - t);
            }
            times.sort_by(f64::total_cmp);
            let mb = |s: f64| text.len() as f64 / s / 1e6;
            println!("{vocab} {f} cold x{reps}: best {:.1} MB/s, median {:.1} MB/s", mb(times[0]), mb(times[reps / 2]));
        }
        return;
    }
    if std::env::var_os("TOKREG_BENCH_COLD").is_some() {
        // Cold: a fresh encoder per run, timed on its first call (best of 5, CPU time).
        for (f, text) in texts {
            let mut best = f64::INFINITY;
            let reps = std::env::var("TOKREG_BENCH_COLD_REPS").ok().and_then(|r| r.parse().ok()).unwrap_or(5);
            for _ in 0..reps {
                let enc = RankEncoder::new(tokens.clone(), vec![], Splitter::new(pattern).unwrap()).unwrap();
                let mut out = Vec::new();
                let t = cpu_seconds();
                enc.encode_into(&text, &mut out).unwrap();
                best = best.min(cpu_seconds() - t);
            }
            println!("{vocab} {f} cold: {:.1} MB/s", text.len() as f64 / best / 1e6);
        }
        return;
    }
    if std::env::var_os("TOKREG_BENCH_STREAM").is_some() {
        for (f, text) in texts {
            let docs = documents(&text);
            let splitter = Splitter::new(pattern).unwrap();
            let (mut split_best, mut enc_best, mut ids) = (f64::INFINITY, f64::INFINITY, 0);
            for _ in 0..3 {
                let t = cpu_seconds();
                let mut n = 0usize;
                for d in &docs {
                    splitter.split(d, |a, b| n += b - a).unwrap();
                }
                split_best = split_best.min(cpu_seconds() - t);
                assert_eq!(n, text.len());
                let enc = RankEncoder::new(tokens.clone(), vec![], Splitter::new(pattern).unwrap()).unwrap();
                let mut out = Vec::new();
                let t = cpu_seconds();
                ids = 0;
                for d in &docs {
                    out.clear();
                    enc.encode_into(d, &mut out).unwrap();
                    ids += out.len();
                }
                enc_best = enc_best.min(cpu_seconds() - t);
            }
            let mb = |s: f64| text.len() as f64 / s / 1e6;
            println!(
                "{vocab} {f} stream of {} documents: {:.1} MB/s ({ids} ids); pre-tokenizer alone {:.1} MB/s, \
                 the rest {:.1} ns an id",
                docs.len(),
                mb(enc_best),
                mb(split_best),
                (enc_best - split_best) / ids as f64 * 1e9
            );
        }
        return;
    }
    for (f, text) in texts {
        // A fresh encoder per file: nothing cached from another file.
        let enc = RankEncoder::new(tokens.clone(), vec![], Splitter::new(pattern).unwrap()).unwrap();
        if once {
            let mut out = Vec::new();
            enc.encode_into(&text, &mut out).unwrap();
            println!("{f}: {} bytes, {} ids", text.len(), out.len());
            continue;
        }
        let mbs = data::mb_per_s(text.len(), 5, &mut || {
            let mut out = Vec::new();
            enc.encode_into(&text, &mut out).unwrap();
            out.len()
        });
        println!("{vocab} {f}: {mbs:.1} MB/s");
    }
}
