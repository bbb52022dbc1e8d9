//! Double-array trie over piece bytes, used by the encoder for common-prefix search.
//! Owns: building the double array from (key bytes, value) pairs and the one-byte transition.
//!
//! Why a double array: a transition is one add and one compare on a flat array (the root's
//! 256 children sit at `base[0] + byte`, so the first level is a direct byte-indexed lookup),
//! no pointer chasing and no allocation while matching.

/// One slot: `base` is the offset of this node's children, `check` the parent that owns this
/// slot (`FREE` if unused), `value` the key ending here (`NO_VALUE` if none). The value sits in
/// the same 12 bytes as the transition: matching reads it after every step, and a separate
/// array cost a second cache miss per step (measured ~15% of the encoder's time).
#[derive(Clone, Copy)]
struct Unit {
    base: u32,
    check: u32,
    value: i32,
}

const FREE: u32 = u32::MAX;
pub(crate) const NO_VALUE: i32 = -1;

pub(crate) struct DoubleArray {
    units: Vec<Unit>,
}

const EMPTY: Unit = Unit { base: 0, check: FREE, value: NO_VALUE };

impl DoubleArray {
    /// Builds from keys with values >= 0. Keys must be non-empty and distinct.
    pub(crate) fn build(mut keys: Vec<(&[u8], i32)>) -> Result<DoubleArray, String> {
        keys.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for w in keys.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(format!("duplicate key {:?}", String::from_utf8_lossy(w[0].0)));
            }
        }
        if keys.iter().any(|k| k.0.is_empty()) {
            return Err("empty key".into());
        }
        let mut da = DoubleArray { units: vec![EMPTY; 512] };
        // Slot 0 is the root; mark it used so no child is ever placed there.
        da.units[0].check = 0;
        // Work stack of (node slot, key range, depth); children are placed when popped.
        let mut stack: Vec<(u32, usize, usize, usize)> = vec![(0, 0, keys.len(), 0)];
        // Lowest slot that might be free; only moves forward, keeps placement roughly linear.
        let mut first_free: usize = 1;
        let mut labels: Vec<(u8, usize, usize)> = Vec::new();
        while let Some((node, lo, hi, depth)) = stack.pop() {
            labels.clear();
            let mut i = lo;
            while i < hi {
                let k = keys[i].0;
                if k.len() == depth {
                    da.units[node as usize].value = keys[i].1;
                    i += 1;
                    continue;
                }
                let c = k[depth];
                let start = i;
                while i < hi && keys[i].0.len() > depth && keys[i].0[depth] == c {
                    i += 1;
                }
                labels.push((c, start, i));
            }
            if labels.is_empty() {
                continue;
            }
            while first_free < da.units.len() && da.units[first_free].check != FREE {
                first_free += 1;
            }
            // Find a base so that every child slot base+c is free (and base >= 1 so that no
            // child lands on the root slot).
            let c0 = labels[0].0 as usize;
            let mut pos = first_free.max(c0 + 1);
            let base = loop {
                let base = pos - c0;
                let need = base + 256;
                if need > da.units.len() {
                    da.units.resize(need.next_power_of_two(), EMPTY);
                }
                if da.units[pos].check == FREE
                    && labels.iter().all(|&(c, _, _)| da.units[base + c as usize].check == FREE)
                {
                    break base;
                }
                pos += 1;
            };
            da.units[node as usize].base = base as u32;
            for &(c, _, _) in labels.iter() {
                da.units[base + c as usize].check = node;
            }
            for &(c, s, e) in labels.iter().rev() {
                stack.push(((base + c as usize) as u32, s, e, depth + 1));
            }
        }
        // Trim the tail but keep 256 slots after the last used one so that `step` never
        // indexes out of bounds from any base.
        let last = da.units.iter().rposition(|u| u.check != FREE).unwrap_or(0);
        let max_base = da.units.iter().map(|u| u.base as usize).max().unwrap_or(0);
        let keep = (last + 1).max(max_base + 256);
        da.units.truncate(keep);
        Ok(da)
    }

    /// Child of `node` by byte `c`, if any.
    #[inline(always)]
    pub(crate) fn step(&self, node: u32, c: u8) -> Option<u32> {
        // SAFETY-free indexing: build() guarantees base + 255 < len for every node.
        let t = self.units[node as usize].base as usize + c as usize;
        let u = self.units[t];
        if u.check == node {
            Some(t as u32)
        } else {
            None
        }
    }

    #[inline(always)]
    pub(crate) fn value(&self, node: u32) -> i32 {
        self.units[node as usize].value
    }

    /// All (byte length, value) of keys that are prefixes of `s`, shortest first.
    #[cfg(test)]
    pub(crate) fn common_prefixes(&self, s: &[u8]) -> Vec<(usize, i32)> {
        let mut out = Vec::new();
        let mut node = 0u32;
        for (i, &c) in s.iter().enumerate() {
            match self.step(node, c) {
                Some(n) => node = n,
                None => break,
            }
            let v = self.value(node);
            if v != NO_VALUE {
                out.push((i + 1, v));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_misses() {
        let keys: Vec<(&[u8], i32)> = vec![
            (b"a", 0),
            (b"ab", 1),
            (b"abc", 2),
            (b"b", 3),
            ("▁the".as_bytes(), 4),
            ("▁t".as_bytes(), 5),
            (&[0xFFu8], 6),
        ];
        let da = DoubleArray::build(keys).unwrap();
        assert_eq!(da.common_prefixes(b"abcd"), vec![(1, 0), (2, 1), (3, 2)]);
        assert_eq!(da.common_prefixes(b"ba"), vec![(1, 3)]);
        assert_eq!(da.common_prefixes(b"c"), vec![]);
        assert_eq!(da.common_prefixes("▁them".as_bytes()), vec![(4, 5), (6, 4)]);
        assert_eq!(da.common_prefixes(&[0xFF, 0]), vec![(1, 6)]);
        assert!(DoubleArray::build(vec![(b"x", 0), (b"x", 1)]).is_err());
    }

    #[test]
    fn many_keys_roundtrip() {
        let words: Vec<String> = (0..5000u32).map(|i| format!("k{}x{}", i * 7919 % 10007, i)).collect();
        let keys: Vec<(&[u8], i32)> = words.iter().enumerate().map(|(i, w)| (w.as_bytes(), i as i32)).collect();
        let da = DoubleArray::build(keys).unwrap();
        for (i, w) in words.iter().enumerate() {
            let p = da.common_prefixes(w.as_bytes());
            assert_eq!(p.last(), Some(&(w.len(), i as i32)));
        }
    }
}
