//! Depositing ranks into squares: given a set of ranks among the set bits of a mask (the
//! compressed positions unranking produces), the squares they stand for. This is the PDEP
//! instruction; where it is fast it replaces a byte-table walk per piece, which was a third
//! of the instructions of deindexing a 6-piece position.

/// Turns a set of ranks among `mask`'s set bits into the squares holding them.
pub(super) trait Deposit: Copy {
    /// The squares of `mask` whose ranks (0-based, counted from square 0) are the set bits of
    /// `ranks`; every rank must be below `mask.count_ones()`.
    fn deposit(self, ranks: u32, mask: u32) -> u32;
}

/// `SELECT_IN_BYTE[b][n]`: position of the `n`-th set bit of byte `b` (8 when absent).
const fn build_select_in_byte() -> [[u8; 8]; 256] {
    let mut t = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut n = 0;
        let mut bit = 0;
        while bit < 8 {
            if b & (1 << bit) != 0 {
                t[b][n] = bit as u8;
                n += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    t
}

static SELECT_IN_BYTE: [[u8; 8]; 256] = build_select_in_byte();

/// Square of the `n`-th (0-based) set bit of `mask`, which must have more than `n` bits.
/// Branch-free byte choice, then a table lookup.
#[inline(always)]
pub(super) fn select(mask: u32, n: u32) -> u32 {
    let c0 = (mask & 0xFF).count_ones();
    let c1 = c0 + (mask & 0xFF00).count_ones();
    let c2 = c1 + (mask & 0xFF_0000).count_ones();
    let byte = (n >= c0) as u32 + (n >= c1) as u32 + (n >= c2) as u32;
    let before = [0, c0, c1, c2][byte as usize];
    let b = (mask >> (8 * byte)) & 0xFF;
    8 * byte + SELECT_IN_BYTE[b as usize][(n - before) as usize & 7] as u32
}

/// Portable: one [`select`] per rank.
#[derive(Clone, Copy, Debug)]
pub(super) struct ByteTables;

impl Deposit for ByteTables {
    #[inline(always)]
    fn deposit(self, ranks: u32, mask: u32) -> u32 {
        let mut squares = 0;
        let mut rest = ranks;
        while rest != 0 {
            squares |= 1 << select(mask, rest.trailing_zeros());
            rest &= rest - 1;
        }
        squares
    }
}

/// The PDEP instruction. A value exists only where [`Pdep::detect`] found the instruction
/// fast, which is what makes calling it sound.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub(super) struct Pdep(());

#[cfg(target_arch = "x86_64")]
impl Pdep {
    /// `Some` when the processor has BMI2 and runs PDEP in hardware. AMD processors before
    /// Zen 3 (family 0x19) and Hygon ones have BMI2 but run PDEP in microcode, tens of
    /// times slower than the byte tables, so they keep the tables.
    pub(super) fn detect() -> Option<Pdep> {
        use std::sync::atomic::{AtomicU8, Ordering};
        static FOUND: AtomicU8 = AtomicU8::new(0); // 0: not looked yet, 1: no, 2: yes
        match FOUND.load(Ordering::Relaxed) {
            2 => return Some(Pdep(())),
            1 => return None,
            _ => {}
        }
        let fast = std::arch::is_x86_feature_detected!("bmi2") && !microcoded_pdep();
        FOUND.store(if fast { 2 } else { 1 }, Ordering::Relaxed);
        fast.then_some(Pdep(()))
    }
}

/// Whether this is an AMD processor older than Zen 3, or a Hygon one (Zen 1 inside).
#[cfg(target_arch = "x86_64")]
fn microcoded_pdep() -> bool {
    use std::arch::x86_64::__cpuid;
    #[allow(unused_unsafe)] // `__cpuid` is safe in newer compilers
    let (vendor, signature) = unsafe { (__cpuid(0), __cpuid(1)) };
    let vendor = (vendor.ebx, vendor.edx, vendor.ecx);
    if vendor == (0x6F67_7948, 0x6E65_476E, 0x656E_6975) {
        return true; // "HygonGenuine"
    }
    let amd = vendor == (0x6874_7541, 0x6974_6E65, 0x444D_4163); // "AuthenticAMD"
    let base = (signature.eax >> 8) & 0xF;
    let family = if base == 0xF {
        base + ((signature.eax >> 20) & 0xFF)
    } else {
        base
    };
    amd && family < 0x19
}

#[cfg(target_arch = "x86_64")]
impl Deposit for Pdep {
    #[inline(always)]
    fn deposit(self, ranks: u32, mask: u32) -> u32 {
        // SAFETY: a `Pdep` exists only where `detect` found BMI2.
        unsafe { std::arch::x86_64::_pdep_u32(ranks, mask) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::XorShift;

    #[test]
    fn select_finds_each_set_bit() {
        let mask = 0b1011_0110_1110_0001_0000_1111_0110_1101u32;
        for n in 0..mask.count_ones() {
            let s = select(mask, n);
            assert!(mask & (1 << s) != 0);
            assert_eq!((mask & ((1 << s) - 1)).count_ones(), n);
        }
    }

    #[test]
    #[cfg(target_arch = "x86_64")]
    fn pdep_agrees_with_the_byte_tables() {
        let Some(pdep) = Pdep::detect() else {
            eprintln!("no fast PDEP on this processor: nothing to compare");
            return;
        };
        let mut rng = XorShift::new(7);
        for _ in 0..100_000 {
            let mask = rng.next() as u32;
            let ranks = rng.next() as u32 & ((1u64 << mask.count_ones()) - 1) as u32;
            assert_eq!(
                pdep.deposit(ranks, mask),
                ByteTables.deposit(ranks, mask),
                "ranks {ranks:#x} in mask {mask:#x}"
            );
        }
    }
}
