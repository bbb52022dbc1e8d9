//! The SentencePiece BPE encoder, on already-normalized text. Owns: `Encoder` and its
//! compatibility rules with SentencePiece's `bpe_model.cc` and the id handling of
//! `sentencepiece_processor.cc`.
//!
//! This is not tokreg's other BPE: a SentencePiece BPE model keeps no merge list, only pieces
//! with scores, and encoding is score-driven:
//!
//! 1. The text is cut into symbols: at each position the longest user-defined piece (such a
//!    symbol is frozen: it never merges), else one UTF-8 character. A character need not be
//!    a piece.
//! 2. Every adjacent pair whose concatenation is a mergeable piece (normal, user-defined or
//!    unused) is a candidate. The candidate with the HIGHEST piece score merges first; equal
//!    scores go to the leftmost pair. After a merge the two new neighbour pairs become
//!    candidates; candidates made stale by earlier merges are skipped.
//! 3. Each final symbol gets its id: control/unknown/byte pieces are looked up first (SP's
//!    reserved map), then the mergeable pieces, else the unknown id. A symbol that is an
//!    `unused` piece is split back into the two symbols it was last recorded as merged from.
//! 4. Unknown symbols become the byte pieces `<0xNN>` of their UTF-8 bytes when the model has
//!    byte pieces (byte fallback); without them a run of unknown symbols gives one unknown id.
//!
//! Scores are compared as `f32`, the type SentencePiece stores them in.
//!
//! Cost: a line is encoded one segment at a time, cut between two characters that no piece
//! holds side by side (`joins`): no merge can cross such a cut, so the ids are those of the
//! whole line, and the merge queue stays word-sized: linear time and memory on lines of any
//! length (SentencePiece keeps one queue for the whole line).
//!
//! Worked example (pieces `a`,`b`,`c`; `ab` score -1; `bc` score -0.5; `abc` score -2):
//! `abc` → pairs `ab` (-1) and `bc` (-0.5) → `bc` merges first → `a` + `bc` → `abc` (-2) merges
//! → one symbol `abc`.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::CoreError;
use crate::unigram::{parse_byte_piece, Piece, PieceKind};

/// Longest-prefix matcher over the user-defined pieces (a byte trie; there are few of them).
struct PrefixTrie {
    /// node -> (byte -> child node)
    children: Vec<FxHashMap<u8, u32>>,
    terminal: Vec<bool>,
}

impl PrefixTrie {
    fn new<'a>(keys: impl Iterator<Item = &'a [u8]>) -> PrefixTrie {
        let mut t = PrefixTrie { children: vec![FxHashMap::default()], terminal: vec![false] };
        for key in keys {
            let mut node = 0usize;
            for &b in key {
                let next = t.children.len() as u32;
                let child = *t.children[node].entry(b).or_insert(next);
                if child == next {
                    t.children.push(FxHashMap::default());
                    t.terminal.push(false);
                }
                node = child as usize;
            }
            t.terminal[node] = true;
        }
        t
    }

    /// Length of the longest key that `s` starts with; 0 when none does.
    fn longest(&self, s: &[u8]) -> usize {
        let mut node = 0usize;
        let mut best = 0;
        for (i, b) in s.iter().enumerate() {
            match self.children[node].get(b) {
                Some(&c) => node = c as usize,
                None => break,
            }
            if self.terminal[node] {
                best = i + 1;
            }
        }
        best
    }
}

/// Length of the UTF-8 sequence from its lead byte (SP's OneCharLen).
#[inline]
fn char_len(b: u8) -> usize {
    match b >> 4 {
        0xC | 0xD => 2,
        0xE => 3,
        0xF => 4,
        _ => 1,
    }
}

/// One symbol of the working sequence: bytes `start..start+len` of the text; `len == 0` once
/// merged into its left neighbour. `prev`/`next` link the live symbols (-1 = none).
#[derive(Clone, Copy)]
struct Symbol {
    start: u32,
    len: u32,
    prev: i32,
    next: i32,
    freeze: bool,
}

