"""Renderers: each module's ``render(report)`` takes a Report (computed data,
iolab.analysis.model) and returns text; none sees CLI arguments or the store."""

from __future__ import annotations

from typing import Callable

from iolab.analysis import Analysis
from iolab.analysis.model import Report, as_report

FORMATS = ("text", "markdown", "json", "html", "csv", "benchstat")
# Formats that show samples, not only the table: they need a Report built from the store.
SAMPLE_FORMATS = ("html", "csv", "benchstat")


def renderer(fmt: str) -> Callable[[Report | Analysis], str]:
    from iolab.report import benchstat, csvout, html, jsonout, markdown, text

    module = {"text": text, "markdown": markdown, "json": jsonout, "html": html, "csv": csvout,
              "benchstat": benchstat}[fmt]
    return lambda report: module.render(as_report(report))
