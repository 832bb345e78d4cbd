"""The HTML report: self-contained, plots present, user text escaped; loaded
in a real headless Chromium (tests/chromium.py), which must show the plots,
keep hostile names as text, and make no network request."""

from html import escape
from html.parser import HTMLParser

import pytest

from iolab.analysis import history
from iolab.analysis import reports
from iolab.report import renderer
from iolab.report.history import RENDERERS as HISTORY
from iolab.run import runner
from iolab.store import Store
from tests import chromium
from tests.fakes import ScriptedHost
from tests.helpers import experiment

HOSTILE_EXPERIMENT = "</title><script>document.title='pwned'</script>"
HOSTILE_VARIANT = "<img src=x onerror=p()>"  # variant names are at most 24 characters
HOSTILE_WORKLOAD = "<script>alert(1)</script>"


class Dom(HTMLParser):
    """Tags, event-handler attributes and text of a page."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]

    def handle_data(self, data):
        self.text.append(data)


def hostile_experiment(iterations=6):
    return experiment(["base", HOSTILE_VARIANT], iterations, name=HOSTILE_EXPERIMENT,
                      workload=[{"name": HOSTILE_WORKLOAD, "job": "[j]\nrw=randread\n"}],
                      report={"metrics": ["read_bw", "read_p50", "read_p99"]})


@pytest.fixture
def hostile_store(tmp_path, monkeypatch):
    store = Store(tmp_path / "html.db")
    levels = {"base": 100.0, HOSTILE_VARIANT: 80.0}
    first = runner.run(hostile_experiment(), store, host=ScriptedHost(levels))
    second = runner.run(hostile_experiment(), store, host=ScriptedHost(levels, seed=3))
    return store, first, second


def test_page_is_self_contained_and_escaped(hostile_store):
    store, first, _ = hostile_store
    page = renderer("html")(reports.run_report(store, first))
    dom = Dom(page)
    assert dom.tags.count("svg") == 3  # forest, samples and pairs, latency CDF
    assert "script" not in dom.tags and dom.handlers == [] and "img" not in dom.tags
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script" not in page
    assert "http://" not in page.replace("http://www.w3.org/", "")  # only XML namespaces
    assert HOSTILE_WORKLOAD in "".join(dom.text) and HOSTILE_VARIANT in "".join(dom.text)
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    svg = page[page.index("<svg"):]
    assert "&lt;img src=x onerror=p()&gt;" in svg  # names inside the plots are escaped text too


def test_same_data_gives_the_same_page(hostile_store):
    store, first, _ = hostile_store
    report = reports.run_report(store, first)
    assert renderer("html")(report) == renderer("html")(report)


def test_chromium_renders_the_plots_and_keeps_names_as_text(hostile_store, tmp_path):
    store, first, second = hostile_store
    page = tmp_path / "report.html"
    page.write_text(renderer("html")(reports.run_report(store, first)))
    loaded = chromium.load(page)
    dom = Dom(loaded.dom)
    assert dom.tags.count("svg") == 3 and dom.tags.count("table") >= 2
    assert "script" not in dom.tags and dom.handlers == [] and "img" not in dom.tags
    text = "".join(dom.text)
    assert HOSTILE_EXPERIMENT in text and HOSTILE_WORKLOAD in text and HOSTILE_VARIANT in text
    assert f"<title>iolab: {escape(HOSTILE_EXPERIMENT, quote=False)}</title>" in loaded.dom  # no script ran
    assert loaded.page_requests == []


def test_chromium_network_check_can_fail(tmp_path):
    """The control: a page that does fetch is caught (so an empty list means something)."""
    page = tmp_path / "control.html"
    page.write_text('<!DOCTYPE html><p>control</p><img src="http://127.0.0.1:9/canary.png">')
    assert chromium.load(page).page_requests == ["http://127.0.0.1:9/canary.png"]


def test_compare_and_history_pages_render_in_chromium(hostile_store, tmp_path):
    store, first, second = hostile_store
    page = tmp_path / "compare.html"
    html = renderer("html")(reports.compare_report(store, first, second))
    assert "by round" not in html and "not pairs" in html  # runs are compared unpaired
    page.write_text(html)
    dom = Dom(chromium.load(page).dom)
    assert dom.tags.count("svg") == 5  # the forest, and samples and CDF of each variant's group
    found = history.history(store, "read_bw")
    page = tmp_path / "history.html"
    page.write_text(HISTORY["html"](found))
    loaded = chromium.load(page)
    assert Dom(loaded.dom).tags.count("svg") == 1 and loaded.page_requests == []


# Run in the page's copy (the report itself has no script, and its CSP forbids one): each plot's titles
# as Chromium laid them out, whether any two overlap, and whether any lies outside its plot.
LAYOUT = """<script>
const found = [];
document.querySelectorAll("svg.plot").forEach((svg, i) => {
  const box = svg.getBoundingClientRect();
  const titles = [...svg.querySelectorAll('g[id*="-title-"]')].map(g => g.getBoundingClientRect());
  titles.forEach((t, j) => {
    if (t.left < box.left - 1 || t.right > box.right + 1 || t.top < box.top - 1 || t.bottom > box.bottom + 1)
      found.push(`plot ${i} title ${j} cut off`);
    titles.slice(j + 1).forEach((u, k) => {
      if (t.left < u.right && u.left < t.right && t.top < u.bottom && u.top < t.bottom)
        found.push(`plot ${i} titles ${j} and ${j + k + 1} overlap`);
    });
  });
  found.push(`plot ${i}: ${titles.length} titles, ${Math.round(box.width)} px`);
});
const pre = document.createElement("pre");
pre.id = "layout";
pre.textContent = JSON.stringify(found);
document.body.appendChild(pre);
</script>"""


def layout(html: str, tmp_path, name: str) -> list[str]:
    """What LAYOUT found when Chromium showed the page in a window 1200 px wide."""
    import json
    import re

    probe = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html).replace("</body>", LAYOUT + "</body>")
    page = tmp_path / name
    page.write_text(probe)
    dom = chromium.load(page, width=1200).dom
    return json.loads(re.search(r'<pre id="layout">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))


def test_plot_titles_neither_overlap_nor_get_cut_off_at_1200_px(tmp_path):
    """A workload with a long name and many rows beside one that failed in every cell, and a series
    whose step plot titles name long workloads: every title inside its plot, none over another; the
    failed workload's rows get no plot (no empty axes)."""
    from iolab import load

    long = "io_uring-sqpoll-raise-the-SQPOLL-task_work-batch"
    metrics = ["read_bw", "read_p50", "read_p99", "ctx", "ios", "read_iops"]
    workloads = [{"name": long, "job": "[j]\nrw=randread\n"}, {"name": "broken", "job": "[j]\nrw=randread\n"}]
    store = Store(tmp_path / "html.db")
    levels = {"base": 100.0, "patched": 80.0}

    def fail(cell):
        return "fio: Operation not supported" if cell.workload.name == "broken" else None

    run = runner.run(experiment(list(levels), 6, workload=workloads, report={"metrics": metrics}), store,
                     host=ScriptedHost(levels, fail={"base": fail, "patched": fail}))
    html = renderer("html")(reports.run_report(store, run))
    assert "<h3>broken: samples" not in html and "no successful samples to draw" in html
    found = layout(html, tmp_path, "run.html")
    assert [f for f in found if "overlap" in f or "cut off" in f] == [], found
    assert sum(int(f.split(": ")[1].split()[0]) for f in found if ": " in f) >= 8, found  # the titles were seen

    patches = ["0001-a-long-patch-name-for-the-first-step.patch", "0002-and-the-second-one.patch"]
    for name in patches:
        (tmp_path / name).write_text(f"{name}\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1 +1 @@\n-a\n+{name}\n")
    (tmp_path / "linux.tar.gz").write_bytes(b"")
    raw = {"name": "a series", "kernel": {"source": "linux.tar.gz"}, "series": {"patches": patches},
           "workload": [{"name": f"{long}-{i}", "job": "[j]\nrw=randread\n"} for i in range(2)],
           "report": {"metrics": metrics[:4]}, "run": {"iterations": 6, "seed": 7}}
    exp = load.parse(raw, base_dir=str(tmp_path))
    run = runner.run(exp, store, host=ScriptedHost({v.name: 100.0 + 10 * v.step for v in exp.variant}))
    html = renderer("html")(reports.run_report(store, run))
    assert "0001-a-long-patch-name-for-the-first-step.patch" in html and "../" not in html
    found = layout(html, tmp_path, "series.html")
    assert [f for f in found if "overlap" in f or "cut off" in f] == [], found


