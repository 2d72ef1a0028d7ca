//! [`table`]: the bounds of every scheme as a readable text table.

use std::fmt::Write as _;

use crate::Bounds;

/// One row: the columns every scheme has, then its own parameters.
struct Row {
    scheme: &'static str,
    read: f64,
    write: f64,
    response: f64,
    period: Option<f64>,
    utilization: Option<f64>,
    params: String,
}

fn time(t: f64) -> String {
    format!("{t:.1}")
}

fn opt<T>(x: Option<T>, f: impl Fn(T) -> String) -> String {
    x.map(f).unwrap_or_else(|| "-".to_owned())
}

fn rows(b: &Bounds) -> [Row; 6] {
    let (i, f, g, r, l, o) = (&b.ideal, &b.fsr, &b.gftl, &b.rftl, &b.lazy_rtgc, &b.lazy_rtgc_ondemand);
    [
        Row {
            scheme: "ideal",
            read: i.max_read_us,
            write: i.max_write_us,
            response: i.max_response_us,
            period: i.min_request_period_us,
            utilization: Some(i.space_utilization),
            params: format!("U(lambda)={}", i.u_lambda),
        },
        Row {
            scheme: "fsr",
            read: f.max_read_us,
            write: f.max_write_us,
            response: f.max_response_us,
            period: f.min_request_period_us,
            utilization: f.space_utilization,
            params: format!(
                "sigma={} U(lambda)={}",
                opt(f.sigma, |s| format!("{s}")),
                opt(f.lambda_max, |x| x.to_string())
            ),
        },
        Row {
            scheme: "gftl",
            read: g.max_read_us,
            write: g.max_write_us,
            response: g.max_response_us,
            period: g.min_request_period_us,
            utilization: Some(g.space_utilization),
            params: format!(
                "kappa={} (002: alpha={} beta={} kappa={}) extra={:.2}% L={} extra_blocks={}",
                g.kappa,
                g.steps.alpha,
                g.steps.beta,
                g.steps.kappa,
                g.extra_block_fraction * 100.0,
                opt(g.write_queue_length, |x| x.to_string()),
                opt(g.extra_blocks, |x| x.to_string())
            ),
        },
        Row {
            scheme: "rftl",
            read: r.max_read_us,
            write: r.max_write_us,
            response: r.max_response_us,
            period: r.min_request_period_us,
            utilization: Some(r.space_utilization),
            params: format!("U(lambda)={}", r.u_lambda),
        },
        Row {
            scheme: "lazy_rtgc",
            read: l.max_read_us,
            write: l.max_write_us,
            response: l.max_response_us,
            period: l.min_request_period_us,
            utilization: Some(l.space_utilization),
            params: format!(
                "alpha={} U(lambda)={} N(V_G)={} k={} rho_th={}",
                l.alpha, l.u_lambda, l.gc_tasks, l.k, l.rho_th
            ),
        },
        Row {
            scheme: "lazy_rtgc_ondemand",
            read: o.max_read_us,
            write: o.max_write_us,
            response: o.max_response_us,
            period: o.min_request_period_us,
            utilization: Some(o.space_utilization),
            params: format!(
                "alpha={} sigma_t={} lambda_t={} lambda_d={} k_d={} k_t={} TW={}",
                o.alpha, o.sigma_t, o.lambda_t, o.lambda_d, o.k_d, o.k_t, o.writeback_tasks
            ),
        },
    ]
}

/// The bounds as a text table: one row per scheme; times in microseconds, space
/// utilization in percent ("N/A" where the scheme has no bound, "-" where the paper
/// defines no value).
///
/// ```
/// use ftlab_bounds::{all_schemes, table, ChipParams};
/// let chip = ChipParams::new(25.0, 200.0, 25.0, 2000.0, 64).unwrap();
/// let text = table(&all_schemes(&chip).unwrap());
/// assert!(text.lines().any(|l| l.starts_with("lazy_rtgc ") && l.contains("87.50%")));
/// ```
pub fn table(bounds: &Bounds) -> String {
    const HEADER: [&str; 7] = ["scheme", "U(e_r) us", "U(e_w) us", "U(R_T) us", "L(p) us", "U(sigma)", "parameters"];
    let cells: Vec<[String; 7]> = rows(bounds)
        .into_iter()
        .map(|r| {
            [
                r.scheme.to_owned(),
                time(r.read),
                time(r.write),
                time(r.response),
                opt(r.period, time),
                r.utilization.map_or_else(|| "N/A".to_owned(), |u| format!("{:.2}%", u * 100.0)),
                r.params,
            ]
        })
        .collect();
    let mut width = HEADER.map(str::len);
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    let mut out = String::new();
    let mut line = |cols: &[&str]| {
        let mut text = String::new();
        for (k, (c, w)) in cols.iter().zip(width).enumerate() {
            let _ = match k {
                0 => write!(text, "{c:<w$}"),
                6 => write!(text, "  {c}"),
                _ => write!(text, "  {c:>w$}"),
            };
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&HEADER);
    for row in &cells {
        line(&row.each_ref().map(String::as_str));
    }
    out
}
