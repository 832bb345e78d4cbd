"""Statistics: central values, spread, tests, verdicts, sequential levels, power.

Pure functions on plain sequences of numbers (one number per round of a
cell). Nothing here does I/O or prints; input the statistics cannot use is
refused (:class:`Refusal`, a ValueError, naming the argument), and
everything a reader must know about a figure travels with it in a
``warnings`` tuple, as benchstat's ``benchmath`` does. Every random step
is seeded.

Modules: ``summary`` (center, CI, spread), ``unpaired`` (Mann-Whitney U,
exact as benchstat; bootstrap delta), ``paired`` (signed-rank of per-round
ratios, Hodges-Lehmann CI), ``verdict`` (Comparison, corrections,
verdicts), ``sequential`` (per-look levels of adaptive runs), ``noise``
(drift, outliers, A/A rate), ``power`` (detectable change), ``tails``
(percentile deltas from merged histograms), ``exact`` (values that do not
vary: the delta as measured, no test), ``choice`` (the test a plan fixes),
``kinds`` (the choices as types: View, Test, Verdict, Family, ...).
"""

from iolab.stats.checks import Refusal
from iolab.stats.exact import compare_exact
from iolab.stats.kinds import (CORRECTIONS, EXACTNESS, FAMILIES, PAIRED, UNPAIRED, VERDICTS, VIEWS, Correction,
                               Exactness, Family, MwuMethod, Refused, Test, Verdict, View)
from iolab.stats.noise import AARate, Trend, aa_false_positive_rate, kendall, outliers, smallest_useful_k, trend
from iolab.stats.paired import MIN_PAIRS, compare_paired, signed_rank
from iolab.stats.power import detectable_change, detectable_change_paired
from iolab.stats.sequential import BOUNDARIES, Sequential, level, sequential_alpha
from iolab.stats.summary import Summary, median_ci_min_n, median_ci_orders, summarize
from iolab.stats.unpaired import DEFAULT_RESAMPLES, MIN_RESAMPLES, compare, min_possible_p, mwu
from iolab.stats.verdict import TESTS, Comparison, adjust_pvalues, decide

__all__ = [
    "VIEWS", "VERDICTS", "EXACTNESS", "Exactness", "compare_exact", "CORRECTIONS", "FAMILIES", "TESTS",
    "View", "Test", "Verdict", "Family", "Correction", "Refused", "MwuMethod", "PAIRED", "UNPAIRED",
    "BOUNDARIES", "MIN_PAIRS", "DEFAULT_RESAMPLES",
    "MIN_RESAMPLES", "Refusal", "Summary", "Comparison", "Sequential", "AARate", "Trend",
    "summarize", "median_ci_min_n", "median_ci_orders", "compare", "compare_paired", "mwu", "signed_rank",
    "min_possible_p", "decide", "adjust_pvalues", "sequential_alpha", "level", "aa_false_positive_rate",
    "smallest_useful_k", "trend", "kendall", "outliers", "detectable_change", "detectable_change_paired",
]
