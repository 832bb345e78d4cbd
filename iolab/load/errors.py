"""Error messages that name the field: pydantic's errors with the field's
path (``variant["direct"].fio``, ``workload[1].probe``), and short
excerpts of what the user gave (never the whole input)."""

from __future__ import annotations

import re
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from iolab.engines.fio_options import did_you_mean

MAX_ERRORS = 4  # validation errors shown


def excerpt(value: object, limit: int = 40) -> str:
    """A short printable excerpt of user input, for messages (never the whole input)."""
    text = value if isinstance(value, str) else repr(value)
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def field_path(loc: tuple[int | str, ...], raw: dict[str, Any]) -> str:
    """('variant', 1, 'fio') -> variant[1].fio, naming the item where it has a name."""
    parts: list[str] = [""]
    node: Any = raw
    for key in loc:
        if isinstance(key, int):
            item = node[key] if isinstance(node, list) and key < len(node) else None
            name = item.get("name") if isinstance(item, dict) else None
            shown = f'["{name}"]' if isinstance(name, str) and name.isprintable() and len(name) <= 24 else f"[{key}]"
            parts[-1] += shown
        else:
            key_text = str(key)
            parts.append(key_text if key_text.isprintable() and len(key_text) <= 40 else excerpt(key_text, 32))
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            node = None
    return ".".join(part for part in parts if part) or "(file)"


# A union's members, as pydantic names them in an error's location: not fields the user wrote.
_UNION_TAG = re.compile(r"^(str|int|float|bool|literal\[.*\]|list\[.*\]|dict\[.*\]|[A-Z][A-Za-z]+)$")


def _model_at(model: type[BaseModel] | None, loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The model whose field the last key of `loc` names, walking the
    annotations (lists and optionals through) from `model`; None off the models."""
    for key in loc:
        if model is None or isinstance(key, int):
            continue
        field = model.model_fields.get(str(key))
        if field is None:
            return None
        model = _inner_model(field.annotation)
    return model


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is not None:
        for arg in typing.get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def _message(item: Any, loc: tuple[int | str, ...], model: type[BaseModel] | None) -> str:
    message = str(item["msg"]).removeprefix("Value error, ")
    if item["type"] == "extra_forbidden":
        known = _model_at(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), known.model_fields) if known is not None and loc else ""
        return f"unknown field{hint or ' (check its spelling; see docs/experiment.md for the fields)'}"
    if item["type"] == "literal_error":
        return f"{message}, got {excerpt(item['input'])}"
    if item["type"] == "model_type":  # "a valid dictionary or instance of Build"
        return f"should be a table ({{ ... }} or [section]), got {excerpt(item['input'])}"
    return message


def explain(error: ValidationError, raw: dict[str, Any], model: type[BaseModel] | None = None) -> str:
    """The errors by field: a union's members' complaints about one field
    joined ("Input should be a valid string, or a valid integer"), an
    unknown field with the closest known one of its table (``model``: the
    schema the input was validated against)."""
    by_path: dict[str, list[str]] = {}
    for item in error.errors():
        loc = tuple(k for i, k in enumerate(item["loc"])
                    if not (isinstance(k, str) and (k.startswith("function-") or _UNION_TAG.match(k)))
                    and not (k in ("name", "build") and i and item["loc"][i - 1] == "kernel"))  # union tags
        message = _message(item, loc, model)
        if len(message) > 300:
            message = message[:297] + "..."
        found = by_path.setdefault(field_path(loc, raw), [])
        if message not in found:
            found.append(message)
    lines = [f"{path}: {_joined(messages)}" for path, messages in list(by_path.items())[:MAX_ERRORS]]
    if len(by_path) > MAX_ERRORS:
        lines.append(f"(and {len(by_path) - MAX_ERRORS} more errors)")
    return "\n".join(lines)


def _joined(messages: list[str]) -> str:
    """One field's complaints from a union's members: "Input should be a
    valid string, or a valid integer"."""
    first, *rest = messages
    return ", or ".join([first, *(m.removeprefix("Input should be ") for m in rest)])


def name_of(item: dict[str, Any], index: int) -> str:
    name = item.get("name")
    return f'["{name}"]' if isinstance(name, str) and name else f"[{index}]"
