//! The algebra behind the methods: options as vectors `(parity, xor)` over GF(2), their span
//! (a parity basis), the enumeration of small sets, the parity DP, and the mex of a set of
//! options.

use std::ops::ControlFlow;

use crate::engine::interrupt::{Cancelled, Poller};

/// Bit 64 of a vector `(parity, xor)`.
pub(super) const PARITY: u128 = 1 << 64;

/// The vector of an option of value `xor` when the split count is `k`.
pub(super) fn option_vector(k: u32, xor: u64) -> u128 {
    (u128::from(k & 1) << 64) | u128::from(xor)
}

/// Calls `visit(xor, set)` for every set of at most `k` of the `values` with
/// `|set| ≡ k (mod 2)` (`set` = indices, ascending), stopping when `visit` breaks.
///
/// Depth first, without recursion, over the *prefixes*: sets of fewer than `min(k, d)` values.
/// Every non-empty set is a prefix plus one later value, visited in a tight loop on entering
/// the prefix (the largest sets, the bulk of the work, are never pushed). At most
/// [`enumeration_cost`] steps, `O(k)` memory.
pub(super) fn for_each_option<B>(
    values: &[u64],
    k: u32,
    mut visit: impl FnMut(u64, &[usize]) -> ControlFlow<B>,
) -> ControlFlow<B> {
    let max_size = values.len().min(k as usize);
    let parity = k as usize & 1;
    if parity == 0 {
        visit(0, &[])?;
    }
    let mut prefix: Vec<usize> = Vec::with_capacity(max_size);
    // xors[i] = xor of the values at prefix[..i].
    let mut xors: Vec<u64> = Vec::with_capacity(max_size);
    xors.push(0);
    // Values before `next` are not added to the current prefix (they come earlier in sets).
    let mut next = 0;
    let mut entered = true;
    loop {
        if entered && prefix.len() < max_size && (prefix.len() + 1) & 1 == parity {
            let xor = xors[prefix.len()];
            let slot = prefix.len();
            prefix.push(next);
            for (index, &value) in values.iter().enumerate().skip(next) {
                prefix[slot] = index;
                visit(xor ^ value, &prefix)?;
            }
            prefix.pop();
        }
        if prefix.len() + 1 < max_size && next < values.len() {
            xors.push(xors[prefix.len()] ^ values[next]);
            prefix.push(next);
            next += 1;
            entered = true;
        } else if let Some(last) = prefix.pop() {
            // Every set extending this prefix was visited: go on with the ones without `last`.
            xors.pop();
            next = last + 1;
            entered = false;
        } else {
            return ControlFlow::Continue(());
        }
    }
}

/// An echelon basis of the vectors `(1, a)` of some distinct values. The values inserted
/// independently are the *basis values*; every row records which of them it sums, so a member
/// of the span can be written as a set of values.
pub(super) struct ParityBasis {
    /// `rows[b]` has leading bit `b`, or is 0.
    rows: [u128; 65],
    /// `combos[b]`: bit `j` set if basis value `j` is in the sum `rows[b]`.
    combos: [u128; 65],
    /// Indices into the value list of the basis values, in insertion order.
    items: Vec<usize>,
}

impl ParityBasis {
    pub(super) fn of(values: &[u64]) -> Self {
        let mut basis = Self {
            rows: [0; 65],
            combos: [0; 65],
            items: Vec::new(),
        };
        for (index, &value) in values.iter().enumerate() {
            let (rest, combo) = basis.reduce(PARITY | u128::from(value));
            if rest != 0 {
                // rest = value + sum(combo), so as a sum of basis values it is combo + value.
                let lead = leading_bit(rest);
                basis.rows[lead] = rest;
                basis.combos[lead] = combo ^ (1 << basis.items.len());
                basis.items.push(index);
            }
        }
        basis
    }

    pub(super) fn rank(&self) -> u32 {
        self.items.len() as u32
    }

    /// Clears the leading bits of `vector` that lead rows: returns the remainder (0 iff
    /// `vector` is in the span) and the basis values whose sum was removed.
    pub(super) fn reduce(&self, mut vector: u128) -> (u128, u128) {
        let mut combo = 0;
        while vector != 0 {
            let lead = leading_bit(vector);
            if self.rows[lead] == 0 {
                break;
            }
            vector ^= self.rows[lead];
            combo ^= self.combos[lead];
        }
        (vector, combo)
    }

    /// The basis values summing to `vector` (bit `j` = basis value `j`), if it is in the span.
    pub(super) fn coordinates(&self, vector: u128) -> Option<u128> {
        let (rest, combo) = self.reduce(vector);
        (rest == 0).then_some(combo)
    }

    /// Indices into the value list of the basis values in `coordinates`.
    pub(super) fn members(&self, coordinates: u128) -> Vec<usize> {
        (0..self.items.len())
            .filter(|&j| coordinates >> j & 1 == 1)
            .map(|j| self.items[j])
            .collect()
    }

