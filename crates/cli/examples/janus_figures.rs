//! Janus-FTL's Figures 5, 8 and 9 (004), beyond what a sweep plots: CSV and SVG.
//!
//! ```text
//! cargo run --release -p ftlab-cli --example janus_figures -- figure8 experiments/janus/figure8.toml
//! cargo run --release -p ftlab-cli --example janus_figures -- figure5 experiments/janus/figure5.toml [U_D ...]
//! cargo run --release -p ftlab-cli --example janus_figures -- figure9 experiments/janus/figure9.toml
//! ```
//!
//! - `figure8 RUN.toml`: runs the configuration (a `phases` generator, an FTL
//!   with gauges) and its prefixes ending at each phase's end; writes
//!   `figure8.csv` (per interval: time, phase, the FTL's gauges),
//!   `figure8-phases.csv` (per phase: its end, the gauges there, the mean
//!   fused blocks over the phase's second half) and `figure8.svg` beside the
//!   configuration.
//! - `figure5 RUN.toml [U_D ...]`: for each PMA utilization `u_d` (default
//!   0.5 to 0.95), runs the configuration (`janus-fix`, a `hotcold` generator)
//!   with `ftl.utilization = u_d` and its hot region set to the target number
//!   of fused blocks, so that the fused blocks are exactly those written; writes
//!   `figure5.csv` (u_d set and measured, the victims' measured utilization u
//!   over the run's second half, u from Eq. 5) and `figure5.svg`.
//! - `figure9 RUN.toml`: runs the configuration once per FTL of [`FIGURE9`]
//!   (`ftl.kind` set, and `ftl.map_persistence = "flash"` for the hybrid
//!   schemes) and splits each run's flash time by purpose: map, GC and data
//!   (host) time, each the sum over the run's operations of that purpose of
//!   the chip's latency (read, program, erase; a copyback is a read and a
//!   program; channel transfers left out); writes `figure9.csv` and a stacked
//!   bar chart `figure9.svg`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use ftlab_bounds::janus::victim_utilization as eq5_u;
use ftlab_lab::figure::{Axis, Figure, Line};
use ftlab_lab::janus::{phase_reports, victim_point};
use ftlab_lab::overlay::{load_file, to_config};
use ftlab_sim::config::RunConfig;
use ftlab_sim::Report;

/// Draws `lines` at `path` (SVG, PNG or PDF by its extension), with vertical
/// rules at `rules`.
fn chart(path: &Path, title: &str, x: Axis, y: Axis, lines: Vec<Line>, rules: &[f64]) -> Result<()> {
    let id = ftlab_lab::sweep_plot::id_of(path);
    Figure::lines(&id, x, y, lines).title(Some(title.into())).rules(rules.to_vec()).write(path)?;
    Ok(())
}

fn load(path: &Path) -> Result<RunConfig> {
    Ok(to_config(load_file(path)?, &path.display().to_string())?)
}

fn gauge<'a>(r: &'a Report, name: &str) -> Result<&'a [f64]> {
    r.throughput.gauges.get(name).map(Vec::as_slice).with_context(|| format!("the FTL has no gauge `{name}`"))
}

/// The mean of `v` over `[a, b)`, clamped to its length.
fn mean(v: &[f64], a: usize, b: usize) -> f64 {
    let s = &v[a.min(v.len())..b.min(v.len())];
    if s.is_empty() {
        f64::NAN
    } else {
        s.iter().sum::<f64>() / s.len() as f64
    }
}

