//! `ftlab janus-model`: the cost model of Janus-FTL (004 Section 4, Eq. 1-5,
//! [`ftlab_bounds::janus`]) over a hit-rate curve: the average write cost at each
//! number of fused blocks and the optimum.

use ftlab_bounds::janus::{optimal_fused, pma_utilization, victim_utilization, write_cost_at, JanusCosts};

use crate::cli::JanusModelArgs;
use crate::error::CliError;
use crate::output::Sink;

/// The hit-rate curve: read from a file (one rate per line, for 0, 1, 2, ...
/// fused blocks; the last one holds beyond), a uniformly random workload, or a
/// strongly local one, `r(n) = 1 - exp(-n / L)`.
fn curve(args: &JanusModelArgs, data_blocks: u32) -> Result<Vec<f64>, CliError> {
    if let Some(path) = &args.hit_rates {
        let text = std::fs::read_to_string(path).map_err(|error| CliError::Read { path: path.clone(), error })?;
        let mut v = if text.trim_start().starts_with('{') {
            report_curve(&text, path)?
        } else {
            let mut v = Vec::new();
            for (i, line) in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).enumerate() {
                v.push(line.parse().map_err(|_| {
                    CliError::Usage(format!("{}: line {}: `{line}` is not a hit rate", path.display(), i + 1))
                })?);
            }
            v
        };
        if let Some(r) = v.iter().find(|r| !(0.0..=1.0).contains(*r)) {
            return Err(CliError::Usage(format!("{}: hit rate {r} is outside [0, 1]", path.display())));
        }
        let last = v.last().copied().unwrap_or(0.0);
        v.resize(data_blocks as usize + 1, last);
        return Ok(v);
    }
    Ok((0..=data_blocks)
        .map(|n| match args.locality {
            Some(l) => 1.0 - (-f64::from(n) / l).exp(),
            None => f64::from(n) / f64::from(data_blocks),
        })
        .collect())
}

/// The ghost-buffer curve of an `ftlab run` report (JSON) of Janus-FTL:
/// `ftl_curves.ghost_hit_rates`.
fn report_curve(text: &str, path: &std::path::Path) -> Result<Vec<f64>, CliError> {
    let json: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| CliError::Usage(format!("{}: not a JSON report of `ftlab run`: {e}", path.display())))?;
    let curve = json["ftl_curves"]["ghost_hit_rates"].as_array().ok_or_else(|| {
        CliError::Usage(format!(
            "{}: the report has no ghost-buffer curve (ftl_curves.ghost_hit_rates): it comes from `ftlab run -f json` \
             of ftl.kind = \"janus\" once its adaptation has decided at least once (every ftl.adaptation_period writes)",
            path.display()
        ))
    })?;
    curve
        .iter()
        .map(|r| {
            r.as_f64().ok_or_else(|| {
                CliError::Usage(format!("{}: ftl_curves.ghost_hit_rates holds `{r}`, not a number", path.display()))
            })
        })
        .collect()
}

/// Runs `ftlab janus-model`.
pub fn run(args: &JanusModelArgs) -> Result<(), CliError> {
    if args.over_provisioned >= args.blocks {
        return Err(CliError::Usage(format!(
            "--over-provisioned ({}) must be below --blocks ({})",
            args.over_provisioned, args.blocks
        )));
    }
    if args.locality.is_some_and(|l| l <= 0.0) {
        return Err(CliError::Usage("--locality must be positive".into()));
    }
    if args.pages_per_block == 0 {
        return Err(CliError::Usage("--pages-per-block must be at least 1".into()));
    }
    let costs = JanusCosts {
        pages_per_block: args.pages_per_block,
        erase_ns: args.erase_us * 1e3,
        copy_ns: args.copy_us * 1e3,
        program_ns: args.program_us * 1e3,
    };
    let n_d = args.blocks - args.over_provisioned;
    let rates = curve(args, n_d)?;
    let (best, best_cost) = optimal_fused(&costs, args.over_provisioned, n_d, |n| rates[n as usize]);
    let mut s = String::from("fused  u_d     u       hit_rate  avg_write_us\n");
    let step = (n_d / 20).max(1);
    let mut points: Vec<u32> = (0..=n_d).step_by(step as usize).collect();
    points.push(n_d);
    points.push(best);
    points.sort_unstable();
    points.dedup();
    for n in points {
        let u_d = pma_utilization(args.over_provisioned, n);
        let cost = write_cost_at(&costs, args.over_provisioned, n, rates[n as usize]) / 1e3;
        let mark = if n == best { "  <- optimum" } else { "" };
        s += &format!(
            "{n:<6} {u_d:<7.4} {:<7.4} {:<9.4} {cost:>12.1}{mark}\n",
            victim_utilization(u_d),
            rates[n as usize]
        );
    }
    s += &format!(
        "\noptimum: {best} fused blocks (u_d = {:.4}), average write cost {:.1} us\n",
        pma_utilization(args.over_provisioned, best),
        best_cost / 1e3
    );
    Sink::open(None)?.write(&s)
}