/// A candidate merge of symbols `left` and `right` into a piece of `size` bytes.
#[derive(Clone, Copy)]
struct Candidate {
    score: f32,
    left: u32,
    right: u32,
    size: u32,
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Candidate {}
impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Candidate {
    /// The heap pops the greatest: highest score first, then the leftmost pair (SP's order).
    /// Scores are finite (checked in `Encoder::new`), so `total_cmp` is the plain order.
    fn cmp(&self, other: &Self) -> Ordering {
        self.score.total_cmp(&other.score).then_with(|| other.left.cmp(&self.left))
    }
}

pub struct Encoder {
    /// Normal, user-defined and unused pieces: what a merge may produce (SP's `pieces_`).
    mergeable: FxHashMap<Box<[u8]>, u32>,
    /// Control, unknown and byte pieces, looked up first for a final symbol.
    reserved: FxHashMap<Box<[u8]>, u32>,
    scores: Vec<f32>,
    kinds: Vec<PieceKind>,
    texts: Vec<String>,
    unk_id: u32,
    /// Id of `<0xNN>` for each byte; `None` when the model has no byte pieces.
    byte_ids: Option<Box<[u32; 256]>>,
    /// The user-defined pieces, matched before anything else; `None` when there are none.
    user: Option<PrefixTrie>,
    any_unused: bool,
    /// Adjacent character pairs inside the pieces a merge can make and the user-defined pieces
    /// (`char_pair`); `ascii_joins[a]` has bit `b` for the pairs of two ASCII characters.
    joins: FxHashSet<u64>,
    ascii_joins: Box<[u128; 128]>,
}

/// The buffers of one `encode_into` call, reused by each of its segments.
#[derive(Default)]
struct Scratch<'s> {
    syms: Vec<Symbol>,
    heap: BinaryHeap<Candidate>,
    split: FxHashMap<&'s [u8], (&'s [u8], &'s [u8])>,
}

/// Two characters as one key.
#[inline]
fn char_pair(a: char, b: char) -> u64 {
    (a as u64) << 32 | b as u64
}

impl Encoder {
    /// Builds from pieces in id order. Errors (like SentencePiece's model checks): an empty or
    /// repeated piece, a non-finite score, no or two unknown pieces, byte pieces that are not
    /// exactly the 256 `<0x00>`..`<0xFF>`.
    pub fn new(pieces: &[Piece]) -> Result<Encoder, CoreError> {
        if pieces.len() >= i32::MAX as usize {
            return Err(CoreError::input(format!("a SentencePiece BPE model of {} pieces is too large", pieces.len())));
        }
        let mut mergeable = FxHashMap::default();
        let mut reserved = FxHashMap::default();
        let mut unk_id = None;
        let mut byte_ids = [u32::MAX; 256];
        let mut n_bytes = 0;
        for (i, p) in pieces.iter().enumerate() {
            let id = i as u32;
            if p.text.is_empty() {
                return Err(CoreError::input(format!("SentencePiece BPE piece {i} is empty; remove it")));
            }
            if !p.score.is_finite() {
                return Err(CoreError::input(format!(
                    "the SentencePiece BPE piece {:?} has a non-finite score; give it a finite score",
                    p.text
                )));
            }
            let key: Box<[u8]> = p.text.as_bytes().into();
            let map = match p.kind {
                PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused => &mut mergeable,
                PieceKind::Control | PieceKind::Unknown | PieceKind::Byte => &mut reserved,
            };
            if map.insert(key, id).is_some() {
                return Err(CoreError::input(format!(
                    "the SentencePiece BPE piece {:?} is defined twice; remove one",
                    p.text
                )));
            }
            match p.kind {
                PieceKind::Unknown if unk_id.is_some() => {
                    return Err(CoreError::input(
                        "the SentencePiece BPE model has more than one unknown piece; keep one",
                    ))
                }
                PieceKind::Unknown => unk_id = Some(id),
                PieceKind::Byte => {
                    let b = parse_byte_piece(&p.text).ok_or_else(|| {
                        CoreError::input(format!("byte piece {:?} is not spelled <0xHH> (upper-case hex)", p.text))
                    })?;
                    byte_ids[b as usize] = id;
                    n_bytes += 1;
                }
                _ => {}
            }
        }
        let unk_id = unk_id.ok_or_else(|| {
            CoreError::input("the SentencePiece BPE model has no unknown piece; add one (e.g. <unk>)")
        })?;
        let byte_ids = match n_bytes {
            0 => None,
            256 => Some(Box::new(byte_ids)),
            n => {
                return Err(CoreError::input(format!(
                    "the model has {n} byte pieces; byte fallback needs all 256 of <0x00>..<0xFF>"
                )))
            }
        };
        let user_keys: Vec<&[u8]> =
            pieces.iter().filter(|p| p.kind == PieceKind::UserDefined).map(|p| p.text.as_bytes()).collect();
        let user = (!user_keys.is_empty()).then(|| PrefixTrie::new(user_keys.into_iter()));
        let mut joins = FxHashSet::default();
        let mut ascii_joins = Box::new([0u128; 128]);
        for p in
            pieces.iter().filter(|p| matches!(p.kind, PieceKind::Normal | PieceKind::UserDefined | PieceKind::Unused))
        {
            let mut chars = p.text.chars();
            let Some(mut a) = chars.next() else { continue };
            for b in chars {
                if a.is_ascii() && b.is_ascii() {
                    ascii_joins[a as usize] |= 1u128 << (b as u32);
                } else {
                    joins.insert(char_pair(a, b));
                }
                a = b;
            }
        }
        Ok(Encoder {
            mergeable,
            reserved,
            // + 0.0: -0.0 and 0.0 compare equal in SP, so both become 0.0 for `total_cmp`.
            scores: pieces.iter().map(|p| p.score as f32 + 0.0).collect(),
            kinds: pieces.iter().map(|p| p.kind).collect(),
            texts: pieces.iter().map(|p| p.text.clone()).collect(),
            unk_id,
            byte_ids,
            user,
            any_unused: pieces.iter().any(|p| p.kind == PieceKind::Unused),
            joins,
            ascii_joins,
        })
    }

