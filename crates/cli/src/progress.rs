//! A progress bar on stderr that appears only once a run has taken a second, and
//! never when stderr is not a terminal or with `--quiet`. Clones share one bar,
//! so parallel runs can all advance it.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use ftlab_sim::{Progress, RunConfig};
use ftlab_workload::GeneratorSpec;

/// Shown after this long.
const DELAY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone)]
pub struct Bar {
    bar: ProgressBar,
    start: Instant,
    enabled: bool,
    shown: Arc<AtomicBool>,
    unit: String,
    /// Whether the length was given up front; if not, the runs' own
    /// expectations ([`Progress::expected`]) add up to it as they start.
    sized: bool,
    learned: Arc<AtomicU64>,
}

impl Bar {
    /// A bar counting `unit` up to `len` (a spinner with a rate when unknown).
    pub fn new(quiet: bool, len: Option<u64>, unit: &str) -> Bar {
        let enabled = !quiet && std::io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::hidden());
        let b = Bar {
            bar,
            start: Instant::now(),
            enabled,
            shown: Arc::new(AtomicBool::new(false)),
            unit: unit.to_owned(),
            sized: len.is_some(),
            learned: Arc::new(AtomicU64::new(0)),
        };
        b.style(len.is_some());
        b
    }

    /// The bar's look: with an ETA once its length is known, else a spinner
    /// with the rate.
    fn style(&self, sized: bool) {
        let unit = &self.unit;
        let template = if sized {
            format!("{{spinner}} {{human_pos}}/{{human_len}} {unit} ({{rate}}, ETA {{eta}}) {{msg}}")
        } else {
            format!("{{spinner}} {{human_pos}} {unit} ({{rate}}) {{msg}}")
        };
        if let Ok(style) = ProgressStyle::with_template(&template) {
            self.bar.set_style(style.with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.0}/s", s.per_sec());
            }));
        }
    }

    /// A run that expected `old` requests now expects `new` (a first
    /// expectation, or a compressed trace's estimate as it goes): the bar's
    /// length follows (when it was not given up front), and it shows an ETA.
    fn learn(&self, old: u64, new: u64) {
        if self.sized || old == new {
            return;
        }
        let now = if new > old {
            self.learned.fetch_add(new - old, Ordering::Relaxed) + (new - old)
        } else {
            self.learned.fetch_sub(old - new, Ordering::Relaxed).saturating_sub(old - new)
        };
        if old == 0 {
            self.style(true);
        }
        self.bar.set_length(now);
    }

    fn reveal(&self) {
        if self.enabled
            && self.start.elapsed() >= DELAY
            && self.shown.compare_exchange(false, true, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
            self.bar.enable_steady_tick(Duration::from_millis(200));
        }
    }

    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        self.reveal();
    }

    pub fn set_message(&self, msg: impl Into<std::borrow::Cow<'static, str>>) {
        self.bar.set_message(msg);
    }

    /// Prints `line` above the bar (or plainly when there is none).
    pub fn println(&self, line: &str) {
        if self.shown.load(Ordering::Relaxed) {
            self.bar.println(line);
        } else {
            eprintln!("{line}");
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A callback for [`ftlab_sim::run`] advancing this bar by the requests dispatched.
    pub fn tracker(&self) -> impl FnMut(Progress) + '_ {
        let mut last = 0;
        let mut measuring = None;
        let mut expected = 0;
        move |p: Progress| {
            if let Some(n) = p.expected {
                self.learn(expected, n);
                expected = n;
            }
            self.inc(p.requests.saturating_sub(last));
            last = p.requests;
            if measuring != Some(p.measuring) {
                measuring = Some(p.measuring);
                self.set_message(if p.measuring { "" } else { "preconditioning" });
            }
        }
    }
}

/// The requests a run will dispatch, when that is known before it starts
/// without building its device: a generated workload of fixed length without
/// preconditioning. Otherwise the run tells the bar once it has started
/// (preconditioning and uncompressed traces: [`Progress::expected`]).
pub fn expected_requests(config: &RunConfig) -> Option<u64> {
    let pre = &config.precondition;
    if pre.fill || pre.random_overwrites > 0.0 || !config.flows.is_empty() {
        return None;
    }
    let generated = generated_requests(config);
    match (generated, config.workload.max_requests) {
        (Some(g), Some(m)) => Some(g.min(m)),
        (Some(g), None) => Some(g),
        _ => None,
    }
}

/// The requests the workload's generator issues, when a field fixes them.
pub fn generated_requests(config: &RunConfig) -> Option<u64> {
    let w = &config.workload;
    if w.trace.is_some() || !w.tasks.is_empty() {
        return None;
    }
    let spec = match (&w.generator, &w.preset) {
        (Some(g), _) => Some(g.clone()),
        (None, p) => GeneratorSpec::preset(p.as_deref().unwrap_or("skewed-random-write")),
    };
    spec.and_then(|s| s.requests())
}
