//! Exporters of reports: one function per format (human table, JSON, CSV), and
//! where they write to.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use ftlab_sim::metrics::LatencySummary;
use ftlab_sim::{Report, RunConfig};

use ftlab_lab::flatten::{report_scalars, Cell};
use ftlab_lab::provenance::Provenance;

use crate::error::{write_err, CliError};

/// Standard output or a file, buffered.
pub struct Sink {
    name: String,
    inner: Box<dyn Write + Send>,
}

impl Sink {
    /// `path`, created or truncated, or stdout when `None`.
    pub fn open(path: Option<&Path>) -> Result<Sink, CliError> {
        Ok(match path {
            Some(p) => {
                let name = p.display().to_string();
                let file = File::create(p).map_err(write_err(&name))?;
                Sink { name, inner: Box::new(BufWriter::new(file)) }
            }
            None => Sink { name: "stdout".into(), inner: Box::new(BufWriter::new(std::io::stdout())) },
        })
    }

    /// Writes `text` and flushes.
    pub fn write(&mut self, text: &str) -> Result<(), CliError> {
        self.inner.write_all(text.as_bytes()).and_then(|()| self.inner.flush()).map_err(write_err(&self.name))
    }
}

/// Checks, before a run starts, that `path` (an `-o` file) can be written, so a
/// typo in it does not lose the run's result: its folder must exist and take
/// a new file, and an existing file must be writable (it is not truncated
/// here). The error names the path and what to fix.
pub fn check_writable(path: &Path) -> Result<(), CliError> {
    let name = format!("{} (-o)", path.display());
    let fail = |why: String| CliError::Write { what: name.clone(), error: std::io::Error::other(why) };
    if path.is_dir() {
        return Err(fail("it is a folder; give a file name".into()));
    }
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(fail(format!("the folder {} does not exist; create it or fix the path", parent.display())));
    }
    if path.exists() {
        std::fs::OpenOptions::new().append(true).open(path).map(drop).map_err(write_err(&name))
    } else {
        std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(write_err(&name))?;
        std::fs::remove_file(path).map_err(write_err(&name))
    }
}

/// Pretty JSON of anything serializable (a report, or a list of them), with a final newline.
pub fn json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, CliError> {
    serde_json::to_string_pretty(value)
        .map(|s| s + "\n")
        .map_err(|e| CliError::Failed(format!("cannot serialize the report: {e}")))
}

