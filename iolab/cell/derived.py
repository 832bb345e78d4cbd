"""Derived metrics: arithmetic over a sample's metrics, named in the experiment.

    [derived]
    cs_per_io = "ctx / ios"
    sys_cs_per_io = "sys_ctx / disk.ios"
    completions_per_io = "`perf.block:block_rq_complete` / disk.ios"

Grammar: numbers, metric names, + - * /, unary + and -, parentheses.
Nothing else: no calls, no attributes of objects, no powers, no
comparisons; anything else is a ValueError naming the expression.

Names. A plain name is an identifier (ctx, cs_per_io) or dotted
identifiers (disk.ios, vmstat.pgscan_kswapd, sys_cpu.user_s). Any other
metric name is quoted in backticks: `perf.block:block_rq_complete`,
`read_p99.9` (a name with ':', '-', or a dot before a digit). Inside
backticks everything up to the next backtick is the name.

Evaluation never raises for bad data: a division by zero, a metric the
sample lacks or a missing (nan) input gives nan and a reason, so the
cell keeps its other metrics. Derived metrics are computed in the order
given; a later one may use an earlier one.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

_QUOTED = re.compile(r"`([^`]*)`")
_PLACEHOLDER = "__iolab_q{}__"
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}


class Missing(Exception):
    """Internal: the value cannot be computed for this sample (the reason)."""


@dataclass(frozen=True)
class DerivedValue:
    value: float  # nan when missing
    reason: str | None = None  # why it is missing


@dataclass(frozen=True)
class Derived:
    """A parsed, checked derived metric: `name = expr`."""

    name: str
    expr: str
    names: frozenset[str]
    _tree: ast.expr = field(repr=False, compare=False)
    _quoted: dict[str, str] = field(repr=False, compare=False)

    def evaluate(self, metrics: Mapping[str, float]) -> DerivedValue:
        try:
            value = self._eval(self._tree, metrics)
        except Missing as why:
            return DerivedValue(math.nan, f"{self.name} = {self.expr}: {why}")
        return DerivedValue(value)

    def _name(self, node: ast.expr) -> str:
        if isinstance(node, ast.Name):
            return self._quoted.get(node.id, node.id)
        assert isinstance(node, ast.Attribute)
        return f"{self._name(node.value)}.{node.attr}"

    def _show(self, node: ast.expr) -> str:
        text = ast.unparse(node)
        for key, name in self._quoted.items():
            text = text.replace(key, f"`{name}`")
        return text

    def _eval(self, node: ast.expr, metrics: Mapping[str, float]) -> float:
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, (int, float))  # _check let only numbers through
            return float(node.value)
        if isinstance(node, (ast.Name, ast.Attribute)):
            name = self._name(node)
            if name not in metrics:
                raise Missing(f"no metric {name!r} in this sample")
            value = float(metrics[name])
            if math.isnan(value):
                raise Missing(f"metric {name!r} is missing (nan)")
            return value
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, metrics)
            return -operand if isinstance(node.op, ast.USub) else operand
        assert isinstance(node, ast.BinOp)
        left, right = self._eval(node.left, metrics), self._eval(node.right, metrics)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        if right == 0:
            raise Missing(f"division by zero ({self._show(node.right)} = 0)")
        return left / right


MAX_LENGTH = 500  # characters of one expression
MAX_DEPTH = 32  # nesting of parentheses and operators


def _short(text: object, limit: int = 40) -> str:
    text = str(text)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def _depth(tree: ast.AST) -> int:
    """The nesting depth of an expression tree (without recursion)."""
    deepest, todo = 0, [(tree, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        todo.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def parse(name: str, expr: str) -> Derived:
    """Parse and check `name = expr`; ValueError naming the expression if not allowed."""
    where = f"derived metric {_short(name, 32)} = {_short(expr)}"
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError(f"{where}: empty expression")
    if len(expr) > MAX_LENGTH:
        raise ValueError(f"{where}: longer than {MAX_LENGTH} characters")
    quoted: dict[str, str] = {}

    def quote(m: re.Match[str]) -> str:
        if not m.group(1).strip():
            raise ValueError(f"{where}: empty name in backticks")
        key = _PLACEHOLDER.format(len(quoted))
        quoted[key] = m.group(1).strip()
        return f" {key} "

    text = _QUOTED.sub(quote, expr)
    if "`" in text:
        raise ValueError(f"{where}: unbalanced backtick")
    if "__iolab_q" in _QUOTED.sub("", expr):
        raise ValueError(f"{where}: names starting with __iolab_q are reserved")
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (RecursionError, MemoryError):
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels") from None
    except SyntaxError as exc:
        raise ValueError(
            f"{where}: not an arithmetic expression ({exc.msg}); quote names with ':' '-' "
            "or a dot before a digit in backticks, e.g. `perf.block:block_rq_complete`"
        ) from None
    if _depth(tree) > MAX_DEPTH:
        raise ValueError(f"{where}: nested more than {MAX_DEPTH} levels")
    names: set[str] = set()
    _check(tree, where, quoted, names)
    return Derived(name, expr, frozenset(names), tree, quoted)


def _dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _check(node: ast.expr, where: str, quoted: dict[str, str], names: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ValueError(f"{where}: {node.value!r} is not a number")
        try:
            float(node.value)
        except OverflowError:
            raise ValueError(f"{where}: number too large") from None
        return
    if isinstance(node, (ast.Name, ast.Attribute)) and _dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        assert isinstance(node, ast.Name)
        parts.append(quoted.get(node.id, node.id))
        names.add(".".join(reversed(parts)))
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
        _check(node.operand, where, quoted, names)
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        _check(node.left, where, quoted, names)
        _check(node.right, where, quoted, names)
        return
    what = type(node.op).__name__ if isinstance(node, (ast.BinOp, ast.UnaryOp)) else type(node).__name__
    raise ValueError(f"{where}: {what} is not allowed (only numbers, metric names, + - * / and parentheses)")


def parse_all(exprs: Mapping[str, str]) -> list[Derived]:
    """Parse an experiment's [derived] table, in order; ValueError for the first bad one."""
    return [parse(name, expr) for name, expr in exprs.items()]


def compute(
    derived: Mapping[str, str] | list[Derived], metrics: Mapping[str, float]
) -> tuple[dict[str, float], dict[str, str]]:
    """Evaluate derived metrics over one sample's metrics.

    Returns (values, reasons): every derived metric has a value (nan when
    missing) and each missing one a reason. A derived name that is already a
    collected metric is a ValueError (a configuration mistake).
    """
    parsed = parse_all(derived) if isinstance(derived, Mapping) else list(derived)
    scope = dict(metrics)
    values: dict[str, float] = {}
    reasons: dict[str, str] = {}
    for d in parsed:
        if d.name in metrics:
            raise ValueError(f"derived metric {d.name!r} has the name of a collected metric")
        result = d.evaluate(scope)
        values[d.name] = scope[d.name] = result.value
        if result.reason:
            reasons[d.name] = result.reason
    return values, reasons
