//! Request-size and inter-arrival distributions shared by every generator.

use rand::distributions::{Distribution, WeightedIndex};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Exp1;
use serde::{Deserialize, Serialize};

use crate::TraceError;

/// Request size, in pages of the device.
///
/// TOML: `size = { kind = "fixed", pages = 1 }`, `{ kind = "uniform", min = 1, max = 8 }`
/// or `{ kind = "discrete", choices = [[1, 0.7], [8, 0.3]] }` (pages, weight).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SizeDist {
    /// Always `pages`.
    Fixed {
        /// Pages per request, > 0.
        pages: u32,
    },
    /// Uniform over `min..=max` pages.
    Uniform {
        /// Smallest size, > 0.
        min: u32,
        /// Largest size, >= min.
        max: u32,
    },
    /// `pages` with probability proportional to `weight`.
    Discrete {
        /// (pages, weight) pairs; pages > 0, weights >= 0 with a positive sum.
        choices: Vec<(u32, f64)>,
    },
}

impl Default for SizeDist {
    /// One page.
    fn default() -> Self {
        SizeDist::Fixed { pages: 1 }
    }
}

impl SizeDist {
    /// Always `pages` pages.
    pub fn fixed(pages: u32) -> Self {
        SizeDist::Fixed { pages }
    }

    /// Uniform over `min..=max` pages.
    pub fn uniform(min: u32, max: u32) -> Self {
        SizeDist::Uniform { min, max }
    }

    /// From (pages, weight) pairs.
    pub fn discrete(choices: Vec<(u32, f64)>) -> Self {
        SizeDist::Discrete { choices }
    }

    /// Checks the parameters; `what` names the field in messages.
    pub fn validate(&self, what: &str) -> Result<(), TraceError> {
        let err = |m: String| Err(TraceError::InvalidSpec(format!("{what}: {m}")));
        match self {
            SizeDist::Fixed { pages: 0 } => err("fixed pages must be > 0, got 0".into()),
            SizeDist::Fixed { .. } => Ok(()),
            SizeDist::Uniform { min, max } if *min == 0 || min > max => {
                err(format!("uniform sizes need 0 < min <= max, got min {min}, max {max}"))
            }
            SizeDist::Uniform { .. } => Ok(()),
            SizeDist::Discrete { choices } => {
                if choices.is_empty() {
                    return err("discrete choices must not be empty".into());
                }
                if let Some((p, w)) = choices.iter().find(|(p, w)| *p == 0 || !w.is_finite() || *w < 0.0) {
                    return err(format!("discrete choices need pages > 0 and finite weights >= 0, got ({p}, {w})"));
                }
                if choices.iter().map(|c| c.1).sum::<f64>() <= 0.0 {
                    return err("discrete weights must not all be 0".into());
                }
                Ok(())
            }
        }
    }

    /// The largest size it can produce, in pages.
    pub fn max_pages(&self) -> u32 {
        match self {
            SizeDist::Fixed { pages } => *pages,
            SizeDist::Uniform { max, .. } => *max,
            SizeDist::Discrete { choices } => choices.iter().map(|c| c.0).max().unwrap_or(0),
        }
    }

    /// A sampler; call [`validate`](Self::validate) first.
    pub(crate) fn sampler(&self) -> Result<SizeSampler, TraceError> {
        Ok(match self {
            SizeDist::Fixed { pages } => SizeSampler::Fixed(*pages),
            SizeDist::Uniform { min, max } => SizeSampler::Uniform(*min, *max),
            SizeDist::Discrete { choices } => SizeSampler::Discrete {
                pages: choices.iter().map(|c| c.0).collect(),
                index: WeightedIndex::new(choices.iter().map(|c| c.1))
                    .map_err(|e| TraceError::InvalidSpec(format!("discrete sizes: {e}")))?,
            },
        })
    }
}

/// Draws request sizes.
#[derive(Debug, Clone)]
pub(crate) enum SizeSampler {
    Fixed(u32),
    Uniform(u32, u32),
    Discrete { pages: Vec<u32>, index: WeightedIndex<f64> },
}

impl SizeSampler {
    pub(crate) fn sample(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            SizeSampler::Fixed(p) => *p,
            SizeSampler::Uniform(lo, hi) => rng.gen_range(*lo..=*hi),
            SizeSampler::Discrete { pages, index } => pages[index.sample(rng)],
        }
    }
}

