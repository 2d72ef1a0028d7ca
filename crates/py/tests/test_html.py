"""The HTML report: self-contained, its plots in the DOM, rendered by headless
Chromium without a network request when Chromium is installed."""

import re
import shutil
import urllib.parse
import subprocess

import pytest

import ftlab

PLOTS = ("latency-cdf", "throughput", "flash-ops", "erase-counts")


@pytest.fixture
def page(small, tmp_path):
    cfg = small.replace(**{"precondition.fill": True, "metrics.interval_ms": 1.0})
    report = ftlab.run(cfg, progress=False)
    path = tmp_path / "report.html"
    report.save_html(str(path))
    return report, path


def test_report_html_is_self_contained(page):
    report, path = page
    html = path.read_text()
    assert html.startswith("<!DOCTYPE html>")
    for plot in PLOTS:
        assert f'id="{plot}"' in html, plot
    assert "https://" not in html and "<script" not in html and "src=" not in html
    assert ftlab.report_html(report) == html


def test_sweep_html_compares_runs(small, tmp_path):
    df = ftlab.sweep(small, {"ftl.kind": ["pagemap", "dftl"]})
    html = ftlab.report_html(df, title="two FTLs")
    assert "<h1>two FTLs</h1>" in html and 'id="compare-0"' in html and "dftl" in html
    csv = tmp_path / "rows.csv"
    df.to_csv(csv, index=False)
    assert 'id="compare-0"' in ftlab.report_html(str(csv))


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_report_renders_in_headless_chromium_without_network(page, tmp_path):
    browser = _chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the page is not rendered")
    _, path = page
    # Nothing leaves the machine: names resolve nowhere and the proxy is a closed
    # local port; the browser's own background services are turned off (those
    # left still try their hosts, and are told apart from the page's below).
    base = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-domain-reliability",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
    ]
    dom = subprocess.run(
        base + ["--dump-dom", path.as_uri()], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    for plot in PLOTS:
        assert f'id="{plot}"' in dom, plot
    assert dom.count("<svg") >= len(PLOTS)
    shot = tmp_path / "shot.png"
    log = tmp_path / "net.log"
    subprocess.run(
        base
        + [
            f"--screenshot={shot}",
            "--window-size=1000,2400",
            f"--log-net-log={log}",
            path.as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    assert shot.stat().st_size > 10_000
    # The network log names every URL asked for: the page asked for none (the
    # browser's own update and account services are not the page's).
    browser_own = ("google.com", "googleapis.com", "gstatic.com", "gvt1.com", "~notfound")
    urls = {u for u in re.findall(r'"((?:https?|wss?|ftp)://[^"\\ ]*)', log.read_text())}
    hosts = {urllib.parse.urlsplit(u).hostname or "" for u in urls}
    page_requests = sorted(h for h in hosts if not h.endswith(browser_own))
    assert page_requests == [], page_requests


def test_the_reports_figures_pass_the_figure_check(page, small, tmp_path):
    """Each figure of a run's page and of a sweep's page is fit for print (text
    at least 7 pt, none overlapping or clipped, every series showing), checked
    in headless Chromium by the check the committed figures pass."""
    if _chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the figures are not rendered")
    import pathlib
    import sys

    checker = pathlib.Path(__file__).resolve().parents[3] / "experiments" / "check_figures.py"
    if not checker.is_file():
        pytest.skip("the figure checker is in the repository, not in an installed package")
    _, run_page = page
    sweep_page = tmp_path / "sweep.html"
    sweep_page.write_text(ftlab.report_html(ftlab.sweep(small, {"ftl.kind": ["pagemap", "dftl"]})))
    out = subprocess.run(
        [sys.executable, str(checker), str(run_page), str(sweep_page)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "ok" in out.stdout
