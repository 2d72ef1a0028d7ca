"""ftlab.plot: figures drawn by the same path as the CLI's sweep plots."""

import pandas as pd
import pytest

import ftlab


def rows():
    return pd.DataFrame(
        {
            "workload.preset": ["web", "web", "mail", "mail"],
            "ftl.kind": ["pagemap", "dftl", "pagemap", "dftl"],
            "write_us.max": [450_000.0, 120_000.0, 3_000.0, float("nan")],
        }
    )


def test_bars_follow_the_field_dictionary_and_scale_units():
    svg = ftlab.plot(rows(), x="workload.preset", y="write_us.max", series="ftl.kind")
    assert 'class="ftlab-figure"' in svg and 'width="3.5in"' in svg
    # Titles from the dictionary, µs shown as ms, the legend titled.
    assert ">Write response, max (ms)<" in svg and ">Workload<" in svg and ">FTL:<" in svg
    assert "450000" not in svg
    assert svg.count('class="series"') == 2
    # The NaN is no bar; the other three are.
    assert svg.count("<title>") == 1 + 3


def test_the_cli_and_python_draw_the_same_bytes(tmp_path):
    import os
    import shutil
    import subprocess

    df = rows()
    csv = tmp_path / "rows.csv"
    df.to_csv(csv, index=False)
    ours = ftlab.plot(df, x="workload.preset", y="write_us.max", series="ftl.kind", file=tmp_path / "py.svg")
    assert (tmp_path / "py.svg").read_text() == ours
    exe = os.environ.get("FTLAB_BIN") or shutil.which("ftlab")
    if not exe:
        pytest.skip("no ftlab binary (set FTLAB_BIN)")
    subprocess.run(
        [exe, "plot", str(csv), "--x", "workload.preset", "--y", "write_us.max", "--series", "ftl.kind",
         "-o", str(tmp_path / "cli.svg")],
        check=True,
        capture_output=True,
    )
    cli = (tmp_path / "cli.svg").read_text()
    # Same figure, but the file name (the SVG's id) differs.
    assert cli.replace('id="cli"', "X").replace("cli-", "X-") == ours.replace('id="py"', "X").replace("py-", "X-")


def test_lines_png_and_pdf(tmp_path):
    df = pd.DataFrame({"t": [0, 1, 2, 0, 1, 2], "pages": [0, 5e5, 1e6, 0, 2e5, 4e5], "run": [0, 0, 0, 1, 1, 1]})
    svg = ftlab.plot(df, kind="lines", x="t", y="pages", series="run", x_label="time (s)", file=tmp_path / "l.pdf")
    assert "stroke-dasharray" in svg and svg.count('class="series"') == 2
    assert (tmp_path / "l.pdf").read_bytes().startswith(b"%PDF")
    ftlab.plot(df, kind="lines", x="t", y="pages", file=tmp_path / "l.png")
    assert (tmp_path / "l.png").read_bytes().startswith(b"\x89PNG")


def test_bad_input_is_named():
    with pytest.raises(KeyError, match="wafx"):
        ftlab.plot(rows(), x="workload.preset", y="wafx")
    with pytest.raises(ValueError, match="bars"):
        ftlab.plot(rows(), x="workload.preset", y="write_us.max", kind="pie")
    with pytest.raises(ftlab.Error, match=r"\.jpg"):
        ftlab.plot(rows(), x="workload.preset", y="write_us.max", file="x.jpg")


def test_a_reports_latency_figure(small, tmp_path):
    report = ftlab.run(small, progress=False)
    svg = report.latency_figure(tmp_path / "cdf.pdf")
    # The same figure as the HTML report's, with the tail's own room.
    assert 'id="latency-cdf"' in svg and ">99%<" in svg and ">Operation:<" in svg
    assert svg in report.to_html()
    assert (tmp_path / "cdf.pdf").read_bytes().startswith(b"%PDF")