    pub fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    pub fn unk_id(&self) -> u32 {
        self.unk_id
    }

    /// SP's `PieceToId`: reserved pieces first, then mergeable ones, else unknown.
    fn id_of(&self, w: &[u8]) -> u32 {
        match self.reserved.get(w) {
            Some(&id) => id,
            None => self.mergeable.get(w).copied().unwrap_or(self.unk_id),
        }
    }

    /// Ids of normalized text (▁ already in place).
    pub fn encode(&self, normalized: &str) -> Result<Vec<u32>, CoreError> {
        let mut out = Vec::new();
        self.encode_into(normalized, &mut out)?;
        Ok(out)
    }

    /// `encode`, appending the ids to `out`.
    ///
    /// The text is encoded one segment at a time, cut where no merge can ever join the two
    /// sides (see `joins`): merges never cross such a cut, so each side's merges happen in the
    /// same relative order alone as in the whole text, and the result is the same. That keeps
    /// the candidate heap word-sized and in cache, so time and memory are linear in the text
    /// (one merge queue over a 100 MB line was 1-1.7 µs per byte and gigabytes of memory).
    /// A model with `unused` pieces is encoded whole: SentencePiece splits such a piece back
    /// the way it was last merged anywhere in the text.
    pub fn encode_into(&self, normalized: &str, out: &mut Vec<u32>) -> Result<(), CoreError> {
        let s = normalized.as_bytes();
        if s.len() >= u32::MAX as usize {
            return Err(CoreError::input("a text of 4 GiB or more cannot be encoded in one call; split it"));
        }
        let mut scratch = Scratch::default();
        let mut prev_unk = false;
        let mut start = 0;
        if !self.any_unused {
            let mut chars = normalized.char_indices();
            let mut prev = chars.next().map(|(_, c)| c);
            for (i, c) in chars {
                if let Some(p) = prev {
                    if !self.joins(p, c) {
                        self.encode_segment(&s[start..i], &mut scratch, &mut prev_unk, out);
                        start = i;
                    }
                }
                prev = Some(c);
            }
        }
        self.encode_segment(&s[start..], &mut scratch, &mut prev_unk, out);
        Ok(())
    }

