//! The RBER wear model of 000_ffe2fafb22bcad8e.txt Section 6.2, Eq. 27:
//! `log10 W_b = x_b + y_b * log10 E(b)`, where `E(b)` is block b's program/erase
//! count normalised to the rated endurance and `x_b`, `y_b` are per-block
//! parameters. The paper takes them from a large-scale characterisation it does not
//! print; ftlab draws them per block from normal distributions whose defaults put a
//! typical block at RBER 2.5e-3 at its rated endurance (E = 1) and at the 1e-2
//! retirement threshold near E = 1.7, with a spread between blocks so that wear
//! leveling schemes can be told apart. All four parameters are configurable.

use rand::Rng;
use rand_distr::{Distribution, Normal};
use serde::{Deserialize, Serialize};

use crate::geometry::BlockId;

/// Distributions of the per-block parameters of Eq. 27.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WearConfig {
    /// Mean of `x_b` (log10 of the RBER at E = 1). Default -2.6.
    pub x_mean: f64,
    /// Standard deviation of `x_b`. Default 0.15.
    pub x_std: f64,
    /// Mean of `y_b` (slope in log-log space). Default 2.5.
    pub y_mean: f64,
    /// Standard deviation of `y_b`. Default 0.25.
    pub y_std: f64,
    /// Rated program/erase cycles a block is specified for (normalises E). Default 3000.
    pub endurance_cycles: u32,
    /// RBER at which a block is retired (000 Section 6.2: 1e-2).
    pub retirement_rber: f64,
}

impl Default for WearConfig {
    fn default() -> Self {
        WearConfig {
            x_mean: -2.6,
            x_std: 0.15,
            y_mean: 2.5,
            y_std: 0.25,
            endurance_cycles: 3000,
            retirement_rber: 1e-2,
        }
    }
}

impl WearConfig {
    /// Checks the parameters; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.x_std >= 0.0 && self.x_std.is_finite()) {
            return Err(format!("wear.x_std must be a finite number >= 0, got {}", self.x_std));
        }
        if !(self.y_std >= 0.0 && self.y_std.is_finite()) {
            return Err(format!("wear.y_std must be a finite number >= 0, got {}", self.y_std));
        }
        if !self.x_mean.is_finite() || !self.y_mean.is_finite() {
            return Err("wear.x_mean and wear.y_mean must be finite numbers".into());
        }
        if self.endurance_cycles == 0 {
            return Err("wear.endurance_cycles must be at least 1".into());
        }
        if !(self.retirement_rber > 0.0 && self.retirement_rber < 1.0) {
            return Err(format!("wear.retirement_rber must be in (0, 1), got {}", self.retirement_rber));
        }
        Ok(())
    }
}

/// Per-block parameters of Eq. 27.
#[derive(Debug, Clone)]
pub struct WearModel {
    x: Vec<f32>,
    y: Vec<f32>,
    endurance: f64,
    retirement_rber: f64,
}

impl WearModel {
    /// RAM of the per-block parameters, in bytes (allocated capacity).
    pub fn ram_bytes(&self) -> u64 {
        ((self.x.capacity() + self.y.capacity()) * std::mem::size_of::<f32>()) as u64
    }

    /// Draws `x_b` and `y_b` for `blocks` blocks. `config` must have been validated.
    pub fn new(config: &WearConfig, blocks: u32, rng: &mut impl Rng) -> Self {
        let nx = Normal::new(config.x_mean, config.x_std).unwrap_or_else(|_| unreachable_normal());
        let ny = Normal::new(config.y_mean, config.y_std).unwrap_or_else(|_| unreachable_normal());
        let mut x = Vec::with_capacity(blocks as usize);
        let mut y = Vec::with_capacity(blocks as usize);
        for _ in 0..blocks {
            x.push(nx.sample(rng) as f32);
            y.push(ny.sample(rng) as f32);
        }
        WearModel { x, y, endurance: f64::from(config.endurance_cycles), retirement_rber: config.retirement_rber }
    }

    /// The parameters `(x_b, y_b)` of `block` (a device image keeps them).
    pub(crate) fn params(&self, block: BlockId) -> (f32, f32) {
        (self.x[block.0 as usize], self.y[block.0 as usize])
    }

    /// Sets the parameters of `block` (a device image restores them).
    pub(crate) fn set_params(&mut self, block: BlockId, x: f32, y: f32) {
        self.x[block.0 as usize] = x;
        self.y[block.0 as usize] = y;
    }

