"""What the schema's tables share: the error every check raises, the
strict base model, and the value types of sizes, durations and words."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from iolab.units import parse_duration, parse_size


class SpecError(Exception):
    """An experiment file that cannot be run; the message names the field."""


def _size(value: Any) -> int:
    return parse_size(value)


Size = Annotated[int, BeforeValidator(_size)]


def _words(value: Any) -> list[str]:
    """Options given as a list of words or as one shell-like string."""
    if isinstance(value, str):
        return value.split()
    return value


Words = Annotated[list[str], BeforeValidator(_words)]
FioValue = str | int | float | bool


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _seconds(value: Any) -> Any:
    """A duration: seconds, or "90s", "20m", "1h30m"."""
    return parse_duration(value) if isinstance(value, str) else value


Seconds = Annotated[float, BeforeValidator(_seconds), Field(gt=0)]
