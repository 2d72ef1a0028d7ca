#!/usr/bin/env python3
"""Check that ftlab's figures are fit for a paper, by rendering them in headless
Chromium at their printed size and measuring what is drawn.

    python3 experiments/check_figures.py [--min-pt 7] [--legacy-ok] PATH...

Each PATH is an .svg file (one figure), an .html file (every outermost
`<svg class="ftlab-figure">` in it) or a directory (every .svg and .html under
it). Exit 0 when every figure passes (one summary line), 1 naming each failing
file, figure and check, 2 when the check itself could not run: an input path
that does not exist, no Chromium (looked up as $CHROMIUM, then `chromium`,
`chromium-browser`, `google-chrome` on PATH), or a page whose script gave no
result. It never passes a figure it did not measure.

The figures' conventions (what ftlab's renderer writes):
- the root is `<svg class="ftlab-figure" width="3.5in" height="2.4in"
  viewBox="0 0 252 172.8">`: the width attribute is the printed width (a
  3.5in column, at most a 7.16in double column) and the viewBox maps the
  figure onto it. A page may scale the SVG with CSS; this check ignores that
  and always renders and measures the figure at its printed size, so the
  print scale is (width attribute in px, 1in = 96px) / viewBox width;
- one `<rect class="plot-area">`;
- each data series is a `<g class="series" data-name="NAME">` holding its
  bars, lines and markers;
- the legend is a `<g class="legend">`.

The checks, per figure:
- print size: the width attribute is an absolute length no wider than a
  double column (a wider figure is shrunk when printed, fonts with it);
- text size: every non-empty text prints at --min-pt points or more (its
  computed font-size times its transforms times the print scale, px to pt);
- overlapping text: no two texts' rendered boxes (rotation included) share
  more than 2 px^2 and more than 5% of the smaller box;
- text inside the figure: every text box lies within the figure (1px slack);
- series: there is at least one series, names are present and distinct, and
  each series is drawn: not display:none, hidden or at opacity 0, with at
  least one child painted (a fill or stroke that is not none or transparent),
  a box wider or taller than 0.5px, meeting a plot-area rect.

An SVG without class ftlab-figure (an older plot), or a page with no ftlab
figure, fails as "not an ftlab figure" unless --legacy-ok (then it is skipped
with a note on stderr).

How: the files of a batch (up to 50) go into one temporary HTML page as JSON;
the page's script parses each (an .svg as XML, an .html as HTML), mounts each
figure into its own wrapper div under a shadow root (so one figure's <style>
and ids cannot reach another's), sets the SVG's CSS size to its print size,
measures, and writes JSON into <pre id="ftlab-result">, which
`chromium --headless --dump-dom` prints. Fonts are the system's.
"""
import argparse
import concurrent.futures
import html
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile

DEFAULT_MIN_PT = 7.0
DOUBLE_COLUMN_IN = 7.16
PX_PER_IN = 96.0
PT_PER_PX = 0.75
OVERLAP_MIN_PX2 = 2.0  # intersection area, px^2 at print size...
OVERLAP_MIN_FRACTION = 0.05  # ...and fraction of the smaller box
EDGE_SLACK_PX = 1.0
SERIES_MIN_PX = 0.5
BATCH_FILES = 50
BATCH_BYTES = 16 * 1024 * 1024
TIMEOUT_S = 120
MAX_LISTED = 20  # per check and figure; the rest are counted
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
EXTENSIONS = (".svg", ".html", ".htm")


class ToolError(Exception):
    """The check could not run (exit 2)."""


# --------------------------------------------------------------------------
# Finding inputs and Chromium


def find_chromium():
    env = os.environ.get("CHROMIUM")
    if env:
        found = shutil.which(env)
        if not found:
            raise ToolError(f"CHROMIUM={env} is not an executable")
        return found
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise ToolError(
        "Chromium not found: set CHROMIUM or put one of "
        + ", ".join(CHROMIUM_NAMES) + " on PATH")


def collect(paths):
    """The files to check, in order, each once; ToolError for a missing path."""
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise ToolError("no such file or directory: " + ", ".join(missing))
    files, seen = [], set()

    def add(path):
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            files.append(path)

    for path in paths:
        if os.path.isdir(path):
            for dirpath, dirnames, filenames in os.walk(path):
                dirnames.sort()
                for name in sorted(filenames):
                    if name.lower().endswith(EXTENSIONS):
                        add(os.path.join(dirpath, name))
        elif path.lower().endswith(EXTENSIONS):
            add(path)
        else:
            raise ToolError(f"{path}: not an .svg or .html file")
    return files