fn figure8(path: &Path) -> Result<()> {
    let config = load(path)?;
    let reports = phase_reports(&config)?;
    let full = reports.last().context("no phase")?;
    let step = full.throughput.interval_s;
    let ends: Vec<f64> = reports.iter().map(|r| r.sim_seconds).collect();
    let names = ["fused_blocks", "target_fused_blocks", "optimum_fused_blocks", "pma_utilization", "ghost_hit_rate"];
    let series: Vec<&[f64]> = names.iter().map(|n| gauge(full, n)).collect::<Result<_>>()?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let phase_of = |t: f64| ends.iter().position(|&e| t < e).unwrap_or(ends.len() - 1);
    let mut csv = format!("time_s,phase,{}\n", names.join(","));
    for i in 0..series[0].len() {
        let t = (i + 1) as f64 * step;
        let cells: Vec<String> = series.iter().map(|s| format!("{}", s[i])).collect();
        csv += &format!("{t},{},{}\n", phase_of(t) + 1, cells.join(","));
    }
    std::fs::write(dir.join("figure8.csv"), csv)?;
    let mut sum = String::from("phase,end_s,requests_to_end,fused_blocks_at_end,target_fused_blocks_at_end,mean_fused_blocks_second_half,pma_utilization_at_end,ghost_hit_rate_at_end\n");
    let mut start = 0.0;
    for (k, r) in reports.iter().enumerate() {
        let g = |n: &str| r.ftl_gauges.get(n).copied().unwrap_or(f64::NAN);
        let mid = ((start + r.sim_seconds) / 2.0 / step) as usize;
        let end = (r.sim_seconds / step) as usize;
        sum += &format!(
            "{},{},{},{},{},{:.1},{:.4},{:.4}\n",
            k + 1,
            r.sim_seconds,
            r.requests,
            g("fused_blocks"),
            g("target_fused_blocks"),
            mean(series[0], mid, end),
            g("pma_utilization"),
            g("ghost_hit_rate")
        );
        start = r.sim_seconds;
    }
    std::fs::write(dir.join("figure8-phases.csv"), &sum)?;
    print!("{sum}");
    let line = |k: usize, name: &str| Line {
        name: name.into(),
        points: series[k].iter().enumerate().map(|(i, &y)| ((i + 1) as f64 * step, y)).collect(),
        markers_only: false,
    };
    chart(
        &dir.join("figure8.svg"),
        &format!("{} during PostMark-like phases (004 Figure 8)", full.ftl),
        Axis::new("Simulated time; rules: phase ends", Some("s")),
        Axis::new("Logical blocks", Some("blocks")),
        vec![line(0, "fused blocks"), line(1, "target")],
        &ends[..ends.len() - 1],
    )
}

