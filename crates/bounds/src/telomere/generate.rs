//! Random task sets as Section 6.1.2 of `000_ffe2fafb22bcad8e.txt` generates them:
//! UUniFast utilizations, periods from Eq. 21-22 and lifetimes from Eq. 23.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::device::{Device, MAX_TIME_NS};
use super::error::TelomereError;
use super::task::{Task, TaskSet};

/// UUniFast (Bini and Buttazzo, 2005): `n` utilizations, uniformly distributed over
/// the simplex, summing to `total`.
pub fn uunifast(n: usize, total: f64, rng: &mut impl Rng) -> Vec<f64> {
    let mut out = Vec::with_capacity(n);
    let mut sum = total;
    for i in 1..n {
        let next = sum * rng.gen::<f64>().powf(1.0 / (n - i) as f64);
        out.push(sum - next);
        sum = next;
    }
    if n > 0 {
        out.push(sum);
    }
    out
}

/// `ceil(pages / (u x bandwidth / 2))` ms (Eq. 21-22), in ns; the longest accepted
/// period for a task with (almost) no bandwidth.
fn period_ns(pages: u64, u: f64, pages_per_ms: f64) -> u64 {
    let ms = (pages as f64 / (u * pages_per_ms / 2.0)).ceil();
    if ms.is_finite() && ms * 1e6 < MAX_TIME_NS as f64 {
        (ms as u64).max(1) * 1_000_000
    } else {
        MAX_TIME_NS
    }
}

/// The most tasks [`TaskSet::generate_with`] draws: ten times Figure 8's largest
/// set. Admission is superlinear in the tasks (SharP's partitioning takes about
/// half a minute at this size), so a larger count is refused, not attempted.
pub const MAX_GENERATED_TASKS: usize = 10_000;

/// What [`TaskSet::generate_with`] draws: Section 6.1.2 of 000 with its free
/// choices made explicit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeneratorSpec {
    /// Tasks in the set (the paper: 500; Figure 8: 100 to 1,000).
    pub tasks: usize,
    /// `U^s`, the sum of the tasks' storage utilizations.
    pub storage_util: f64,
    /// `U^b`, the sum of the tasks' bandwidth utilizations.
    pub throughput_util: f64,
    /// `r_i = w_i`, pages every task reads and writes per period. `None`: one stripe
    /// over all chips, `S_chips` (the paper does not say; see [`TaskSet::generate`]).
    pub pages: Option<u64>,
    /// `g`, every task's read and write granularity. `None`: `S_chips` (Section 6.1.2:
    /// "data is striped across all flash chips"); Figure 7 varies it.
    pub granularity: Option<u32>,
    /// Seed of the ChaCha8 stream.
    pub seed: u64,
}

impl GeneratorSpec {
    /// `tasks` tasks with the given utilizations, `pages` and `g` = `S_chips`.
    pub fn new(tasks: usize, storage_util: f64, throughput_util: f64, seed: u64) -> Self {
        GeneratorSpec { tasks, storage_util, throughput_util, pages: None, granularity: None, seed }
    }
}

impl TaskSet {
    /// `n` random tasks on `device` whose storage utilizations `U_i^s` sum to
    /// `storage_util` and bandwidth utilizations `U_i^b` to `throughput_util`, drawn
    /// by UUniFast from a ChaCha8 stream seeded with `seed` (Section 6.1.2 of 000).
    ///
    /// Data is striped over all chips: `g = S_chips`. The paper does not say how many
    /// pages a task moves per period; here every task reads and writes one stripe,
    /// `r_i = w_i = g`. Then `T_i^r = ceil(r_i / (U_i^b B^R_max / 2))` and
    /// `T_i^w = ceil(w_i / (U_i^b B^W_max / 2))` in ms (Eq. 21-22; bandwidths in pages
    /// per ms, reads and writes "up to half of their respective bandwidths") and
    /// `l_i^w = ceil(U_i^s S_pages / w_i)` (Eq. 23). The drawn `U_i^s`, `U_i^b` are kept
    /// in [`Task::storage_util`] and [`Task::bandwidth_util`].
    pub fn generate(
        n: usize,
        storage_util: f64,
        throughput_util: f64,
        seed: u64,
        device: Device,
    ) -> Result<TaskSet, TelomereError> {
        Self::generate_with(&GeneratorSpec::new(n, storage_util, throughput_util, seed), device)
    }

