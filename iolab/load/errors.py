"""Error messages that name the field: pydantic's errors with the field's
path (``variant["direct"].fio``, ``workload[1].probe``), and short
excerpts of what the user gave (never the whole input)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

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


def explain(error: ValidationError, raw: dict[str, Any]) -> str:
    lines = []
    errors = error.errors()
    for item in errors[:MAX_ERRORS]:
        loc = tuple(k for i, k in enumerate(item["loc"])
                    if not (isinstance(k, str) and k.startswith("function-"))
                    and not (k in ("name", "build") and i and item["loc"][i - 1] == "kernel"))  # union tags
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown field (check its spelling; see README.md for the fields)"
        elif item["type"] == "literal_error":
            message = f"{message}, got {excerpt(item['input'])}"
        if len(message) > 300:
            message = message[:297] + "..."
        lines.append(f"{field_path(loc, raw)}: {message}")
    if len(errors) > MAX_ERRORS:
        lines.append(f"(and {len(errors) - MAX_ERRORS} more errors)")
    return "\n".join(lines)


def name_of(item: dict[str, Any], index: int) -> str:
    name = item.get("name")
    return f'["{name}"]' if isinstance(name, str) and name else f"[{index}]"