# --------------------------------------------------------------------------
# The measuring page

PAGE_SCRIPT = r"""
(function () {
  'use strict';
  var out = document.getElementById('ftlab-result');
  var SVGNS = 'http://www.w3.org/2000/svg';
  var UNITS = {'': 1, px: 1, 'in': 96, cm: 96 / 2.54, mm: 96 / 25.4, pt: 96 / 72, pc: 16};
  // Content of these is not drawn where it stands.
  var UNDRAWN = {defs: 1, clippath: 1, mask: 1, marker: 1, pattern: 1, symbol: 1,
    lineargradient: 1, radialgradient: 1, filter: 1, metadata: 1, title: 1, desc: 1,
    style: 1, script: 1};
  var SHAPES = {rect: 1, circle: 1, ellipse: 1, line: 1, polyline: 1, polygon: 1,
    path: 1, text: 1, use: 1, image: 1};
  var TEXTS = {text: 1, tspan: 1, textpath: 1};

  function length(v) {
    if (v == null) return null;
    var m = /^\s*([+]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*(px|in|cm|mm|pt|pc)?\s*$/i.exec(v);
    if (!m) return null;
    return parseFloat(m[1]) * UNITS[(m[2] || '').toLowerCase()];
  }
  function undrawn(el, root) {
    for (var e = el; e && e !== root; e = e.parentElement) {
      if (UNDRAWN[e.localName.toLowerCase()]) return true;
    }
    return false;
  }
  // Why el is not drawn, looking up to root: display, opacity, visibility.
  function hidden(el, root) {
    var opacity = 1;
    for (var e = el; e; e = e.parentElement) {
      var cs = getComputedStyle(e);
      if (cs.display === 'none') return e === el ? 'display:none' : 'display:none on an ancestor';
      opacity *= parseFloat(cs.opacity);
      if (e === root) break;
    }
    if (!(opacity > 0)) return 'opacity 0';
    var vis = getComputedStyle(el).visibility;
    if (vis !== 'visible') return 'visibility:' + vis;
    return null;
  }
  function paints(cs, which) {
    var p = cs[which];
    if (!p || p === 'none' || p === 'transparent') return false;
    var m = /^rgba?\(([^)]*)\)/.exec(p);
    if (m) {
      var parts = m[1].split(/[\s,\/]+/).filter(Boolean);
      if (parts.length === 4 && !(parseFloat(parts[3]) > 0)) return false;
    }
    if (!(parseFloat(cs[which + 'Opacity']) > 0)) return false;
    if (which === 'stroke' && !(parseFloat(cs.strokeWidth) > 0)) return false;
    return true;
  }
  function painted(el) {
    var name = el.localName.toLowerCase();
    if (name === 'use' || name === 'image') return true;
    var cs = getComputedStyle(el);
    if (paints(cs, 'stroke')) return true;
    if (name !== 'line' && paints(cs, 'fill')) return true;
    if (name === 'path' || name === 'line' || name === 'polyline' || name === 'polygon') {
      var ms = [cs.markerStart, cs.markerMid, cs.markerEnd];
      for (var i = 0; i < ms.length; i++) if (ms[i] && ms[i] !== 'none') return true;
    }
    return false;
  }
  function det(m) { return Math.abs(m.a * m.d - m.b * m.c); }
  function textOf(el) {
    var s = '';
    for (var n = el.firstChild; n; n = n.nextSibling) if (n.nodeType === 3) s += n.data;
    return s.replace(/\s+/g, ' ').trim();
  }
  function nearestText(el) {
    for (var e = el; e; e = e.parentElement) if (e.localName.toLowerCase() === 'text') return e;
    return el;
  }
  function box(r, ox, oy) { return [r.left - ox, r.top - oy, r.right - ox, r.bottom - oy]; }

  // Mount one figure: a wrapper div, a shadow root, the SVG at print size.
  function mount(src, k) {
    var host = document.createElement('div');
    host.className = 'ftlab-wrap';
    host.setAttribute('data-index', String(k));
    document.getElementById('ftlab-figures').appendChild(host);
    var root = host.attachShadow({mode: 'open'});
    var svg = document.importNode(src, true);
    root.appendChild(svg);
    var fig = {id: svg.getAttribute('id'), width_attr: svg.getAttribute('width'),
      height_attr: svg.getAttribute('height')};
    var wpx = length(fig.width_attr), hpx = length(fig.height_attr);
    var vb = svg.hasAttribute('viewBox') && svg.viewBox && svg.viewBox.baseVal;
    var vbw = vb && vb.width > 0 ? vb.width : null, vbh = vb && vb.height > 0 ? vb.height : null;
    if (wpx == null || !(wpx > 0)) {
      fig.print_error = fig.width_attr == null ? 'no width attribute'
        : 'width attribute "' + fig.width_attr + '" is not an absolute length (in, pt, px, cm, mm, pc)';
    } else {
      if (hpx == null && vbw && vbh) hpx = wpx * vbh / vbw;
      fig.print_width_px = wpx;
      fig.print_height_px = hpx;
      var scale = vbw ? wpx / vbw : 1;
      if (vbw && vbh && hpx) scale = Math.min(scale, hpx / vbh);
      fig.scale = scale;
      svg.style.setProperty('width', wpx + 'px', 'important');
      if (hpx) svg.style.setProperty('height', hpx + 'px', 'important');
    }
    svg.style.setProperty('display', 'block', 'important');
    return {svg: svg, fig: fig};
  }

  function measure(m) {
    var svg = m.svg, fig = m.fig;
    var sr = svg.getBoundingClientRect(), ox = sr.left, oy = sr.top;
    fig.box = [0, 0, sr.width, sr.height];
    var rootScale = Math.sqrt(det(svg.getScreenCTM()));
    var all = svg.querySelectorAll('*');
    fig.sizes = [];
    fig.texts = [];
    for (var i = 0; i < all.length; i++) {
      var el = all[i], name = el.localName.toLowerCase();
      if (!TEXTS[name] || undrawn(el, svg) || hidden(el, svg)) continue;
      var own = textOf(el);
      if (own && fig.scale) {
        var fs = parseFloat(getComputedStyle(el).fontSize);
        var local = Math.sqrt(det(nearestText(el).getScreenCTM())) / rootScale;
        fig.sizes.push({s: own, pt: fs * local * fig.scale * 0.75});
      }
      if (name !== 'text') continue;
      var all_text = el.textContent.replace(/\s+/g, ' ').trim();
      if (!all_text) continue;
      var bb = el.getBBox();
      if (!(bb.width > 0 || bb.height > 0)) continue;
      var ctm = el.getScreenCTM(), corners = [];
      var pts = [[bb.x, bb.y], [bb.x + bb.width, bb.y], [bb.x + bb.width, bb.y + bb.height], [bb.x, bb.y + bb.height]];
      for (var j = 0; j < 4; j++) {
        var x = pts[j][0], y = pts[j][1];
        corners.push([ctm.a * x + ctm.c * y + ctm.e - ox, ctm.b * x + ctm.d * y + ctm.f - oy]);
      }
      fig.texts.push({s: all_text, poly: corners});
    }
    fig.plot_areas = [];
    var pa = svg.querySelectorAll('rect.plot-area');
    for (i = 0; i < pa.length; i++) {
      if (!undrawn(pa[i], svg)) fig.plot_areas.push(box(pa[i].getBoundingClientRect(), ox, oy));
    }
    fig.series = [];
    var gs = svg.querySelectorAll('g.series');
    for (i = 0; i < gs.length; i++) {
      var g = gs[i];
      if (undrawn(g, svg)) continue;
      var s = {name: g.getAttribute('data-name'), hidden: null, shapes: 0, painted: 0, box: null};
      var why = hidden(g, svg);
      if (why && why.indexOf('visibility') !== 0) s.hidden = why;
      var kids = g.querySelectorAll('*');
      for (var k = 0; k < kids.length; k++) {
        var c = kids[k];
        if (!SHAPES[c.localName.toLowerCase()] || undrawn(c, g)) continue;
        s.shapes++;
        if (s.hidden || hidden(c, svg) || !painted(c)) continue;
        s.painted++;
        var r = box(c.getBoundingClientRect(), ox, oy);
        s.box = s.box ? [Math.min(s.box[0], r[0]), Math.min(s.box[1], r[1]),
          Math.max(s.box[2], r[2]), Math.max(s.box[3], r[3])] : r;
      }
      if (!s.hidden && !s.painted && why) s.hidden = why;
      fig.series.push(s);
    }
    return fig;
  }

  function parse(file) {
    if (file.kind === 'svg') {
      var doc = new DOMParser().parseFromString(file.text, 'image/svg+xml');
      var err = doc.getElementsByTagName('parsererror');
      if (err.length) {
        var detail = err[0].querySelector('div') || err[0];
        return {parse_error: 'not well-formed XML: ' + detail.textContent.replace(/\s+/g, ' ').trim()};
      }
      var rootEl = doc.documentElement;
      if (rootEl.namespaceURI !== SVGNS || rootEl.localName !== 'svg') {
        return {not_ftlab: 'the root element is not an SVG <svg> (missing xmlns?)'};
      }
      if (!rootEl.classList.contains('ftlab-figure')) {
        return {not_ftlab: 'the root <svg> has no class "ftlab-figure"'};
      }
      return {sources: [rootEl]};
    }
    var hdoc = new DOMParser().parseFromString(file.text, 'text/html');
    var svgs = hdoc.getElementsByTagNameNS(SVGNS, 'svg'), sources = [], others = 0;
    for (var i = 0; i < svgs.length; i++) {
      var el = svgs[i];
      if (el.parentElement && el.parentElement.closest('svg')) continue;
      if (el.classList.contains('ftlab-figure')) sources.push(el); else others++;
    }
    if (!sources.length) {
      return {not_ftlab: 'no <svg class="ftlab-figure"> in the page'
        + (others ? ' (' + others + ' other svg elements)' : '')};
    }
    return {sources: sources};
  }

  var result;
  try {
    var data = JSON.parse(document.getElementById('ftlab-data').textContent);
    var files = data.files.map(parse), mounted = [], k = 0;
    files.forEach(function (f, i) {
      mounted.push((f.sources || []).map(function (src) { return mount(src, k++); }));
      delete f.sources;
    });
    files.forEach(function (f, i) {
      f.figures = mounted[i].map(function (m, n) {
        try { return measure(m); } catch (e) { f.script_error = String(e && e.stack || e); return null; }
      });
    });
    result = {ok: true, files: files};
  } catch (e) {
    result = {ok: false, error: String(e && e.stack || e)};
  }
  var data_el = document.getElementById('ftlab-data');
  if (data_el) data_el.parentNode.removeChild(data_el);
  out.textContent = JSON.stringify(result);
})();
"""


