"""Tests of experiments/check_figures.py: a good figure passes, and each planted
defect fails with its own message (and only that one).

    python3 -m unittest discover -s experiments -p 'test_check_figures.py'

The tests that render need Chromium and are skipped without it. Every planted
figure is measured in one Chromium launch (setUpClass); the command-line tests
add two more.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_figures  # noqa: E402

SCRIPT = os.path.join(HERE, "check_figures.py")

try:
    CHROMIUM = check_figures.find_chromium()
except check_figures.ToolError:
    CHROMIUM = None
needs_chromium = unittest.skipIf(CHROMIUM is None, "Chromium is not installed")

# A 3.5in x 2.4in figure; user units are points at print size (scale 96/72).
AXES = """\
<rect class="plot-area" x="40" y="10" width="200" height="120" fill="none" stroke="#000"/>
<text x="140" y="166" font-size="8" text-anchor="middle">Over-provisioning (%)</text>
<text x="12" y="70" font-size="8" text-anchor="middle" transform="rotate(-90 12 70)">Time (s)</text>
<text x="40" y="142" font-size="7.5" text-anchor="middle">0</text>
<text x="140" y="142" font-size="7.5" text-anchor="middle">10</text>
<text x="240" y="142" font-size="7.5" text-anchor="end">20</text>
"""
SERIES = """\
<g class="series" data-name="janus"><rect x="60" y="50" width="20" height="80" fill="#1f77b4"/></g>
<g class="series" data-name="ppm"><path d="M40 100 L240 100" fill="none" stroke="#d62728" stroke-width="1.5"/></g>
"""
LEGEND = """\
<g class="legend"><text class="legend-title" x="170" y="24" font-size="8">FTL</text>
<text x="170" y="36" font-size="8">janus</text><text x="170" y="48" font-size="8">ppm</text></g>
"""


def rotated(xs):
    """Tick labels at 45 degrees, anchored at xs."""
    return "".join(
        f'<text x="{x}" y="140" font-size="7" text-anchor="end" transform="rotate(-45 {x} 140)">'
        f'label {i}</text>\n' for i, x in enumerate(xs))



FIG_ATTRS = 'class="ftlab-figure" width="3.5in" height="2.4in" viewBox="0 0 252 172.8"'


def svg(body, attrs=FIG_ATTRS, prolog=True):
    head = '<?xml version="1.0" encoding="UTF-8"?>\n' if prolog else ""
    return (f'{head}<svg xmlns="http://www.w3.org/2000/svg" {attrs} font-family="sans-serif">\n'
            f"{body}</svg>\n")


AXES_NO_X = "".join(line + "\n" for line in AXES.splitlines()[:3])  # no x title or ticks
GOOD = svg(AXES + SERIES + LEGEND)
PAGE_HEAD = textwrap.dedent("""\
    <!DOCTYPE html><html><head>
    <style>svg.ftlab-figure { width: 1000px; height: auto; }</style></head>
    <body><h1>Results</h1>
    <svg class="icon" width="16" height="16"><circle cx="8" cy="8" r="8"/></svg>
    """)
FIXTURES = {
    "good.svg": GOOD,
    # 14 units apart the labels' upright bounding boxes overlap (each is about
    # 20 units wide), the rotated text does not (9.9 units apart across the
    # baseline, 8.1 units tall); 6 units apart the text itself overlaps.
    "rotated.svg": svg(AXES_NO_X + SERIES + LEGEND + rotated((90, 104, 118))),
    "rotated-close.svg": svg(AXES_NO_X + SERIES + LEGEND + rotated((90, 96, 102))),
    "overlap.svg": svg(AXES + SERIES + LEGEND
                       + '<text x="90" y="80" font-size="8">Alpha label</text>'
                         '<text x="95" y="82" font-size="8">Beta label</text>\n'),
    "small.svg": svg(AXES.replace('font-size="7.5" text-anchor="middle">10<',
                                  'font-size="5" text-anchor="middle">10<') + SERIES + LEGEND),
    "off-edge.svg": svg(AXES + SERIES + LEGEND
                        + '<text x="236" y="90" font-size="8">Far right label</text>\n'),
    "opacity0.svg": svg(AXES + SERIES.replace('data-name="ppm"', 'data-name="ppm" opacity="0"') + LEGEND),
    "zero-size.svg": svg(AXES + SERIES.replace('width="20" height="80"', 'width="0" height="0"') + LEGEND),
    "outside.svg": svg(AXES + SERIES.replace('x="60" y="50" width="20" height="80"',
                                             'x="0" y="140" width="20" height="30"') + LEGEND),
    "unpainted.svg": svg(AXES + SERIES.replace('stroke="#d62728"', 'stroke="transparent"') + LEGEND),
    "display-none.svg": svg(AXES + SERIES.replace('data-name="janus"',
                                                  'data-name="janus" style="display:none"') + LEGEND),
    "no-series.svg": svg(AXES + LEGEND),
    "duplicate.svg": svg(AXES + SERIES.replace('data-name="ppm"', 'data-name="janus"') + LEGEND),
    "legacy.svg": svg(AXES + SERIES + LEGEND, attrs='width="960" height="540" viewBox="0 0 252 172.8"'),
    "too-wide.svg": svg(AXES + SERIES + LEGEND,
                        attrs='class="ftlab-figure" width="10in" height="6.86in" viewBox="0 0 252 172.8"'),
    # A page shows two figures scaled up by CSS to 1000px wide (and an icon,
    # which is not a figure): on screen the second one's 5-unit labels look
    # large, but printed at 3.5in they are 5pt.
    "scaled.html": PAGE_HEAD
    + svg(AXES + SERIES + LEGEND, FIG_ATTRS + ' id="fig-ok"', prolog=False)
    + svg(AXES.replace('font-size="7.5"', 'font-size="5"') + SERIES + LEGEND,
          FIG_ATTRS + ' id="fig-small" style="width: 1000px"', prolog=False)
    + "</body></html>\n",
    "no-figure.html": "<!DOCTYPE html><html><body><p>No figures here.</p></body></html>\n",
}


def failures(reports, name):
    (rep,) = [r for r in reports if os.path.basename(r["path"]) == name]
    return rep["failures"]


@needs_chromium
class Checks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="ftlab-test-figures-")
        cls.files = []
        for name, text in FIXTURES.items():
            path = os.path.join(cls.tmp.name, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            cls.files.append(path)
        cls.measured = check_figures.measure_files(cls.files, CHROMIUM)  # one launch
        cls.reports = check_figures.judge(cls.files, cls.measured)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def fails_with(self, name, *fragments):
        """The file's failures are exactly one line per fragment, each containing it."""
        got = failures(self.reports, name)
        self.assertEqual(len(got), len(fragments), f"{name}: {got}")
        for frag in fragments:
            self.assertTrue(any(frag in line for line in got), f"{name}: no {frag!r} in {got}")
        return got

    def test_good_figure_passes(self):
        self.assertEqual(failures(self.reports, "good.svg"), [])
        (fig,) = self.measured[self.files.index(os.path.join(self.tmp.name, "good.svg"))]["figures"]
        self.assertAlmostEqual(fig["scale"], 96 / 72, places=4)  # user units are points
        self.assertAlmostEqual(min(t["pt"] for t in fig["sizes"]), 7.5, places=2)
        self.assertEqual(len(fig["texts"]), 8)
        self.assertEqual([s["name"] for s in fig["series"]], ["janus", "ppm"])

    def test_rotated_labels_whose_upright_boxes_meet_pass(self):
        self.assertEqual(failures(self.reports, "rotated.svg"), [])
        (fig,) = self.measured[self.files.index(os.path.join(self.tmp.name, "rotated.svg"))]["figures"]
        boxes = [check_figures._bounds(t["poly"]) for t in fig["texts"] if t["s"].startswith("label")]
        self.assertEqual(len(boxes), 3)
        self.assertGreater(boxes[0][2], boxes[1][0] + 5)  # the upright boxes do overlap

    def test_rotated_labels_that_overlap(self):
        self.fails_with("rotated-close.svg", 'overlapping text: "label 0" and "label 1"',
                        'overlapping text: "label 1" and "label 2"')

    def test_overlapping_texts(self):
        (line,) = self.fails_with("overlap.svg", 'overlapping text: "Alpha label" and "Beta label"')
        self.assertIn("figure #1:", line)

    def test_text_at_5pt(self):
        (line,) = self.fails_with("small.svg", "text size: 1 of 8 texts below 7pt; smallest 5.0pt \"10\"")

    def test_min_pt_option(self):
        reports = check_figures.judge(self.files, self.measured, min_pt=8)
        self.assertIn('text size: 3 of 8 texts below 8pt; smallest 7.5pt "0"',
                      " ".join(failures(reports, "good.svg")))

    def test_text_off_the_right_edge(self):
        self.fails_with("off-edge.svg", 'text off the figure: "Far right label" extends')
        self.assertIn("past the right edge", failures(self.reports, "off-edge.svg")[0])

    def test_series_at_opacity_0(self):
        self.fails_with("opacity0.svg", 'series "ppm" is invisible: opacity 0')

    def test_series_of_zero_size(self):
        self.fails_with("zero-size.svg", 'series "janus" is invisible: its box is 0.00 x 0.00px')

    def test_series_outside_the_plot_area(self):
        self.fails_with("outside.svg", 'series "janus" lies outside the plot area')

    def test_series_with_a_transparent_stroke(self):
        self.fails_with("unpainted.svg", 'series "ppm" is invisible: none of its 1 shapes has a visible fill or stroke')

    def test_series_display_none(self):
        self.fails_with("display-none.svg", 'series "janus" is invisible: display:none')

    def test_no_series(self):
        self.fails_with("no-series.svg", 'series: no data: the figure has no <g class="series">')

    def test_duplicate_series_names(self):
        self.fails_with("duplicate.svg", 'series: duplicate series name "janus" (2 series: #1, #2)')

    def test_not_an_ftlab_figure(self):
        self.fails_with("legacy.svg", 'not an ftlab figure: the root <svg> has no class "ftlab-figure"')
        self.fails_with("no-figure.html", 'not an ftlab figure: no <svg class="ftlab-figure"> in the page')
        reports = check_figures.judge(self.files, self.measured, legacy_ok=True)
        (legacy,) = [r for r in reports if r["path"].endswith("legacy.svg")]
        self.assertEqual(legacy["failures"], [])
        self.assertIn("skipped", legacy["skipped"])

    def test_wider_than_a_double_column(self):
        self.fails_with("too-wide.svg", "print size: width 10.00in is wider than a double column")

    def test_css_scaled_figure_is_measured_at_print_size(self):
        # Only the small figure fails, named by its id; the icon is not a figure.
        got = self.fails_with("scaled.html", 'figure "fig-small": text size: 3 of 8 texts below 7pt; smallest 5.0pt')
        self.assertNotIn("fig-ok", " ".join(got))
        (rep,) = [r for r in self.reports if r["path"].endswith("scaled.html")]
        self.assertEqual(rep["figures"], 2)

    def test_every_good_file_passes_and_every_planted_one_fails(self):
        passing = {os.path.basename(r["path"]) for r in self.reports if not r["failures"]}
        self.assertEqual(passing, {"good.svg", "rotated.svg"})


