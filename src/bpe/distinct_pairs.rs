//! About how many distinct adjacent pairs an arena of words holds, found before indexing them
//! so that the index sizes its tables once: HyperLogLog (Flajolet et al., 2007), 4,096
//! registers of a byte, a standard error of about 1.6%.
//!
//! Grown by doubling from nothing, the tables of SuperBPE's stage 2 (0.8M pairs at 20 MB of
//! text) moved every entry about twice, a tenth of indexing's time; the estimate costs one
//! sweep of the cells, on every thread.

use rayon::prelude::*;

const BITS: u32 = 12;
const REGISTERS: usize = 1 << BITS;

/// The estimate for the pairs `pair(x, y) -> Some(hash)` gives for each two adjacent cells
/// (`None`: not a pair, as across an edge). Each thread sweeps its share of the cells; a pair
/// cut in two by the shares is missed, which changes the estimate by nothing that matters.
pub(super) fn estimate(cells: &[u32], pair: impl Fn(u32, u32) -> Option<u64> + Sync) -> usize {
    let share = cells.len().div_ceil(rayon::current_num_threads().max(1)).max(1 << 16);
    let registers = cells
        .par_chunks(share)
        .map(|part| {
            let mut r = vec![0u8; REGISTERS];
            for xy in part.windows(2) {
                if let Some(h) = pair(xy[0], xy[1]) {
                    add(&mut r, h);
                }
            }
            r
        })
        .reduce(
            || vec![0u8; REGISTERS],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x = (*x).max(y);
                }
                a
            },
        );
    count(&registers)
}

/// The hash mixed again (the finalizer of MurmurHash3), so that its top bits and its run of
/// leading zeros are as good as random whatever the caller's hash.
#[inline]
fn mix(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

#[inline]
fn add(r: &mut [u8], h: u64) {
    let h = mix(h);
    let i = (h >> (64 - BITS)) as usize;
    // The first one bit of the rest (a sentinel bit keeps it within 64 - BITS + 1)
    let rank = ((h << BITS) | (1 << (BITS - 1))).leading_zeros() as u8 + 1;
    r[i] = r[i].max(rank);
}

fn count(r: &[u8]) -> usize {
    let m = REGISTERS as f64;
    let alpha = 0.7213 / (1.0 + 1.079 / m);
    let sum: f64 = r.iter().map(|&x| (-(x as f64)).exp2()).sum();
    let raw = alpha * m * m / sum;
    let zeros = r.iter().filter(|&&x| x == 0).count();
    // Few pairs: linear counting over the empty registers is the better estimate.
    let e = if raw <= 2.5 * m && zeros > 0 { m * (m / zeros as f64).ln() } else { raw };
    e.round() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_within_a_few_percent_on_any_thread_count() {
        // 200,000 distinct pairs, each seen one to three times, in a scattered order.
        let n = 200_000u64;
        let mut cells = Vec::new();
        for i in 0..3 * n {
            let p = (i * 7_919) % n;
            cells.extend([(p / 1000) as u32, (p % 1000) as u32 + 1000, u32::MAX]);
        }
        let pair = |x: u32, y: u32| (x != u32::MAX && y != u32::MAX).then_some(((x as u64) << 32) | y as u64);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let e = pool.install(|| estimate(&cells, |x, y| pair(x, y).map(crate::bpe::pair_table::pair_hash)));
            let off = (e as f64 / n as f64 - 1.0).abs();
            assert!(off < 0.05, "{threads} threads: {e} for {n}");
        }
        // few pairs: counted nearly exactly
        let few: Vec<u32> = (0..200u32).flat_map(|i| [i, i + 1, u32::MAX]).collect();
        let e = estimate(&few, |x, y| pair(x, y).map(crate::bpe::pair_table::pair_hash));
        assert!((195..=205).contains(&e), "{e}");
    }
}