    /// [`Method::Span`]: the mex of the parity-`k` slice of the span (module doc), `None` if
    /// that slice is all of GF(2)^64.
    pub(super) fn span_value(&self, k: u32) -> Option<u64> {
        if k & 1 == 1 && self.coordinates(PARITY).is_none() {
            return Some(0);
        }
        (0..64).find(|&b| self.rows[b] == 0).map(|b| 1 << b)
    }
}

/// The index of the highest set bit of a non-zero vector.
pub(super) fn leading_bit(vector: u128) -> usize {
    127 - vector.leading_zeros() as usize
}

/// [`Method::ParityDp`]: the fewest values reaching each state of the span of the vectors
/// `(1, a)`, states numbered by their coordinates in a [`ParityBasis`].
pub(super) struct ParityDp {
    pub(super) basis: ParityBasis,
    /// Coordinates of each value's vector.
    generators: Vec<usize>,
    /// `fewest[state]`: the size of a smallest set of values summing to `state`.
    fewest: Vec<u8>,
}

impl ParityDp {
    /// Adds the values one at a time: a state's smallest set either avoids the new value or is
    /// a smallest set of `state ^ generator` plus it. States pair up as `(s, s ^ generator)`,
    /// updated together so each value is used at most once: `d * 2^r` state updates.
    /// Ticks `poller` once per state update, checking between generators.
    pub(super) fn run(values: &[u64], poller: &mut Poller<'_>) -> Result<Self, Cancelled> {
        let basis = ParityBasis::of(values);
        let generators: Vec<usize> = values
            .iter()
            .map(|&value| {
                let coordinates = basis.coordinates(PARITY | u128::from(value));
                coordinates.expect("every value is in the span it built") as usize
            })
            .collect();
        let states = 1usize << basis.rank();
        // u8::MAX = not reached yet; every state ends up reached with at most r <= 65 values,
        // since the generators include the basis values.
        let mut fewest = vec![u8::MAX; states];
        fewest[0] = 0;
        for &generator in &generators {
            // Each pair once: its state without the generator's leading bit, block by block.
            let lead = 1 << (usize::BITS - 1 - generator.leading_zeros());
            for block in (0..states).step_by(2 * lead) {
                for state in block..block + lead {
                    let partner = state ^ generator;
                    let (here, there) = (fewest[state], fewest[partner]);
                    fewest[state] = here.min(there.saturating_add(1));
                    fewest[partner] = there.min(here.saturating_add(1));
                }
            }
            poller.tick(states as u64 / 2)?;
        }
        Ok(Self {
            basis,
            generators,
            fewest,
        })
    }

    /// Calls `visit(xor)` for every option: the states of parity `k` (as many basis values
    /// as `k`, mod 2) reached with at most `k` values. Visits states in Gray-code order so each
    /// xor is one update away from the previous one.
    pub(super) fn for_each_option(&self, values: &[u64], k: u32, mut visit: impl FnMut(u64)) {
        let basis_values: Vec<u64> = self.basis.items.iter().map(|&i| values[i]).collect();
        let mut xor = 0;
        for step in 0..self.fewest.len() {
            if step > 0 {
                xor ^= basis_values[step.trailing_zeros() as usize];
            }
            let state = step ^ (step >> 1);
            if state.count_ones() & 1 == k & 1 && u32::from(self.fewest[state]) <= k {
                visit(xor);
            }
        }
    }

    /// Indices of a smallest set of values reaching the option `target`, walking back from its
    /// state through states one value closer to the empty set. A smallest set never uses a
    /// generator twice (the two would cancel), so the indices are distinct.
    pub(super) fn subset(&self, k: u32, target: u64) -> Option<Vec<usize>> {
        let mut state = self.basis.coordinates(option_vector(k, target))? as usize;
        if u32::from(self.fewest[state]) > k {
            return None;
        }
        let mut set = Vec::with_capacity(usize::from(self.fewest[state]));
        while state != 0 {
            let index = (0..self.generators.len())
                .find(|&i| self.fewest[state ^ self.generators[i]] + 1 == self.fewest[state])
                .expect("a smallest set without one of its values reaches a closer state");
            set.push(index);
            state ^= self.generators[index];
        }
        Some(set)
    }
}

/// Which of `0..=bound` are options. With at most `bound` options the mex is at most `bound`,
/// so larger options never matter: `bound / 8` bytes whatever the values.
pub(super) struct MexSet {
    words: Vec<u64>,
}

impl MexSet {
    pub(super) fn new(bound: u64) -> Self {
        Self {
            words: vec![0; (bound / 64 + 1) as usize],
        }
    }

    pub(super) fn insert(&mut self, value: u64) {
        if let Some(word) = self.words.get_mut((value / 64) as usize) {
            *word |= 1 << (value % 64);
        }
    }

    pub(super) fn mex(&self) -> u64 {
        let (index, word) = self
            .words
            .iter()
            .enumerate()
            .find(|&(_, &word)| word != u64::MAX)
            .expect("no more options than the bound, so one of 0..=bound is missing");
        index as u64 * 64 + u64::from(word.trailing_ones())
    }
}
