"""Renderers: each module's ``render(report)`` takes a Report (computed data,
iolab.analysis.model) and returns text; none sees CLI arguments or the store.

    formats     FORMATS and renderer(fmt)
    text markdown jsonout html csvout benchstat reply    one per format
    table       the table the text, markdown, HTML and reply formats share:
                headers, legends, footnotes around it, figures in its cells
    series      a series' columns and attribution; plots: the HTML's SVG
    calibration, history    the reports of iolab calibrate and iolab history

This file only re-exports.
"""

from iolab.report.formats import FORMATS, SAMPLE_FORMATS, renderer

__all__ = ["FORMATS", "SAMPLE_FORMATS", "renderer"]