/// When requests arrive.
///
/// TOML: `arrival = { kind = "closed" }`, `{ kind = "fixed", interval_ns = 100000 }` or
/// `{ kind = "exponential", mean_ns = 100000.0 }`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Arrival {
    /// Closed loop: every request has arrival 0 and the simulator issues them as fast
    /// as its queue depth allows. The default.
    #[default]
    Closed,
    /// Open loop, one request every `interval_ns`, the first at 0.
    Fixed {
        /// Gap between arrivals, ns.
        interval_ns: u64,
    },
    /// Open loop, Poisson arrivals: exponential gaps of mean `mean_ns`, the first at 0.
    Exponential {
        /// Mean gap, ns, > 0.
        mean_ns: f64,
    },
}

impl Arrival {
    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), TraceError> {
        match self {
            Arrival::Exponential { mean_ns } if !(mean_ns.is_finite() && *mean_ns > 0.0) => {
                Err(TraceError::InvalidSpec(format!("arrival mean_ns must be > 0, got {mean_ns}")))
            }
            _ => Ok(()),
        }
    }
}

/// Hands out arrival times.
#[derive(Debug, Clone)]
pub(crate) struct Clock {
    arrival: Arrival,
    now: u64,
}

impl Clock {
    pub(crate) fn new(arrival: Arrival) -> Self {
        Clock { arrival, now: 0 }
    }

    /// The next request's arrival.
    pub(crate) fn tick(&mut self, rng: &mut ChaCha8Rng) -> u64 {
        let t = self.now;
        let gap = match self.arrival {
            Arrival::Closed => 0,
            Arrival::Fixed { interval_ns } => interval_ns,
            Arrival::Exponential { mean_ns } => {
                let x: f64 = Exp1.sample(rng);
                // Non-negative and far below u64::MAX for any sane mean; `as` saturates.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let gap = (x * mean_ns).round() as u64;
                gap
            }
        };
        self.now = self.now.saturating_add(gap);
        t
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn validation_messages() {
        let msg = |d: SizeDist| d.validate("size").unwrap_err().to_string();
        assert!(msg(SizeDist::fixed(0)).contains("size: fixed pages must be > 0"));
        assert!(msg(SizeDist::uniform(4, 2)).contains("min 4, max 2"));
        assert!(msg(SizeDist::discrete(vec![])).contains("empty"));
        assert!(msg(SizeDist::discrete(vec![(1, -1.0)])).contains("(1, -1)"));
        assert!(msg(SizeDist::discrete(vec![(1, 0.0)])).contains("all be 0"));
        assert!(SizeDist::discrete(vec![(1, 0.0), (8, 2.0)]).validate("size").is_ok());
        let e = Arrival::Exponential { mean_ns: 0.0 }.validate().unwrap_err();
        assert!(e.to_string().contains("mean_ns must be > 0, got 0"));
    }

    #[test]
    fn samplers_stay_in_range_and_follow_weights() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let u = SizeDist::uniform(2, 5).sampler().unwrap();
        let mut seen = [0u32; 6];
        for _ in 0..4000 {
            seen[u.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(seen[..2], [0, 0]);
        assert!(seen[2..].iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        let d = SizeDist::discrete(vec![(1, 3.0), (8, 1.0), (64, 0.0)]).sampler().unwrap();
        let ones = (0..10_000).filter(|_| d.sample(&mut rng) == 1).count();
        assert!((7200..7800).contains(&ones), "{ones}");
        assert!((0..1000).all(|_| d.sample(&mut rng) != 64));
    }

    #[test]
    fn clocks() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut c = Clock::new(Arrival::Fixed { interval_ns: 10 });
        assert_eq!((0..3).map(|_| c.tick(&mut rng)).collect::<Vec<_>>(), vec![0, 10, 20]);
        let mut c = Clock::new(Arrival::Closed);
        assert_eq!(c.tick(&mut rng) + c.tick(&mut rng), 0);
        let mut c = Clock::new(Arrival::Exponential { mean_ns: 1000.0 });
        let last = (0..20_001).map(|_| c.tick(&mut rng)).last().unwrap();
        let mean = last as f64 / 20_000.0;
        assert!((950.0..1050.0).contains(&mean), "{mean}");
    }
}
