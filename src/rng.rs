//! A small deterministic generator (Marsaglia's xorshift64) for sampling positions and
//! shuffling: the same seed draws the same sample on every machine, which makes a sampled
//! check or benchmark repeatable.

/// xorshift64 with shifts 13, 7, 17.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (0, a fixed point of the generator, is taken as 1).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.max(1))
    }

    /// The next value (the state after one step).
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A value in `0..n` (`n` > 0; the modulo bias is negligible for sampling).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn is_marsaglias_xorshift64() {
        let mut r = super::XorShift::new(1);
        assert_eq!(r.next(), 1082269761);
        assert_ne!(super::XorShift::new(0).next(), 0);
    }
}