def test_the_environment_names_patches_not_their_paths():
    from iolab.analysis.envdiff import EnvRow
    from iolab.analysis.model import Report
    from iolab.report import html

    patches = '["../../../../root/.cache/iolab/experiments/mail-1/iolab-mail/0001-ext4-a.patch", "/tmp/x/0002-b.diff"]'
    row = EnvRow("variant.kernel.patches", {"base": "-", "patched": patches}, True, False)
    shown = "".join(html.environment_html(Report(None, environment=(row,))))  # type: ignore[arg-type]
    assert "0001-ext4-a.patch" in shown and "0002-b.diff" in shown and "../" not in shown and "/tmp/" not in shown


def test_a_series_whose_every_cell_failed_has_no_plot_and_renders(tmp_path):
    """Every step failed: no metric has a value, so the steps' figure is left out (it was a
    matplotlib error: a grid of no rows), and the page still renders."""
    from iolab import load

    patches = ["0001-a.patch"]
    (tmp_path / patches[0]).write_text("a\n--- a/mm/readahead.c\n+++ b/mm/readahead.c\n@@ -1 +1 @@\n-a\n+b\n")
    (tmp_path / "linux.tar.gz").write_bytes(b"")
    raw = {"name": "failed", "kernel": {"source": "linux.tar.gz"}, "series": {"patches": patches},
           "workload": [{"name": "w", "job": "[j]\nrw=randread\n"}], "run": {"iterations": 3, "seed": 7}}
    exp = load.parse(raw, base_dir=str(tmp_path))
    store = Store(tmp_path / "s.db")
    run = runner.run(exp, store, host=ScriptedHost({v.name: 100.0 for v in exp.variant},
                                                   fail={v.name: "fio: no device" for v in exp.variant}))
    html = renderer("html")(reports.run_report(store, run))
    assert "each metric over the steps" not in html and "<svg" not in html