    /// Whether some piece a merge can make (or a user-defined piece) holds `a` followed by `b`:
    /// only then can the boundary between them disappear.
    #[inline]
    fn joins(&self, a: char, b: char) -> bool {
        if a.is_ascii() && b.is_ascii() {
            return self.ascii_joins[a as usize] >> (b as u32) & 1 == 1;
        }
        self.joins.contains(&char_pair(a, b))
    }

    /// Steps 1-4 on one segment. `prev_unk` carries step 4's run of unknown symbols across
    /// segments, as if the text were one.
    fn encode_segment<'s>(&self, s: &'s [u8], sc: &mut Scratch<'s>, prev_unk: &mut bool, out: &mut Vec<u32>) {
        if s.is_empty() {
            return;
        }
        // A lone character needs no merging: its id, as step 4 would give it.
        if s.len() <= 4 && char_len(s[0]) == s.len() && self.user.is_none() {
            self.emit(s, self.id_of(s), prev_unk, out);
            return;
        }
        // 1. Symbols: the longest user-defined piece (frozen), else one character.
        let syms = &mut sc.syms;
        syms.clear();
        let mut pos = 0usize;
        while pos < s.len() {
            let user_len = self.user.as_ref().map_or(0, |u| u.longest(&s[pos..]));
            let (len, freeze) =
                if user_len > 0 { (user_len, true) } else { (char_len(s[pos]).min(s.len() - pos), false) };
            let i = syms.len() as i32;
            syms.push(Symbol { start: pos as u32, len: len as u32, prev: i - 1, next: i + 1, freeze });
            pos += len;
        }
        if let Some(last) = syms.last_mut() {
            last.next = -1;
        }

        // 2. Candidate pairs; `split` remembers how each unused piece was formed (by text, the
        //    last recorded split wins, as in SP).
        let heap = &mut sc.heap;
        heap.clear();
        let split = &mut sc.split;
        if !split.is_empty() {
            split.clear();
        }
        for i in 1..syms.len() as i32 {
            self.consider(s, syms, heap, split, i - 1, i);
        }

        // 3. Merge, best candidate first; a candidate is stale once either side changed.
        while let Some(c) = heap.pop() {
            let (l, r) = (c.left as usize, c.right as usize);
            if syms[l].len == 0 || syms[r].len == 0 || syms[l].len + syms[r].len != c.size {
                continue;
            }
            syms[l].len += syms[r].len;
            let after = syms[r].next;
            syms[l].next = after;
            if after >= 0 {
                syms[after as usize].prev = l as i32;
            }
            syms[r].len = 0;
            self.consider(s, syms, heap, split, syms[l].prev, l as i32);
            self.consider(s, syms, heap, split, l as i32, syms[l].next);
        }

