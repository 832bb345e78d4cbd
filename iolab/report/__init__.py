"""Renderers: each takes an Analysis and returns text; none sees CLI arguments."""

from __future__ import annotations

from typing import Callable

from iolab.analysis import Analysis

FORMATS = ("text", "markdown", "json")


def renderer(fmt: str) -> Callable[[Analysis], str]:
    from iolab.report import jsonout, markdown, text

    return {"text": text.render, "markdown": markdown.render, "json": jsonout.render}[fmt]
