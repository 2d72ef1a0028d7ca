//! `ftlab mqsim`: MQSim's `ssdconfig.xml` and `workload.xml` imported
//! ([`ftlab_lab::mqsim`]) and run, one run a scenario, each flow alone too.

use std::path::Path;

use ftlab_lab::mqsim::{import, Options, Scenario};

use crate::cli::MqsimArgs;
use crate::error::{write_err, CliError};
use crate::output::{self, Sink};
use crate::progress::Bar;

pub const MQSIM_AFTER_HELP: &str = "\
Each IO_Scenario of the workload file is one run: its flows share the device
(the logical space split into one part a flow, as MQSim does), and the report
gives each flow's response times. With --slowdown each flow also runs alone
on a fresh device (one more run a flow, side by side on the machine's cores;
their wall time is printed), and the report gives its response times alone
and its slowdown (shared mean / alone mean).

The device becomes ftlab's page map with the mqsim garbage-collection model
(ftl.gc_model = \"mqsim\"), MQSim's write cache, its cached mapping table
(Ideal_Mapping_Table=false), its transaction scheduler (reads wait in their
chip's queue, by priority class, until the chip and its channel are idle:
host.dispatch = \"per-die-priority\" or \"per-die-edf\"), its two-plane
pairing, and its channel's sector transfers. Every MQSim setting or behaviour
ftlab does not model, or models otherwise (suspension, FLIN, wear leveling,
the pages it programs out of order in a block, the requests it loses, ...),
is printed to stderr and kept in the report's `unsupported` list; see
experiments/mqsim-compare/README.md.

MQSim's default device is 512 GiB and its flows run for 10 s of simulated
time: --blocks-per-plane and --requests make a quick run. --out-dir DIR writes
scenario-N.toml (an `ftlab run` config) and scenario-N.json beside it.";

/// `ftlab mqsim`.
pub fn run(args: &MqsimArgs) -> Result<(), CliError> {
    let options = Options {
        blocks_per_plane: args.blocks_per_plane,
        precondition_fill: args.precondition_fill,
        slowdown: args.slowdown,
    };
    let mut scenarios = import(&args.ssd, &args.workload, &options)?;
    if let Some(n) = args.scenario {
        if n == 0 || n > scenarios.len() {
            return Err(CliError::Usage(format!(
                "--scenario {n}: {} has scenarios 1 to {}",
                args.workload.display(),
                scenarios.len()
            )));
        }
        scenarios = vec![scenarios.swap_remove(n - 1)];
    }
    if args.requests == Some(0) {
        return Err(CliError::Usage("--requests 0 runs nothing: give at least 1".into()));
    }
    for s in &mut scenarios {
        if let Some(n) = args.requests {
            for f in &mut s.config.flows {
                f.workload.max_requests = Some(f.workload.max_requests.map_or(n, |m| m.min(n)));
            }
            s.config.unsupported.push(format!(
                "Stop_Time, Total_Requests_To_Generate and the traces' lengths capped at {n} requests a flow (--requests)"
            ));
        }
        for u in &s.config.unsupported {
            eprintln!("warning: scenario {}: not modelled: {u}", s.index);
        }
        ftlab_sim::validate(&s.config).map_err(|e| CliError::sim(format!("scenario {}: ", s.index), e))?;
    }
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir).map_err(write_err(&dir.display().to_string()))?;
        for s in &scenarios {
            write_file(&dir.join(format!("scenario-{}.toml", s.index)), &toml_of(s)?)?;
        }
    }
    if args.no_run {
        if args.out_dir.is_none() {
            let text: Result<Vec<String>, CliError> = scenarios.iter().map(toml_of).collect();
            Sink::open(args.output.out.as_deref())?.write(&text?.join("\n"))?;
        }
        return Ok(());
    }
    let mut reports = Vec::new();
    let mut stopped = None;
    let clock = crate::provenance::Clock::start();
    for s in &scenarios {
        let bar = Bar::new(args.output.quiet, None, "requests");
        let result = crate::simulate(&s.config, &bar, &format!("scenario {}: ", s.index));
        bar.finish();
        let (report, error) = result?;
        if let Some(dir) = &args.out_dir {
            let with = crate::provenance::WithProvenance {
                report: &report,
                provenance: crate::provenance::of("mqsim", &s.config, None)?,
            };
            write_file(&dir.join(format!("scenario-{}.json", s.index)), &output::json(&with)?)?;
        }
        stopped = stopped.or(error);
        reports.push(report);
    }
    let configs: Vec<_> = scenarios.iter().map(|s| s.config.clone()).collect();
    crate::write_reports(&reports, &configs, "mqsim", &clock, &args.output, || {
        scenarios
            .iter()
            .zip(&reports)
            .map(|(s, r)| format!("scenario {}\n{}", s.index, output::summary(r, &s.config, false)))
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    stopped.map_or_else(|| crate::check_integrity(&reports), Err)
}

/// Scenario `s` as an `ftlab run` config.
fn toml_of(s: &Scenario) -> Result<String, CliError> {
    let body = toml::to_string_pretty(&s.config)
        .map_err(|e| CliError::Failed(format!("cannot write scenario {} as TOML: {e}", s.index)))?;
    Ok(format!("# Scenario {} of an MQSim workload, imported by `ftlab mqsim`.\n{body}", s.index))
}

fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    Sink::open(Some(path))?.write(text)
}
