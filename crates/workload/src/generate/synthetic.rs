//! The four address patterns: sequential, uniform, Zipf, hot/cold.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

use super::dist::{Clock, SizeSampler};
use crate::{HostRequest, Op};

/// Where a request starts, in pages.
#[derive(Debug, Clone)]
pub(crate) enum Placement {
    /// Back to back from page 0, wrapping to 0 when the next request would not
    /// fit; with a `stride`, starts `stride` pages apart, each pass one page
    /// after the one before (`GeneratorSpec::Sequential`).
    Sequential { next: u64, pass: u64, stride: Option<u64> },
    /// Any page, equally likely.
    Uniform,
    /// Page `k - 1` with the probability of rank `k`: page 0 is the most popular and
    /// popularity falls with the address.
    Zipf(Zipf<f64>),
    /// With probability `access`, a uniform page of the hot region `[0, hot_pages)`;
    /// otherwise a uniform page of the cold region `[hot_pages, N)`.
    HotCold { access: f64, hot_pages: u64 },
}

/// A seeded stream of `remaining` requests over `pages` pages.
#[derive(Debug, Clone)]
pub(crate) struct Synthetic {
    pub(crate) rng: ChaCha8Rng,
    pub(crate) placement: Placement,
    pub(crate) pages: u64,
    pub(crate) page_size: u64,
    pub(crate) remaining: u64,
    pub(crate) read_fraction: f64,
    pub(crate) size: SizeSampler,
    pub(crate) clock: Clock,
}

impl Iterator for Synthetic {
    type Item = HostRequest;

    fn next(&mut self) -> Option<HostRequest> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        // Draw order (size, start, op, arrival) is part of the determinism contract.
        let len = u64::from(self.size.sample(&mut self.rng)).min(self.pages);
        let rng = &mut self.rng;
        let start = match &mut self.placement {
            Placement::Sequential { next, pass, stride } => {
                let s = if *next + len <= self.pages {
                    *next
                } else {
                    // The next pass, or back to the first.
                    *pass = match *stride {
                        Some(k) if *pass + 1 < k && *pass + 1 + len <= self.pages => *pass + 1,
                        _ => 0,
                    };
                    *pass
                };
                *next = s + stride.unwrap_or(len);
                s
            }
            Placement::Uniform => rng.gen_range(0..self.pages),
            Placement::Zipf(z) => {
                // Ranks are 1..=pages as integral floats.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let rank = z.sample(rng) as u64;
                rank.saturating_sub(1)
            }
            Placement::HotCold { access, hot_pages } => {
                if rng.gen::<f64>() < *access {
                    rng.gen_range(0..*hot_pages)
                } else {
                    rng.gen_range(*hot_pages..self.pages)
                }
            }
        };
        let start = start.min(self.pages - len);
        let op = if self.rng.gen::<f64>() < self.read_fraction { Op::Read } else { Op::Write };
        Some(HostRequest {
            arrival_ns: self.clock.tick(&mut self.rng),
            op,
            offset: start * self.page_size,
            // Validated: max size * page size fits in u32.
            len: u32::try_from(len * self.page_size).unwrap_or(u32::MAX),
            device: 0,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}
