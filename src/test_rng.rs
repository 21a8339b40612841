//! The unit tests' source of random inputs: Marsaglia's xorshift64 (shifts 13, 7, 17),
//! seeded, so that every run of a test sees the same inputs, without a dependency. (The
//! property tests draw their inputs from proptest; these are the plain loops over many
//! generated cases.)

/// A seeded xorshift64 generator.
pub(crate) struct Xorshift(u64);

impl Xorshift {
    /// A generator started at `seed` (made odd: the state must never be zero).
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The next value below `bound` (not exactly uniform; these tests need variety, not
    /// statistics).
    pub(crate) fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

#[cfg(test)]
mod tests {
    use super::Xorshift;

    #[test]
    fn the_same_seed_gives_the_same_words_and_zero_is_not_stuck() {
        let words = |seed| {
            let mut rng = Xorshift::new(seed);
            (0..4).map(|_| rng.next_u64()).collect::<Vec<_>>()
        };
        assert_eq!(words(7), words(7));
        assert_ne!(words(7), words(9));
        assert!(words(0).iter().all(|&word| word != 0));
        let mut rng = Xorshift::new(3);
        assert!((0..1000).all(|_| rng.below(10) < 10));
    }
}
