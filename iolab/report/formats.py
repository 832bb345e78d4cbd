"""The report formats, and the renderer of each by name."""

from __future__ import annotations

from typing import Callable

from iolab.analysis import Analysis
from iolab.analysis.model import Report, as_report

FORMATS = ("text", "markdown", "json", "html", "csv", "benchstat", "reply")
# Formats that show samples, not only the table: they need a Report built from the store.
SAMPLE_FORMATS = ("html", "csv", "benchstat")


def renderer(fmt: str) -> Callable[[Report | Analysis], str]:
    from iolab.report import benchstat, csvout, html, jsonout, markdown, reply, text

    module = {"text": text, "markdown": markdown, "json": jsonout, "html": html, "csv": csvout,
              "benchstat": benchstat, "reply": reply}[fmt]
    return lambda report: module.render(as_report(report))