    /// [`TaskSet::generate`] with the pages per period and the granularity chosen.
    ///
    /// UUniFast's draws scale with the total (`uunifast(n, u)` is `u` times
    /// `uunifast(n, 1)` for one seed), so sets of one seed at growing utilizations
    /// grow task by task: the sweeps of [`super::max_schedulable`] rely on it.
    pub fn generate_with(spec: &GeneratorSpec, device: Device) -> Result<TaskSet, TelomereError> {
        device.validate()?;
        let n = spec.tasks;
        if n == 0 {
            return Err(TelomereError::InvalidGenerator("the number of tasks is 0: give at least 1".into()));
        }
        if n > MAX_GENERATED_TASKS {
            return Err(TelomereError::InvalidGenerator(format!(
                "the number of tasks is {n}: give at most {MAX_GENERATED_TASKS} tasks (admission time grows \
                 faster than the set; Figure 8 of the Telomere paper uses up to 1,000)"
            )));
        }
        for (name, u) in [("storage utilization", spec.storage_util), ("throughput utilization", spec.throughput_util)]
        {
            if !(u.is_finite() && u > 0.0) {
                return Err(TelomereError::InvalidGenerator(format!(
                    "{name} is {u}: give a positive fraction, e.g. 0.5 (Section 6.1.2 uses 0.01 to 1.0)"
                )));
            }
        }
        let g = spec.granularity.unwrap_or(device.parallel_units);
        if g == 0 {
            return Err(TelomereError::InvalidGenerator("the granularity is 0: give at least 1 page".into()));
        }
        let pages = spec.pages.unwrap_or(u64::from(device.parallel_units));
        if pages == 0 {
            return Err(TelomereError::InvalidGenerator("pages per period is 0: give at least 1".into()));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(spec.seed);
        let us = uunifast(n, spec.storage_util, &mut rng);
        let ub = uunifast(n, spec.throughput_util, &mut rng);
        let per_ms = |mb_s: f64| mb_s * 1e3 / f64::from(device.page_size);
        let (read_rate, write_rate) = (per_ms(device.read_bandwidth_mb_s), per_ms(device.write_bandwidth_mb_s));
        let s_pages = device.pages() as f64;
        let width = n.to_string().len();
        let tasks = us
            .iter()
            .zip(&ub)
            .enumerate()
            .map(|(i, (&s, &b))| Task {
                name: format!("tau{i:0width$}"),
                read_period_ns: period_ns(pages, b, read_rate),
                write_period_ns: period_ns(pages, b, write_rate),
                read_pages: pages,
                write_pages: pages,
                lifetime_periods: (s * s_pages / pages as f64).ceil() as u64,
                granularity: g,
                storage_util: Some(s),
                bandwidth_util: Some(b),
            })
            .collect();
        TaskSet::new(device, tasks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uunifast_sums_to_the_total() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for n in [1, 2, 10, 500] {
            let u = uunifast(n, 0.83, &mut rng);
            assert_eq!(u.len(), n);
            assert!(u.iter().all(|&x| x >= 0.0));
            assert!((u.iter().sum::<f64>() - 0.83).abs() < 1e-12);
        }
        assert!(uunifast(0, 1.0, &mut rng).is_empty());
    }

    #[test]
    fn periods_are_whole_milliseconds() {
        // 64 pages at 0.5 of 1 page / ms / 2: ceil(256) ms.
        assert_eq!(period_ns(64, 0.5, 1.0), 256_000_000);
        assert_eq!(period_ns(64, 0.0, 1.0), MAX_TIME_NS);
    }
}