def build_page(texts):
    """One HTML page measuring the given files: [(kind, text)]."""
    data = json.dumps({"files": [{"kind": k, "text": t} for k, t in texts]})
    # Nothing in the data may close the script element: no '<' at all.
    data = data.replace("<", "\\u003c")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            "<style>body{margin:8px;font-family:sans-serif}"
            ".ftlab-wrap{margin:0 0 8px 0}</style></head><body>\n"
            "<div id=\"ftlab-figures\"></div>\n"
            "<pre id=\"ftlab-result\"></pre>\n"
            f"<script type=\"application/json\" id=\"ftlab-data\">{data}</script>\n"
            f"<script>{PAGE_SCRIPT}</script>\n</body></html>\n")


RESULT_RE = re.compile(r'<pre id="ftlab-result">(.*?)</pre>', re.S)


def run_chromium(chromium, page, workdir):
    """The page's DOM after load, as Chromium prints it."""
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu",
           f"--user-data-dir={os.path.join(workdir, 'profile')}",
           "--no-first-run", "--disable-background-networking",
           "--disable-component-update", "--disable-sync",
           "--dump-dom", pathlib.Path(page).resolve().as_uri()]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    except OSError as e:
        raise ToolError(f"cannot run {chromium}: {e}") from e
    try:
        out, err = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # Chromium and the helpers it started
        except OSError:
            pass
        proc.communicate()
        raise ToolError(f"{chromium} did not finish in {TIMEOUT_S} s")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def measure_batch(chromium, batch):
    """Measurements of each file of batch: [(path, kind, text)]."""
    with tempfile.TemporaryDirectory(prefix="ftlab-figures-", ignore_cleanup_errors=True) as tmp:
        page = os.path.join(tmp, "page.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(build_page([(kind, text) for _, kind, text in batch]))
        rc, out, err = run_chromium(chromium, page, tmp)
    names = ", ".join(p for p, _, _ in batch[:3]) + (", ..." if len(batch) > 3 else "")
    m = RESULT_RE.search(out)
    if not m or not m.group(1).strip():
        tail = "\n".join(err.strip().splitlines()[-5:])
        raise ToolError(f"the measuring page produced no result (Chromium exit {rc}) "
                        f"for {names}" + (f"\n{tail}" if tail else ""))
    try:
        result = json.loads(html.unescape(m.group(1)))
    except ValueError as e:
        raise ToolError(f"the measuring page's result is not JSON ({e}) for {names}") from e
    if not isinstance(result, dict) or not result.get("ok"):
        raise ToolError(f"the measuring page's script failed for {names}: "
                        f"{result.get('error') if isinstance(result, dict) else result}")
    files = result.get("files")
    if not isinstance(files, list) or len(files) != len(batch):
        raise ToolError(f"the measuring page gave {len(files) if isinstance(files, list) else 'no'} "
                        f"results for {len(batch)} files ({names})")
    for (path, _, _), f in zip(batch, files):
        if not isinstance(f, dict):
            raise ToolError(f"{path}: the measuring page gave no result")
        if f.get("script_error"):
            raise ToolError(f"{path}: the measuring script failed: {f['script_error']}")
        if not isinstance(f.get("figures"), list) or any(g is None for g in f["figures"]):
            raise ToolError(f"{path}: the measuring page gave no figures")
    return files


def measure_files(files, chromium=None):
    """Measurements of every file, in order: one Chromium launch per batch."""
    if not files:
        return []
    chromium = chromium or find_chromium()
    loaded = []
    for path in files:
        with open(path, "rb") as f:
            raw = f.read()
        kind = "svg" if path.lower().endswith(".svg") else "html"
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            text = None
        loaded.append((path, kind, text))
    results = {}
    todo = [x for x in loaded if x[2] is not None]
    for path, _, text in loaded:
        if text is None:
            results[path] = {"parse_error": "not UTF-8 text", "figures": []}
    batches, cur, size = [], [], 0
    for item in todo:
        if cur and (len(cur) >= BATCH_FILES or size + len(item[2]) > BATCH_BYTES):
            batches.append(cur)
            cur, size = [], 0
        cur.append(item)
        size += len(item[2])
    if cur:
        batches.append(cur)
    workers = max(1, min(len(batches), os.cpu_count() or 1, 4))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for batch, got in zip(batches, pool.map(lambda b: measure_batch(chromium, b), batches)):
            for (path, _, _), f in zip(batch, got):
                results[path] = f
    return [results[p] for p in files]


# --------------------------------------------------------------------------
# Judging the measurements


def quote(s, n=50):
    s = s if len(s) <= n else s[:n - 3] + "..."
    return '"' + s.replace('"', '\\"') + '"'


def _signed_area(poly):
    """Shoelace area, positive when the vertices turn counterclockwise."""
    return 0.5 * sum(poly[i - 1][0] * poly[i][1] - poly[i][0] * poly[i - 1][1]
                     for i in range(len(poly)))


def _ccw(poly):
    return poly if _signed_area(poly) >= 0 else poly[::-1]


def area(poly):
    return abs(_signed_area(poly)) if len(poly) >= 3 else 0.0


def intersection_area(p, q):
    """Area shared by two convex polygons (Sutherland-Hodgman clipping)."""
    out = _ccw(p)
    clip = _ccw(q)
    for i in range(len(clip)):
        a, b = clip[i - 1], clip[i]
        inp, out = out, []
        if not inp:
            break

        def inside(pt):
            return (b[0] - a[0]) * (pt[1] - a[1]) - (b[1] - a[1]) * (pt[0] - a[0]) >= 0

        def cross(s, e):
            dx1, dy1 = e[0] - s[0], e[1] - s[1]
            dx2, dy2 = b[0] - a[0], b[1] - a[1]
            den = dx1 * dy2 - dy1 * dx2
            if den == 0:
                return e
            t = ((a[0] - s[0]) * dy2 - (a[1] - s[1]) * dx2) / den
            return (s[0] + t * dx1, s[1] + t * dy1)

        for j in range(len(inp)):
            s, e = inp[j - 1], inp[j]
            if inside(e):
                if not inside(s):
                    out.append(cross(s, e))
                out.append(e)
            elif inside(s):
                out.append(cross(s, e))
    return area(out)


def _bounds(poly):
    xs = [x for x, _ in poly]
    ys = [y for _, y in poly]
    return min(xs), min(ys), max(xs), max(ys)


def _listed(lines, what):
    if len(lines) > MAX_LISTED:
        return lines[:MAX_LISTED] + [f"{what}: ... and {len(lines) - MAX_LISTED} more"]
    return lines


def judge_figure(fig, min_pt):
    """The failures of one measured figure: ["check: specifics"]."""
    fails = []
    if fig.get("print_error"):
        fails.append(f"print size: {fig['print_error']}; its printed size is unknown")
    else:
        width_in = fig["print_width_px"] / PX_PER_IN
        if width_in > DOUBLE_COLUMN_IN + 0.005:
            fails.append(f"print size: width {width_in:.2f}in is wider than a double column "
                         f"({DOUBLE_COLUMN_IN}in); it would be shrunk, fonts with it")
        box = fig.get("box") or [0, 0, 0, 0]
        if abs(box[2] - fig["print_width_px"]) > 1:
            fails.append(f"print size: rendered {box[2]:.1f}px wide, not at its print width "
                         f"{fig['print_width_px']:.1f}px (a style of the figure overrides it?)")
        small = sorted((t for t in fig["sizes"] if t["pt"] < min_pt - 1e-6), key=lambda t: t["pt"])
        if small:
            shown = ""
            if len(small) > 1:
                more = f", ... ({len(small) - 5} more)" if len(small) > 5 else ""
                shown = " (" + ", ".join(f"{t['pt']:.1f}pt {quote(t['s'], 30)}"
                                         for t in small[:5]) + more + ")"
            fails.append(f"text size: {len(small)} of {len(fig['sizes'])} texts below {min_pt:g}pt; "
                         f"smallest {small[0]['pt']:.1f}pt {quote(small[0]['s'])}{shown}")

    texts = fig["texts"]
    bounds = [_bounds(t["poly"]) for t in texts]
    areas = [area(t["poly"]) for t in texts]
    overlaps = []
    for i in range(len(texts)):
        bi = bounds[i]
        for j in range(i + 1, len(texts)):
            bj = bounds[j]
            if bi[2] <= bj[0] or bj[2] <= bi[0] or bi[3] <= bj[1] or bj[3] <= bi[1]:
                continue
            shared = intersection_area(texts[i]["poly"], texts[j]["poly"])
            smaller = min(areas[i], areas[j])
            if shared > OVERLAP_MIN_PX2 and smaller > 0 and shared > OVERLAP_MIN_FRACTION * smaller:
                overlaps.append(f"overlapping text: {quote(texts[i]['s'])} and {quote(texts[j]['s'])} "
                                f"share {shared:.1f}px^2 ({100 * shared / smaller:.0f}% of the smaller)")
    fails += _listed(overlaps, "overlapping text")

    w, h = (fig.get("box") or [0, 0, 0, 0])[2:]
    outside = []
    for t, (x0, y0, x1, y1) in zip(texts, bounds):
        past = {"left": -x0, "top": -y0, "right": x1 - w, "bottom": y1 - h}
        edges = [f"{d:.1f}px past the {edge} edge" for edge, d in past.items() if d > EDGE_SLACK_PX]
        if edges:
            outside.append(f"text off the figure: {quote(t['s'])} extends " + " and ".join(edges))
    fails += _listed(outside, "text off the figure")

    series = fig["series"]
    if not series:
        fails.append('series: no data: the figure has no <g class="series">')
    names = {}
    for n, s in enumerate(series, 1):
        names.setdefault(s["name"], []).append(n)
    for name, which in names.items():
        if name is None or not name.strip():
            fails.append(f"series: series #{', #'.join(map(str, which))} "
                         f"{'has' if len(which) == 1 else 'have'} no data-name")
        elif len(which) > 1:
            fails.append(f"series: duplicate series name {quote(name)} "
                         f"({len(which)} series: #{', #'.join(map(str, which))}); the legend is ambiguous")
    areas_pa = fig["plot_areas"]
    if series and not areas_pa:
        fails.append('series: no <rect class="plot-area"> to check the series against')
    for n, s in enumerate(series, 1):
        label = quote(s["name"]) if s["name"] else f"#{n}"
        if s["hidden"]:
            fails.append(f"series {label} is invisible: {s['hidden']}")
            continue
        if not s["painted"]:
            fails.append(f"series {label} is invisible: none of its {s['shapes']} shapes has a "
                         "visible fill or stroke" if s["shapes"] else
                         f"series {label} is invisible: it has no shapes")
            continue
        x0, y0, x1, y1 = s["box"]
        if not (x1 - x0 > SERIES_MIN_PX or y1 - y0 > SERIES_MIN_PX):
            fails.append(f"series {label} is invisible: its box is "
                         f"{x1 - x0:.2f} x {y1 - y0:.2f}px")
            continue
        if areas_pa and not any(x0 <= p[2] and x1 >= p[0] and y0 <= p[3] and y1 >= p[1]
                                for p in areas_pa):
            p = areas_pa[0]
            fails.append(f"series {label} lies outside the plot area: its box "
                         f"[{x0:.0f},{y0:.0f} - {x1:.0f},{y1:.0f}]px, the plot area "
                         f"[{p[0]:.0f},{p[1]:.0f} - {p[2]:.0f},{p[3]:.0f}]px")
    return fails


def judge(files, measured, min_pt=DEFAULT_MIN_PT, legacy_ok=False):
    """One report per file: {path, failures: [str], figures: int, skipped: str|None}."""
    reports = []
    for path, f in zip(files, measured):
        rep = {"path": path, "failures": [], "figures": 0, "skipped": None}
        if f.get("parse_error"):
            rep["failures"].append(f"not a readable figure: {f['parse_error']}")
        elif f.get("not_ftlab"):
            if legacy_ok:
                rep["skipped"] = f"not an ftlab figure ({f['not_ftlab']}), skipped (--legacy-ok)"
            else:
                rep["failures"].append(f"not an ftlab figure: {f['not_ftlab']}")
        for n, fig in enumerate(f.get("figures") or [], 1):
            rep["figures"] += 1
            label = f"figure {quote(fig['id'])}" if fig.get("id") else f"figure #{n}"
            rep["failures"] += [f"{label}: {x}" for x in judge_figure(fig, min_pt)]
        reports.append(rep)
    return reports


def check_paths(paths, min_pt=DEFAULT_MIN_PT, legacy_ok=False, chromium=None):
    """Collect, measure and judge: the reports of judge(). Raises ToolError."""
    files = collect(paths)
    return judge(files, measure_files(files, chromium), min_pt, legacy_ok)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Render ftlab figures in headless Chromium at print size and check "
                    "text size, overlapping text, text off the edge and that every series is drawn.")
    ap.add_argument("--min-pt", type=float, default=DEFAULT_MIN_PT,
                    help="smallest printed font size in points (default %(default)g)")
    ap.add_argument("--legacy-ok", action="store_true",
                    help="skip (with a note) SVGs and pages that are not ftlab figures instead of failing them")
    ap.add_argument("paths", nargs="+", metavar="PATH", help=".svg, .html, or a directory")
    args = ap.parse_args(argv)
    if not args.min_pt > 0:
        ap.error("--min-pt must be positive")
    try:
        reports = check_paths(args.paths, args.min_pt, args.legacy_ok)
    except ToolError as e:
        print(f"check_figures: {e}", file=sys.stderr)
        return 2
    if not reports:
        print("check_figures: no .svg or .html file under " + ", ".join(args.paths), file=sys.stderr)
        return 2
    figures = sum(r["figures"] for r in reports)
    skipped = [r for r in reports if r["skipped"]]
    failing = [r for r in reports if r["failures"]]
    for r in skipped:
        print(f"{r['path']}: {r['skipped']}", file=sys.stderr)
    for r in failing:
        for line in r["failures"]:
            print(f"{r['path']}: {line}")
    checked = len(reports) - len(skipped)
    note = f" ({len(skipped)} skipped: not ftlab figures)" if skipped else ""
    if failing:
        print(f"check_figures: {len(failing)} of {checked} files failed ({figures} figures){note}")
        return 1
    print(f"check_figures: {figures} figures in {checked} files ok{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