        // 4. Ids; unused pieces split back; unknowns to bytes or merged runs.
        let mut i = 0i32;
        while i >= 0 {
            let sym = syms[i as usize];
            self.resegment(&s[sym.start as usize..(sym.start + sym.len) as usize], split, prev_unk, out);
            i = sym.next;
        }
    }

    /// Pushes the candidate merge of symbols `l` and `r` (either may be -1: none).
    fn consider<'s>(
        &self,
        s: &'s [u8],
        syms: &[Symbol],
        heap: &mut BinaryHeap<Candidate>,
        split: &mut FxHashMap<&'s [u8], (&'s [u8], &'s [u8])>,
        l: i32,
        r: i32,
    ) {
        if l < 0 || r < 0 {
            return;
        }
        let (a, b) = (syms[l as usize], syms[r as usize]);
        if a.freeze || b.freeze {
            return;
        }
        let piece = &s[a.start as usize..(a.start + a.len + b.len) as usize];
        let Some(&id) = self.mergeable.get(piece) else { return };
        heap.push(Candidate { score: self.scores[id as usize], left: l as u32, right: r as u32, size: a.len + b.len });
        if self.kinds[id as usize] == PieceKind::Unused {
            let mid = (a.start + a.len) as usize;
            split.insert(piece, (&s[a.start as usize..mid], &s[mid..(b.start + b.len) as usize]));
        }
    }

    /// Appends the id(s) of a final piece: an unknown one as its bytes (byte fallback), or as
    /// one unknown id per run of unknowns.
    #[inline]
    fn emit(&self, w: &[u8], id: u32, prev_unk: &mut bool, out: &mut Vec<u32>) {
        let is_unk = self.kinds[id as usize] == PieceKind::Unknown;
        match (&self.byte_ids, is_unk) {
            (Some(bytes), true) => out.extend(w.iter().map(|&b| bytes[b as usize])),
            (None, true) if *prev_unk => {}
            _ => out.push(id),
        }
        *prev_unk = is_unk;
    }

    fn resegment<'s>(
        &self,
        w: &'s [u8],
        split: &FxHashMap<&'s [u8], (&'s [u8], &'s [u8])>,
        prev_unk: &mut bool,
        out: &mut Vec<u32>,
    ) {
        let id = self.id_of(w);
        if self.any_unused && self.kinds[id as usize] == PieceKind::Unused {
            if let Some(&(a, b)) = split.get(w) {
                self.resegment(a, split, prev_unk, out);
                self.resegment(b, split, prev_unk, out);
                return;
            }
        }
        self.emit(w, id, prev_unk, out);
    }

    /// The bytes of the pieces `ids` (▁ still in place): byte pieces give their byte, control
    /// pieces nothing, every other piece its text. Ids out of range are skipped.
    pub fn decode_pieces(&self, ids: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        for &id in ids {
            let Some(kind) = self.kinds.get(id as usize) else { continue };
            match kind {
                PieceKind::Byte => out.extend(parse_byte_piece(&self.texts[id as usize])),
                PieceKind::Control => {}
                _ => out.extend_from_slice(self.texts[id as usize].as_bytes()),
            }
        }
        out
    }

    pub fn piece(&self, id: u32) -> Option<&str> {
        self.texts.get(id as usize).map(String::as_str)
    }

    pub fn kind(&self, id: u32) -> Option<PieceKind> {
        self.kinds.get(id as usize).copied()
    }
}

impl crate::unigram::SpPieces for Encoder {
    fn piece_of(&self, id: u32) -> (&str, PieceKind) {
        (&self.texts[id as usize], self.kinds[id as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unigram::byte_piece_text;

    fn p(text: &str, score: f64, kind: PieceKind) -> Piece {
        Piece { text: text.to_string(), score, kind }
    }

    /// <unk>, <s>, </s>, then the given normal pieces (score, text).
    fn model(normal: &[(&str, f64)]) -> Vec<Piece> {
        let mut v = vec![
            p("<unk>", 0.0, PieceKind::Unknown),
            p("<s>", 0.0, PieceKind::Control),
            p("</s>", 0.0, PieceKind::Control),
        ];
        v.extend(normal.iter().map(|&(t, s)| p(t, s, PieceKind::Normal)));
        v
    }

    fn enc(e: &Encoder, text: &str) -> Vec<u32> {
        e.encode(text).unwrap()
    }

    fn texts(e: &Encoder, ids: &[u32]) -> Vec<String> {
        ids.iter().map(|&i| e.piece(i).unwrap().to_string()).collect()
    }

    #[test]
    fn highest_score_merges_first() {
        let e =
            Encoder::new(&model(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -1.0), ("bc", -0.5), ("abc", -2.0)]))
                .unwrap();
        assert_eq!(texts(&e, &enc(&e, "abc")), ["abc"]);
        // Without `abc`, `bc` wins over `ab` by score, leaving `a` alone.
        let e = Encoder::new(&model(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("ab", -1.0), ("bc", -0.5)])).unwrap();
        assert_eq!(texts(&e, &enc(&e, "abc")), ["a", "bc"]);
    }

    #[test]
    fn equal_scores_merge_leftmost_first() {
        let e = Encoder::new(&model(&[("a", -1.0), ("aa", -1.0)])).unwrap();
        assert_eq!(texts(&e, &enc(&e, "aaa")), ["aa", "a"]);
        assert_eq!(texts(&e, &enc(&e, "aaaaa")), ["aa", "aa", "a"]);
    }

    #[test]
    fn merges_need_not_go_through_known_characters() {
        // `x` is not a piece, `xy` is: the pair still merges (SP looks up only the concatenation).
        let e = Encoder::new(&model(&[("y", -1.0), ("xy", -1.0)])).unwrap();
        assert_eq!(texts(&e, &enc(&e, "xy")), ["xy"]);
    }

