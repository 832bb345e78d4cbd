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
