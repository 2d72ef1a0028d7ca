"""Write amplification against over-provisioning for three FTLs on one trace.

A notebook-style script: run it whole (`python examples/python/sweep_over_provisioning.py`)
or cell by cell (the `# %%` markers) in Jupyter or an editor. It needs the package
(`pip install ./crates/py`) and reads the UMass Financial1 head from the shared
traces (`FTLAB_TRACES`, default `../shared/traces` beside the checkout); when
those are absent it runs 100,000 skewed random writes instead (a trace of a few
hundred requests would leave every WAF at 1). It writes
`waf_vs_op.html` (a self-contained page with the comparison plots) and the
figure for a paper as `waf_vs_op.pdf` and `waf_vs_op.png` (`ftlab.plot`: the
plotting path of the CLI's sweep plots and the HTML report).
"""

# %% The shared trace and the base configuration.
import os
import pathlib

import ftlab

root = pathlib.Path(__file__).resolve().parents[2]
traces = pathlib.Path(os.environ.get("FTLAB_TRACES", root.parent / "shared" / "traces"))
trace = traces / "umass_financial1_head.ssdsim.ascii"
if trace.is_file():
    name, workload = trace.name, f'trace = "{trace}"\ntrace_format = "ssdsim"'
else:
    # 2 s on 2 cores; WAF from 1.65 (35% spare) to 50 (NFTL at 7%).
    name, workload = "skewed-random-write", 'preset = "skewed-random-write"\nmax_requests = 100000'

base = ftlab.Config.from_toml(
    f"""
seed = 1
[device]
chip = "small-slc"
blocks_per_plane = 128
[workload]
{workload}
[precondition]
fill = true
"""
)

# %% Sweep: three FTLs x four over-provisioning ratios, on all cores.
frame = ftlab.sweep(
    base,
    {"ftl.kind": ["pagemap", "dftl", "nftl"], "device.over_provisioning": [0.07, 0.15, 0.25, 0.35]},
)
failed = frame[frame["error"].notna()]
if len(failed):
    print("runs that failed:\n", failed[["ftl.kind", "device.over_provisioning", "error"]])

# %% WAF per FTL (columns) and over-provisioning (rows).
waf = frame.pivot(index="device.over_provisioning", columns="ftl.kind", values="waf")
print(f"workload: {name}\n")
print(waf.round(3).to_string())

# %% The plots: an HTML page, and the figure as PDF (for the paper) and PNG.
pathlib.Path("waf_vs_op.html").write_text(ftlab.report_html(frame, title=f"WAF vs over-provisioning, {name}"))
for out in ["waf_vs_op.pdf", "waf_vs_op.png"]:
    ftlab.plot(
        frame.sort_values("device.over_provisioning"),
        kind="lines",
        x="device.over_provisioning",
        y="waf",
        series="ftl.kind",
        x_label="Over-provisioning",
        title=f"WAF against over-provisioning, {name}",
        file=out,
    )
print("wrote waf_vs_op.html, waf_vs_op.pdf and waf_vs_op.png")
