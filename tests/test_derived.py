import math

import pytest

from iolab.cell.derived import compute, parse, parse_all


def test_ratio_of_two_metrics():
    values, reasons = compute({"cs_per_io": "ctx / ios"}, {"ctx": 30, "ios": 12})
    assert values == {"cs_per_io": 2.5}
    assert reasons == {}


def test_dotted_and_backtick_names():
    metrics = {"perf.block:block_rq_complete": 300.0, "disk.reads": 100.0, "disk.writes": 50.0, "read_p99.9": 2000.0}
    values, _ = compute(
        {
            "per_io": "`perf.block:block_rq_complete` / (disk.reads + disk.writes)",
            "p999_ms": "`read_p99.9` / 1e3",
        },
        metrics,
    )
    assert values == {"per_io": 2.0, "p999_ms": 2.0}
    assert parse("x", "`perf.block:block_rq_complete` / disk.ios").names == {
        "perf.block:block_rq_complete",
        "disk.ios",
    }


def test_precedence_unary_and_parentheses():
    values, _ = compute({"v": "-a + b * (c - 1) / 2"}, {"a": 1, "b": 4, "c": 3})
    assert values["v"] == 3.0


def test_later_metric_uses_earlier_one():
    values, _ = compute({"cs_per_io": "ctx / ios", "twice": "cs_per_io * 2"}, {"ctx": 10, "ios": 5})
    assert values["twice"] == 4.0


def test_division_by_zero_is_missing_with_reason():
    values, reasons = compute({"cs_per_io": "ctx / ios", "ok": "ctx + 1"}, {"ctx": 10, "ios": 0})
    assert math.isnan(values["cs_per_io"])
    assert "division by zero" in reasons["cs_per_io"] and "ios = 0" in reasons["cs_per_io"]
    assert values["ok"] == 11.0 and "ok" not in reasons


def test_division_by_zero_names_quoted_metric():
    _, reasons = compute({"r": "1 / `perf.block:block_rq_complete`"}, {"perf.block:block_rq_complete": 0})
    assert "`perf.block:block_rq_complete` = 0" in reasons["r"]


def test_missing_and_nan_inputs_are_missing():
    values, reasons = compute({"a": "ctx / ios", "b": "x + 1", "c": "a * 2"}, {"ctx": 1, "ios": 2, "x": math.nan})
    assert values["a"] == 0.5
    assert math.isnan(values["b"]) and "'x' is missing" in reasons["b"]
    _, reasons = compute({"a": "nosuch / 2"}, {})
    assert "no metric 'nosuch'" in reasons["a"]


def test_missing_propagates_to_dependants():
    values, reasons = compute({"a": "x / 0", "b": "a + 1"}, {"x": 1})
    assert math.isnan(values["b"]) and "'a' is missing" in reasons["b"]


@pytest.mark.parametrize(
    "expr",
    [
        "ctx ** 2",
        "ctx // 2",
        "ctx % 2",
        "f(ctx)",
        "__import__('os').system('true')",
        "ctx if ios else 1",
        "ctx[0]",
        "ctx < ios",
        "'text'",
        "True",
        "(1).real",
        "lambda: 1",
        "ctx; ios",
        "`unclosed",
        "``",
        "",
        "ctx ios",
        "perf.block:block_rq_complete / 2",
    ],
)
def test_rejected_expressions_name_the_expression(expr):
    with pytest.raises(ValueError) as err:
        parse("m", expr)
    assert "derived metric 'm'" in str(err.value)
    assert repr(expr) in str(err.value)


def test_unquoted_colon_hint():
    with pytest.raises(ValueError, match="backticks"):
        parse("m", "perf.block:block_rq_complete / disk.ios")


def test_derived_name_clash_is_a_config_error():
    with pytest.raises(ValueError, match="name of a collected metric"):
        compute({"ctx": "ctx * 2"}, {"ctx": 1})


def test_parse_all_keeps_order():
    parsed = parse_all({"b": "1", "a": "b + 1"})
    assert [d.name for d in parsed] == ["b", "a"]
    values, _ = compute(parsed, {})
    assert values == {"b": 1.0, "a": 2.0}