    /// RBER of `block` after `erase_count` program/erase cycles (Eq. 27). A block
    /// never erased has RBER 0.
    pub fn rber(&self, block: BlockId, erase_count: u32) -> f64 {
        if erase_count == 0 {
            return 0.0;
        }
        let e = f64::from(erase_count) / self.endurance;
        let i = block.0 as usize;
        10f64.powf(f64::from(self.x[i]) + f64::from(self.y[i]) * e.log10())
    }

    /// Whether `block` has reached the retirement threshold.
    pub fn is_worn_out(&self, block: BlockId, erase_count: u32) -> bool {
        self.rber(block, erase_count) >= self.retirement_rber
    }

    /// The fewest erases after which `block` is worn out ([`WearModel::is_worn_out`]
    /// holds from then on), `u32::MAX` if it never is (a slope `y_b <= 0` below the
    /// threshold). Eq. 27 solved for `E`, then checked against `is_worn_out` so
    /// that rounding never disagrees with it.
    pub fn retirement_cycles(&self, block: BlockId) -> u32 {
        let i = block.0 as usize;
        let (x, y) = (f64::from(self.x[i]), f64::from(self.y[i]));
        if y <= 0.0 {
            // RBER does not grow with wear: worn from the first erase or never.
            return if self.is_worn_out(block, 1) { 1 } else { u32::MAX };
        }
        let e = self.endurance * 10f64.powf((self.retirement_rber.log10() - x) / y);
        if e.is_nan() || e >= f64::from(u32::MAX) {
            return u32::MAX;
        }
        let mut c = (e.ceil() as u32).max(1);
        while c > 1 && self.is_worn_out(block, c - 1) {
            c -= 1;
        }
        while c < u32::MAX && !self.is_worn_out(block, c) {
            c += 1;
        }
        c
    }
}

/// `Normal::new` only fails on a negative or non-finite deviation, which
/// `WearConfig::validate` refuses; fall back to a degenerate distribution.
fn unreachable_normal() -> Normal<f64> {
    Normal::new(0.0, 0.0).unwrap_or_else(|_| unreachable!("N(0, 0) is a valid distribution"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn rber_follows_the_log_log_model() {
        let cfg = WearConfig { x_std: 0.0, y_std: 0.0, ..WearConfig::default() };
        let m = WearModel::new(&cfg, 2, &mut ChaCha8Rng::seed_from_u64(1));
        // At E = 1 the RBER is 10^x.
        let at_rated = m.rber(BlockId(0), 3000);
        assert!((at_rated - 10f64.powf(-2.6)).abs() < 1e-6, "{at_rated}");
        // Ten times the cycles multiplies RBER by 10^y.
        let ratio = m.rber(BlockId(1), 3000) / m.rber(BlockId(1), 300);
        assert!((ratio - 10f64.powf(2.5)).abs() / ratio < 1e-3, "{ratio}");
        assert_eq!(m.rber(BlockId(0), 0), 0.0);
        assert!(!m.is_worn_out(BlockId(0), 3000));
        assert!(m.is_worn_out(BlockId(0), 6000));
    }

    #[test]
    fn retirement_cycles_is_the_first_worn_out_erase_count() {
        let cfg = WearConfig { endurance_cycles: 20, ..WearConfig::default() };
        let m = WearModel::new(&cfg, 200, &mut ChaCha8Rng::seed_from_u64(3));
        let mut distinct = std::collections::BTreeSet::new();
        for b in (0..200).map(BlockId) {
            let c = m.retirement_cycles(b);
            assert!(m.is_worn_out(b, c) && !m.is_worn_out(b, c - 1), "block {b:?}: {c}");
            distinct.insert(c);
        }
        // Typical block: 10^((-2 + 2.6) / 2.5) x 20 = 34.8 cycles.
        assert!(distinct.len() > 5 && distinct.contains(&35), "{distinct:?}");
        let flat = WearModel::new(&WearConfig { y_mean: 0.0, y_std: 0.0, ..cfg }, 1, &mut ChaCha8Rng::seed_from_u64(3));
        assert_eq!(flat.retirement_cycles(BlockId(0)), u32::MAX);
    }

    #[test]
    fn blocks_differ_and_draws_are_seeded() {
        let cfg = WearConfig::default();
        let a = WearModel::new(&cfg, 100, &mut ChaCha8Rng::seed_from_u64(9));
        let b = WearModel::new(&cfg, 100, &mut ChaCha8Rng::seed_from_u64(9));
        assert_eq!(a.x, b.x);
        assert!(a.x.iter().any(|&v| v != a.x[0]));
    }

    #[test]
    fn validate_names_the_field() {
        let cfg = WearConfig { y_std: -1.0, ..WearConfig::default() };
        assert!(cfg.validate().unwrap_err().contains("y_std"));
    }
}