def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env=env, timeout=300)


@needs_chromium
class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ftlab-test-figures-")
        self.addCleanup(self.tmp.cleanup)

    def write(self, rel, text):
        path = os.path.join(self.tmp.name, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_directory_of_good_figures_passes(self):
        self.write("a/one.svg", GOOD)
        self.write("a/b/two.svg", FIXTURES["rotated.svg"])
        self.write("a/b/notes.txt", "not a figure")
        res = run(os.path.join(self.tmp.name, "a"))
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertEqual(res.stdout, "check_figures: 2 figures in 2 files ok\n")

    def test_failing_figure_exits_1_naming_file_figure_and_check(self):
        good = self.write("good.svg", GOOD)
        bad = self.write("bad.svg", FIXTURES["overlap.svg"])
        res = run(good, bad)
        self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
        self.assertIn(f'{bad}: figure #1: overlapping text: "Alpha label" and "Beta label"', res.stdout)
        self.assertNotIn(good + ":", res.stdout)
        self.assertIn("check_figures: 1 of 2 files failed", res.stdout)


class WithoutRendering(unittest.TestCase):
    """Exit 2 cases: none of them may pass silently."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="ftlab-test-figures-")
        self.addCleanup(self.tmp.cleanup)
        self.good = os.path.join(self.tmp.name, "good.svg")
        with open(self.good, "w", encoding="utf-8") as f:
            f.write(GOOD)

    def fake_chromium(self, output):
        path = os.path.join(self.tmp.name, "fake-chromium")
        with open(path, "w") as f:
            f.write(f"#!{sys.executable}\nimport sys\nsys.stdout.write({output!r})\n")
        os.chmod(path, 0o755)
        return dict(os.environ, CHROMIUM=path)

    def test_missing_file_exits_2_naming_it(self):
        missing = os.path.join(self.tmp.name, "nope.svg")
        res = run(self.good, missing)
        self.assertEqual(res.returncode, 2)
        self.assertIn(f"no such file or directory: {missing}", res.stderr)
        self.assertEqual(res.stdout, "")

    def test_no_chromium_exits_2(self):
        env = {k: v for k, v in os.environ.items() if k != "CHROMIUM"}
        env["PATH"] = os.path.join(self.tmp.name, "empty")
        res = run(self.good, env=env)
        self.assertEqual(res.returncode, 2)
        self.assertIn("Chromium not found", res.stderr)

    def test_chromium_named_by_env_but_missing_exits_2(self):
        res = run(self.good, env=dict(os.environ, CHROMIUM=os.path.join(self.tmp.name, "none")))
        self.assertEqual(res.returncode, 2)
        self.assertIn("is not an executable", res.stderr)

    def test_page_without_result_exits_2(self):
        res = run(self.good, env=self.fake_chromium("<html><body></body></html>"))
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertIn("produced no result", res.stderr)

    def test_result_for_fewer_files_exits_2(self):
        env = self.fake_chromium('<html><body><pre id="ftlab-result">{"ok":true,"files":[]}</pre></body></html>')
        res = run(self.good, env=env)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertIn("gave 0 results for 1 files", res.stderr)

    def test_script_error_exits_2(self):
        env = self.fake_chromium('<pre id="ftlab-result">{"ok":false,"error":"TypeError: boom"}</pre>')
        res = run(self.good, env=env)
        self.assertEqual(res.returncode, 2, res.stdout + res.stderr)
        self.assertIn("TypeError: boom", res.stderr)


if __name__ == "__main__":
    unittest.main()