/// A CSV header and one row per report, of the scalar fields.
pub fn csv(reports: &[Report], provenances: &[Provenance]) -> Result<String, CliError> {
    let rows: Vec<Vec<(String, Cell)>> =
        reports.iter().zip(provenances).map(|(r, p)| csv_cells(r, p)).collect::<Result<_, _>>()?;
    // The columns of every row, in the order they first appear: FTLs differ
    // in their gauges (`ftl_gauges.*`), and a comparison's rows share one
    // header; a row without a column leaves it empty.
    // The provenance's columns come last.
    let mut header: Vec<&str> = Vec::new();
    for last in [false, true] {
        for row in &rows {
            for (name, _) in row {
                if name.starts_with("provenance.") == last && !header.contains(&name.as_str()) {
                    header.push(name);
                }
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let err = |e: csv::Error| CliError::Failed(format!("cannot write CSV: {e}"));
    w.write_record(&header).map_err(err)?;
    for row in &rows {
        let cell = |name: &str| row.iter().find(|(n, _)| n == name).map(|(_, c)| c.to_string()).unwrap_or_default();
        w.write_record(header.iter().map(|h| cell(h))).map_err(err)?;
    }
    let bytes = w.into_inner().map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| CliError::Failed(format!("cannot write CSV: {e}")))
}

/// The cells of one report's CSV row: its scalar fields, then its
/// provenance's (`provenance.config` the whole TOML, so the row reruns:
/// `ftlab rerun`).
pub fn csv_cells(report: &Report, provenance: &Provenance) -> Result<Vec<(String, Cell)>, CliError> {
    let mut cells = report_scalars(report)?;
    let more = ftlab_lab::flatten::scalars(provenance)
        .map_err(|e| CliError::Failed(format!("cannot write the provenance: {e}")))?;
    cells.extend(more.into_iter().map(|(name, cell)| (format!("provenance.{name}"), cell)));
    Ok(cells)
}

/// Columns padded to their widest cell; the first column left-aligned, the rest right.
fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> =
        (0..cols).map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c == 0 {
                line.push_str(&format!("{cell:<w$}", w = width[c]));
            } else {
                line.push_str(&format!("  {cell:>w$}", w = width[c]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn us(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn waf(r: &Report) -> String {
    r.waf.map_or_else(|| "-".into(), |w| format!("{w:.3}"))
}

fn latency_row(name: &str, l: &LatencySummary) -> Vec<String> {
    if l.count == 0 {
        return vec![format!("  {name}"), "0".into(), "-".into(), "-".into(), "-".into(), "-".into()];
    }
    vec![format!("  {name}"), l.count.to_string(), us(l.mean), us(l.p50), us(l.p99), us(l.max)]
}

/// One line on the device: its shape and raw size.
fn device_line(config: &RunConfig) -> Option<String> {
    let nand = config.device.nand_config(config.seed()).ok()?;
    let g = nand.geometry;
    let bytes = u64::from(g.total_pages()) * u64::from(g.page_size);
    Some(format!(
        "{} ch x {} ways x {} dies x {} planes x {} blocks x {} pages x {} B = {:.1} MiB raw",
        g.channels,
        g.ways_per_channel,
        g.dies_per_way,
        g.planes_per_die,
        g.blocks_per_plane,
        g.pages_per_block,
        g.page_size,
        bytes as f64 / f64::from(1u32 << 20)
    ))
}

/// The human summary of one run. `capped` notes the default request cap.
pub fn summary(r: &Report, config: &RunConfig, capped: bool) -> String {
    let mut s = format!("ftlab run: FTL {} on chip {}, workload {}, seed {}\n", r.ftl, r.chip, r.workload, r.seed);
    let mut kv = |k: &str, v: String| s.push_str(&format!("  {k:<13} {v}\n"));
    if let Some(d) = device_line(config) {
        kv("device", d);
    }
    // An FTL that maps units smaller than a flash page (`subpage`) exports
    // several logical pages per flash page.
    let per_page = (r.logical_pages as f64 / (r.space_utilization * r.physical_pages as f64)).round();
    let of = if per_page > 1.0 { format!("logical pages ({per_page} a flash page) of") } else { "of".into() };
    kv(
        "space",
        format!(
            "{} {of} {} pages exported to the host ({:.1}% utilization)",
            r.logical_pages,
            r.physical_pages,
            r.space_utilization * 100.0
        ),
    );
    if let Some(n) = config.host.logical_pages.filter(|&n| n < r.logical_pages) {
        kv(
            "",
            format!(
                "the host uses the first {n} ({:.1}% of the flash; host.logical_pages)",
                r.space_utilization * n as f64 / r.logical_pages as f64 * 100.0
            ),
        );
    }
    kv(
        "requests",
        format!(
            "{} ({} pages read, {} written, {} trimmed) in {:.3} s of simulated time",
            r.requests, r.host_pages_read, r.host_pages_written, r.host_pages_trimmed, r.sim_seconds
        ),
    );
    if r.sim_seconds > 0.0 {
        kv(
            "throughput",
            format!(
                "{:.0} IOPS, {:.1} MB/s read, {:.1} MB/s written (bytes the requests asked for)",
                r.iops, r.read_mb_per_s, r.write_mb_per_s
            ),
        );
    }
    if capped {
        kv(
            "",
            format!(
                "(stopped after {} requests, the default without a config file; set --requests)",
                crate::config::DEFAULT_MAX_REQUESTS
            ),
        );
    }
    if let Some(e) = &r.error {
        kv("error", format!("the run stopped early: {e}"));
    }
    if let Some(a) = &r.address {
        for (i, line) in a.trim_end().lines().enumerate() {
            kv(if i == 0 { "addresses" } else { "" }, line.trim().to_owned());
        }
        kv("", format!("{} malformed trace lines skipped", r.skipped_lines));
    }
    kv("WAF", waf(r));
    kv("", "write amplification: flash pages programmed per page the host wrote; 1.0 is ideal,".into());
    kv("", "the excess is garbage collection copying still-valid pages out of blocks to erase".into());
    kv("GC copies", format!("{} pages", r.gc_page_copies));
    let e = &r.erase_count;
    kv(
        "erases",
        format!(
            "{} (per block: mean {:.2}, min {}, max {}, wear index {:.4})",
            r.erases, e.mean, e.min, e.max, e.wear_index
        ),
    );
    let d = &r.die_time.per_request;
    if let (Some(service), Some(gc), Some(other), Some(idle)) = (d.service_us, d.gc_us, d.other_us, d.idle_us) {
        kv(
            "die time",
            format!("per request: service {service:.1} us, GC {gc:.1} us, other {other:.1} us, idle {idle:.1} us"),
        );
    }
    if let Some(en) = &r.energy {
        let nj = |x: Option<f64>| x.map_or_else(|| "-".into(), |v| format!("{v:.0}"));
        kv(
            "energy",
            format!(
                "{:.3} mJ; per host read {} nJ, per host write {} nJ (its programs and a share of all cleaning)",
                en.total_nj / 1e6,
                nj(en.host_read_access_nj),
                nj(en.host_write_access_nj)
            ),
        );
    }
    kv("FTL RAM", format!("{} bytes", r.ram_bytes));
    let m = &r.memory;
    kv(
        "memory",
        format!(
            "{} bytes, {:.2} per physical page: map {}, valid bitmap {}, FTL other {}, OOB {}, store {}, blocks {}, engine model {}",
            m.total_bytes,
            m.bytes_per_physical_page,
            m.map_bytes,
            m.valid_bytes,
            m.ftl_other_bytes,
            m.oob_bytes,
            m.store_bytes,
            m.blocks_bytes,
            m.engine_bytes
        ),
    );
    if let (Some(b), Some(v)) = (r.bound_us, r.bound_violations) {
        let whose = if r.ftl_bound_us == Some(b) { "the promised" } else { "the given" };
        kv(
            "guarantee",
            format!("{v} page commands above {whose} {b:.1} us (longest service {:.1} us)", r.max_service_us),
        );
        if let (Some(rb), Some(rv)) = (r.rmw_bound_us, r.rmw_bound_violations) {
            if r.rmw_pages > 0 {
                kv(
                    "",
                    format!(
                        "{rv} read-modify-writes above {rb:.1} us (a read and a write; longest {:.1} us)",
                        r.max_rmw_service_us
                    ),
                );
            }
        }
    }
    if !r.tasks.is_empty() {
        kv("deadlines", format!("{} missed", r.deadline_misses));
    }
    s.push('\n');
    let rows = vec![
        vec!["  response time (us)".into(), "count".into(), "mean".into(), "p50".into(), "p99".into(), "max".into()],
        latency_row("read", &r.read_us),
        latency_row("write", &r.write_us),
        latency_row("trim", &r.trim_us),
    ];
    s.push_str(&align(&rows));
    s.push('\n');
    if !r.flows.is_empty() {
        s.push_str(&flows(r));
        s.push('\n');
    }
    for (i, u) in r.unsupported.iter().enumerate() {
        s.push_str(&format!("  {:<13} {u}\n", if i == 0 { "not modelled" } else { "" }));
    }
    if !r.unsupported.is_empty() {
        s.push('\n');
    }
    let verdict = if r.integrity == "ok" {
        "ok (every read returned the data last written)".to_owned()
    } else {
        format!("FAILED, {} mismatches; first: {}", r.integrity_errors, r.integrity)
    };
    s.push_str(&format!("  {:<13} {verdict}\n", "integrity"));
    s
}

/// The per-flow table of a `[[flow]]` run: response times shared and alone
/// (us) and slowdowns.
fn flows(r: &Report) -> String {
    let mut rows = vec![["  flow", "priority", "qd", "requests", "mean", "p99", "alone mean", "alone p99", "slowdown"]
        .map(String::from)
        .to_vec()];
    let opt = |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |v| format!("{v:.digits$}"));
    // Without alone runs (metrics.slowdown = false) their columns go.
    let alone = r.flows.iter().any(|f| f.alone_response_us.is_some());
    if !alone {
        rows[0].truncate(6);
    }
    for f in &r.flows {
        rows.push(vec![
            format!("  {}", f.name),
            f.priority.clone(),
            f.queue_depth.to_string(),
            f.requests.to_string(),
            format!("{:.1}", f.response_us.mean),
            format!("{:.1}", f.response_us.p99),
            opt(f.alone_response_us.map(|a| a.mean), 1),
            opt(f.alone_response_us.map(|a| a.p99), 1),
            opt(f.slowdown, 3),
        ]);
        if let (false, Some(row)) = (alone, rows.last_mut()) {
            row.truncate(6);
        }
    }
    let mut s = align(&rows);
    if let Some(fair) = r.fairness {
        s.push_str(&format!("  fairness (smallest slowdown / largest): {fair:.3}\n"));
    }
    // What a request asked that ftlab serves in whole pages, per flow.
    for f in &r.flows {
        let mut parts = Vec::new();
        if f.unaligned_requests > 0 {
            parts.push(format!(
                "{} of {} requests not page-aligned (served as the whole pages they touch)",
                f.unaligned_requests, f.requests
            ));
        }
        if f.partial_page_writes > 0 {
            parts.push(format!("{} pages written in part (each a read-modify-write)", f.partial_page_writes));
        }
        if f.unwritten_page_reads > 0 {
            parts.push(format!("{} page reads of data never written (read as zeroes)", f.unwritten_page_reads));
        }
        if !parts.is_empty() {
            s.push_str(&format!("  {}: {}\n", f.name, parts.join("; ")));
        }
    }
    s
}

/// The human table of `ftlab compare`: one row per FTL.
/// One FTL's logical space in a comparison ([`SharedSpace`]), as shares of
/// the flash's bytes.
#[derive(Debug, Clone)]
pub struct FtlSpace {
    pub kind: String,
    /// The logical space it exports.
    pub exported: f64,
    /// The logical space the host used (`host.logical_pages`).
    pub used: f64,
}

/// The logical space every FTL of a comparison kept its data in.
#[derive(Debug, Clone)]
pub struct SharedSpace {
    /// Bytes of it.
    pub bytes: u64,
    /// The FTL whose space it is, the one exporting least (`None`: the
    /// configuration's `host.logical_pages`).
    pub set_by: Option<String>,
    pub per_ftl: Vec<FtlSpace>,
}

/// A warning for each run in which a block was erased more often than the
/// chip's rated cycles (`rated[i]` for `reports[i]`).
pub fn wear_warnings(reports: &[Report], rated: &[u32]) -> Vec<String> {
    reports
        .iter()
        .zip(rated)
        .filter(|(r, &cycles)| r.erase_count.max > cycles)
        .map(|(r, &cycles)| {
            format!(
                "{}: a block was erased {} times, past the chip's rated {cycles} cycles (device.wear.endurance_cycles): \
                 the run wore that block out, so its later figures describe flash beyond its rated life; run fewer \
                 requests or give a chip rated for more",
                r.ftl, r.erase_count.max
            )
        })
        .collect()
}

pub fn comparison(reports: &[Report], capped: bool, space: Option<&SharedSpace>, warnings: &[String]) -> String {
    let mut s = String::new();
    if let Some(r) = reports.first() {
        s.push_str(&format!("workload {} on chip {}, seed {}, {} requests", r.workload, r.chip, r.seed, r.requests));
        if capped {
            s.push_str(" (the default cap; set --requests)");
        }
        s.push('\n');
    }
    match space {
        Some(sp) => {
            let share = sp.per_ftl.first().map_or(0.0, |f| f.used);
            let whose = match &sp.set_by {
                Some(k) => format!("the space {k} exports, the smallest"),
                None => "host.logical_pages".into(),
            };
            let larger: Vec<String> = sp
                .per_ftl
                .iter()
                .filter(|f| f.used < f.exported)
                .map(|f| format!("{} {:.1}%", f.kind, 100.0 * f.exported))
                .collect();
            s.push_str(&format!(
                "every FTL keeps its data in the same {} of logical space, {:.1}% of the flash ({whose}), so WAF \
                 compares the schemes at equal spare space",
                bytes(sp.bytes),
                share * 100.0
            ));
            if !larger.is_empty() {
                s.push_str(&format!("; the rest of what {} export stays unused", larger.join(", ")));
            }
            s.push_str(" (--own-space runs each on all it exports)\n");
        }
        None => s.push_str(
            "each FTL runs on all the logical space it exports (--own-space): the util column differs, and WAF \
             measures spare space as much as the scheme\n",
        ),
    }
    s.push('\n');
    let mut rows = vec![[
        "ftl",
        "WAF",
        "write mean",
        "write p99",
        "write max",
        "read mean",
        "read p99",
        "erases",
        "GC copies",
        "util %",
        "integrity",
    ]
    .map(String::from)
    .to_vec()];
    let lat = |v: f64, l: &LatencySummary| if l.count == 0 { "-".into() } else { us(v) };
    for r in reports {
        rows.push(vec![
            r.ftl.clone(),
            waf(r),
            lat(r.write_us.mean, &r.write_us),
            lat(r.write_us.p99, &r.write_us),
            lat(r.write_us.max, &r.write_us),
            lat(r.read_us.mean, &r.read_us),
            lat(r.read_us.p99, &r.read_us),
            r.erases.to_string(),
            r.gc_page_copies.to_string(),
            {
                // The share of the flash the host's data can fill.
                let used = space.and_then(|sp| sp.per_ftl.iter().find(|f| f.kind == r.ftl));
                format!("{:.1}", used.map_or(r.space_utilization, |f| f.used) * 100.0)
            },
            match (&r.error, r.integrity == "ok") {
                (Some(_), _) => "stopped by an error".into(),
                (None, true) => "ok".into(),
                (None, false) => "FAILED".into(),
            },
        ]);
    }
    s.push_str(&align(&rows));
    s.push_str("\nResponse times in microseconds. WAF = flash pages programmed / host pages written\n");
    s.push_str(
        "(1.0 is ideal; the excess is garbage-collection copies). util = the logical space the host used / the\n",
    );
    s.push_str("physical space.\n");
    for w in warnings {
        s.push_str(&format!("warning: {w}\n"));
    }
    s
}

/// `n` bytes in the largest binary unit that keeps a whole number.
fn bytes(n: u64) -> String {
    let units = [("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (name, size) in units {
        if n >= size {
            return format!("{:.1} {name}", n as f64 / size as f64);
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn csv_has_flattened_scalars_and_no_arrays() {
        let prov = Provenance {
            command: "run".into(),
            ftlab: "0".into(),
            git_revision: None,
            config: "[device]\nchip = \"small-slc\"\n".into(),
            cwd: None,
            stamp: None,
        };
        let mut gauged = Report::default();
        gauged.ftl_gauges.insert("cmt_hits".into(), 3.0);
        let text = csv(&[Report::default(), gauged], &[prov.clone(), prov]).unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert!(header.starts_with("ftl,chip,workload,seed,"), "{header}");
        assert!(
            header.contains(",waf,") && header.contains(",read_us.p99,") && header.contains("flash_ops.programs.gc")
        );
        let array = |c: &str| c.starts_with("throughput") || c == "tasks" || c.starts_with("tasks.") || c == "rber_cdf";
        assert!(!header.split(',').any(array), "{header}");
        assert!(header.contains(",tasks_refused,"), "{header}");
        // One header for rows of FTLs with different gauges: the first row
        // leaves the second's gauge empty.
        assert!(header.contains(",ftl_gauges.cmt_hits") && header.ends_with(",provenance.config"), "{header}");
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        let gauge = header.split(',').position(|h| h == "ftl_gauges.cmt_hits").unwrap();
        assert_eq!((&rows[0][gauge], &rows[1][gauge]), ("", "3.0"));
        assert_eq!(rows[1].iter().next_back().unwrap(), "[device]\nchip = \"small-slc\"\n");
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn columns_align() {
        let t = align(&[vec!["a".into(), "1".into()], vec!["long".into(), "100".into()]]);
        assert_eq!(t, "a       1\nlong  100\n");
    }
}