fn figure5(path: &Path, points: &[f64]) -> Result<()> {
    let table = load_file(path)?;
    let origin = path.display().to_string();
    let mut rows = String::from("u_d,fused_blocks,hot_fraction,u_d_measured,u_measured,u_eq5,victims\n");
    let (mut measured, mut model) = (Vec::new(), Vec::new());
    for &u_d in points {
        let p = victim_point(&table, &origin, u_d)?;
        rows += &format!(
            "{u_d},{},{:.5},{:.4},{:.4},{:.4},{}\n",
            p.fused_blocks, p.hot_fraction, p.u_d_measured, p.u, p.u_eq5, p.victims
        );
        measured.push((p.u_d_measured, p.u));
    }
    for i in 0..=90 {
        let u_d = 0.05 + 0.01 * f64::from(i);
        model.push((u_d, eq5_u(u_d)));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::write(dir.join("figure5.csv"), &rows)?;
    print!("{rows}");
    chart(
        &dir.join("figure5.svg"),
        "GC victims' utilization u against PMA utilization u_d (004 Figure 5)",
        Axis::new("PMA utilization u_d", None),
        Axis::new("Victim utilization u", None),
        vec![
            Line { name: "Eq. 5".into(), points: model, markers_only: false },
            Line {
                name: "measured (janus-fix, uniform random over the fused blocks)".into(),
                points: measured,
                markers_only: true,
            },
        ],
        &[],
    )
}

/// Figure 9's FTLs: label, `ftl.kind`, and whether to set
/// `ftl.map_persistence = "flash"` (the page-mapped FTL with its map on flash
/// is DFTL, whose translation pages are map operations already).
const FIGURE9: [(&str, &str, bool); 5] = [
    ("PPM (dftl)", "dftl", false),
    ("BAST", "bast", true),
    ("FAST", "fast", true),
    ("Janus", "janus", true),
    // The ablation of PPM's map: ppm-ftl's whole page map in RAM, no map I/O.
    ("PPM (ppm-ftl; map in RAM)", "ppm-ftl", false),
];

/// Seconds of flash time of purpose `p` in `r`, at `t`'s latencies.
fn purpose_seconds(r: &Report, t: &ftlab_nand::Timing, p: ftlab_ftl::Purpose) -> f64 {
    let o = &r.flash_ops;
    let ns = o.reads.get(p) * t.read_ns
        + o.oob_reads.get(p) * t.read_oob_ns
        + o.programs.get(p) * t.program_ns
        + o.erases.get(p) * t.erase_ns;
    ns as f64 / 1e9
}

/// Stacked bars at `path`: one per `(label, [values])`, segments named by `parts`.
fn stacked(path: &Path, title: &str, y: Axis, parts: &[&str], bars: &[(String, Vec<f64>)]) -> Result<()> {
    let id = ftlab_lab::sweep_plot::id_of(path);
    let values = bars.iter().map(|(_, v)| v.iter().copied().map(Some).collect()).collect();
    Figure::bars(
        &id,
        Axis::new("FTL", None),
        y,
        bars.iter().map(|(l, _)| l.clone()).collect(),
        parts.iter().map(|p| (*p).to_owned()).collect(),
        values,
    )
    .title(Some(title.into()))
    .legend(Some("Purpose".into()))
    .stacked_or_steps(true)
    .write(path)?;
    Ok(())
}

fn figure9(path: &Path) -> Result<()> {
    use ftlab_ftl::Purpose;
    let table = load_file(path)?;
    let origin = path.display().to_string();
    let mut rows = String::from(
        "ftl,ftl.kind,map_persistence,requests,host_pages_written,map_reads,map_programs,map_erases,gc_page_copies,gc_erases,map_s,gc_s,data_s,total_s,overhead_s\n",
    );
    let mut bars = Vec::new();
    for (label, kind, flash) in FIGURE9 {
        let mut t = table.clone();
        let ftl = t.entry("ftl").or_insert_with(|| toml::Value::Table(toml::Table::new()));
        let ftl = ftl.as_table_mut().context("[ftl] is not a table")?;
        ftl.insert("kind".into(), kind.into());
        if flash {
            ftl.insert("map_persistence".into(), "flash".into());
        }
        let config = to_config(t, &origin)?;
        let r = ftlab_sim::run(&config, &mut |_| {})?;
        let chip = ftlab_nand::presets::preset(&r.chip).with_context(|| format!("no chip preset `{}`", r.chip))?;
        let timing = chip.timing;
        let (map, gc, data) = (
            purpose_seconds(&r, &timing, Purpose::Map),
            purpose_seconds(&r, &timing, Purpose::Gc),
            purpose_seconds(&r, &timing, Purpose::Host),
        );
        let o = &r.flash_ops;
        rows += &format!(
            "{label},{kind},{},{},{},{},{},{},{},{},{map:.3},{gc:.3},{data:.3},{:.3},{:.3}\n",
            if flash {
                "flash"
            } else if kind == "dftl" {
                "(translation pages)"
            } else {
                "(ram)"
            },
            r.requests,
            o.programs.get(Purpose::Host),
            o.reads.get(Purpose::Map),
            o.programs.get(Purpose::Map),
            o.erases.get(Purpose::Map),
            o.programs.get(Purpose::Gc),
            o.erases.get(Purpose::Gc),
            map + gc + data,
            map + gc,
        );
        bars.push((label.to_string(), vec![data, gc, map]));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::write(dir.join("figure9.csv"), &rows)?;
    print!("{rows}");
    stacked(
        &dir.join("figure9.svg"),
        "Flash time by purpose, maps on flash, 10% over-provisioning (004 Figure 9)",
        Axis::new("Flash time", Some("s")),
        &["data time", "GC time", "map time"],
        &bars,
    )
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("figure8") if args.len() == 2 => figure8(&PathBuf::from(&args[1])),
        Some("figure5") if args.len() >= 2 => {
            let points: Vec<f64> = if args.len() > 2 {
                args[2..].iter().map(|a| a.parse().with_context(|| format!("u_d `{a}`"))).collect::<Result<_>>()?
            } else {
                vec![0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95]
            };
            figure5(&PathBuf::from(&args[1]), &points)
        }
        Some("figure9") if args.len() == 2 => figure9(&PathBuf::from(&args[1])),
        _ => bail!("usage: janus_figures figure8 RUN.toml | figure5 RUN.toml [U_D ...] | figure9 RUN.toml"),
    }
}
