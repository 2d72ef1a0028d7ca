//! Faults the medium injects: program failures, erase failures and the grown bad
//! blocks they leave, alongside power cuts.
//!
//! A fault strikes by a countdown (the Nth program or erase fails) or by a seeded
//! rate (each program or erase fails with a probability). The draws come from the
//! medium's seed on a stream of their own, so turning faults on changes neither the
//! factory-bad blocks nor the wear parameters, and with every rate 0 no draw is made
//! at all: a run without faults is the same run, byte for byte, as before faults
//! existed.
//!
//! What a fault does, as on real NAND:
//! - a failed program leaves its page unusable (it reads as uncorrectable) and the
//!   block grown-bad: no further program is accepted on it, and no erase; the pages
//!   programmed before the failure still read, so their data can be moved off;
//! - a failed erase leaves the block grown-bad with nothing readable on it;
//! - the failed operation still takes its time on the die and channel.
//!
//! A power cut treats a failed operation like any other: one that had not started
//! by the cut never happened (the block is as it was), one under way or finished
//! stays failed.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The faults a medium injects. The default injects none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Faults {
    /// Probability that a program (or the program half of a copyback) fails, in
    /// [0, 1). Default 0: programs never fail.
    pub program_fail_rate: f64,
    /// Probability that an erase fails, in [0, 1). Default 0: erases never fail.
    pub erase_fail_rate: f64,
    /// The program, counted from 1 since the medium was formatted, that fails; 0
    /// (the default) for none.
    pub fail_program: u64,
    /// The erase, counted from 1 since the medium was formatted, that fails; 0 (the
    /// default) for none.
    pub fail_erase: u64,
}

impl Faults {
    /// Whether no fault is configured (the default).
    pub fn is_none(&self) -> bool {
        *self == Faults::default()
    }

    /// Checks the rates; the message names the key and the range.
    pub fn validate(&self) -> Result<(), String> {
        for (key, rate) in [("program_fail_rate", self.program_fail_rate), ("erase_fail_rate", self.erase_fail_rate)] {
            if !(0.0..1.0).contains(&rate) {
                return Err(format!(
                    "faults.{key} must be in [0, 1) (a probability per operation; 0 injects none), got {rate}"
                ));
            }
        }
        Ok(())
    }
}

/// Which operation a fault strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Program,
    Erase,
}

/// The medium's fault state: the countdowns still armed and the RNG of the rates.
#[derive(Debug, Clone)]
pub(crate) struct Injector {
    rates: [f64; 2],
    /// Operations left until the armed one, per [`Op`] (the one at 1 fails).
    countdown: [Option<u64>; 2],
    /// Created on the first draw only, so a medium without rates never seeds it.
    rng: Option<ChaCha8Rng>,
    seed: u64,
    /// Whether any countdown or rate is set: the check every program and erase
    /// makes is one branch when none is.
    live: bool,
}

impl Injector {
    /// The injector of `faults` on a medium seeded with `seed`.
    pub(crate) fn new(faults: &Faults, seed: u64) -> Self {
        let armed = |n: u64| (n > 0).then_some(n);
        let mut injector = Injector {
            rates: [faults.program_fail_rate, faults.erase_fail_rate],
            countdown: [armed(faults.fail_program), armed(faults.fail_erase)],
            rng: None,
            seed,
            live: false,
        };
        injector.relive();
        injector
    }

    fn relive(&mut self) {
        self.live = self.countdown.iter().any(Option::is_some) || self.rates.iter().any(|&r| r > 0.0);
    }

    /// Arms a countdown: the `n`th `op` from now fails (1: the next one). 0 disarms.
    pub(crate) fn arm(&mut self, op: Op, n: u64) {
        self.countdown[op as usize] = (n > 0).then_some(n);
        self.relive();
    }

    /// Whether the `op` about to be carried out fails. Counts the operation down,
    /// and draws only when `op`'s rate is not 0.
    #[inline(always)]
    pub(crate) fn strikes(&mut self, op: Op) -> bool {
        self.live && self.strikes_armed(op)
    }

    #[cold]
    #[inline(never)]
    fn strikes_armed(&mut self, op: Op) -> bool {
        let i = op as usize;
        let counted = match self.countdown[i] {
            Some(1) => {
                self.countdown[i] = None;
                self.relive();
                true
            }
            Some(n) => {
                self.countdown[i] = Some(n - 1);
                false
            }
            None => false,
        };
        let rate = self.rates[i];
        if rate <= 0.0 {
            return counted;
        }
        let seed = self.seed;
        let rng = self.rng.get_or_insert_with(|| {
            let mut r = ChaCha8Rng::seed_from_u64(seed);
            // A stream of its own: the medium's other draws stay as they were.
            r.set_stream(FAULT_STREAM);
            r
        });
        let drawn = rng.gen_bool(rate);
        counted || drawn
    }
}

/// The ChaCha stream the fault draws use (the medium's other draws use stream 0).
const FAULT_STREAM: u64 = 0xfa17;