    #[test]
    fn unknown_runs_merge_into_one_unk_without_byte_pieces() {
        let e = Encoder::new(&model(&[("a", -1.0)])).unwrap();
        assert_eq!(enc(&e, "a日本a"), [3, 0, 3]);
    }

    #[test]
    fn byte_fallback_spells_unknown_characters_in_bytes() {
        let mut m = model(&[]);
        m.extend((0..=255u8).map(|b| p(&byte_piece_text(b), 0.0, PieceKind::Byte)));
        m.push(p("a", -1.0, PieceKind::Normal));
        let e = Encoder::new(&m).unwrap();
        let a = 3 + 256;
        assert_eq!(enc(&e, "a日"), [a, 3 + 0xE6, 3 + 0x97, 3 + 0xA5]);
        assert_eq!(e.decode_pieces(&enc(&e, "a日")), "a日".as_bytes());
    }

    #[test]
    fn user_defined_pieces_are_frozen() {
        let mut m = model(&[("a", -1.0), ("b", -1.0), ("ab", -0.1), ("ba", -0.1)]);
        m.push(p("<b>", 0.0, PieceKind::UserDefined));
        let e = Encoder::new(&m).unwrap();
        assert_eq!(texts(&e, &enc(&e, "a<b>ba")), ["a", "<b>", "ba"]);
    }

    #[test]
    fn unused_pieces_are_split_back() {
        let mut m = model(&[("a", -1.0), ("b", -1.0), ("c", -1.0), ("abc", -0.5)]);
        m.push(p("ab", -0.2, PieceKind::Unused));
        let e = Encoder::new(&m).unwrap();
        // `ab` merges (unused), then `abc`; a final `ab` is split back into `a` `b`.
        assert_eq!(texts(&e, &enc(&e, "abc")), ["abc"]);
        assert_eq!(texts(&e, &enc(&e, "ab")), ["a", "b"]);
    }

    #[test]
    fn control_pieces_are_never_merged_into() {
        let e = Encoder::new(&model(&[("<", -1.0), ("s", -1.0), (">", -1.0)])).unwrap();
        assert_eq!(texts(&e, &enc(&e, "<s>")), ["<", "s", ">"]);
    }

    #[test]
    fn segments_encode_like_the_whole_text() {
        // Random models and texts over a few characters: cutting where no piece joins two
        // characters never changes the ids (with or without byte fallback and user pieces).
        let alphabet = ['a', 'b', '\u{2581}', 'c', '日', 'x'];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for round in 0..300 {
            let mut m = model(&[]);
            if round % 3 == 0 {
                m.extend((0..=255u8).map(|b| p(&byte_piece_text(b), 0.0, PieceKind::Byte)));
            }
            let mut seen = std::collections::HashSet::new();
            for _ in 0..next(12) + 1 {
                let len = next(3) + 1;
                let text: String = (0..len).map(|_| alphabet[next(alphabet.len())]).collect();
                if seen.insert(text.clone()) {
                    let kind = if round % 5 == 1 && len > 1 && next(4) == 0 {
                        PieceKind::UserDefined
                    } else {
                        PieceKind::Normal
                    };
                    m.push(p(&text, -(next(4) as f64), kind));
                }
            }
            let e = Encoder::new(&m).unwrap();
            for _ in 0..20 {
                let text: String = (0..next(24)).map(|_| alphabet[next(alphabet.len())]).collect();
                let mut whole = Vec::new();
                e.encode_segment(text.as_bytes(), &mut Scratch::default(), &mut false, &mut whole);
                assert_eq!(enc(&e, &text), whole, "{text:?}");
            }
        }
    }

    #[test]
    fn bad_models_are_refused() {
        assert!(Encoder::new(&[p("a", 0.0, PieceKind::Normal)]).is_err()); // no unk
        assert!(Encoder::new(&model(&[("a", f64::NAN)])).is_err());
        assert!(Encoder::new(&model(&[("a", 0.0), ("a", 0.0)])).is_err());
        let mut m = model(&[]);
        m.push(p("<0x41>", 0.0, PieceKind::Byte));
        assert!(Encoder::new(&m).is_err()); // byte pieces, but not all 256
    }
}
