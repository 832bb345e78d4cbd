"""A table's columns named by what the change brings, not by a side's word.

A subject that adds, introduces, supports or enables a thing (``Add autocork
support``, ``introduce numa cling feature``, ``iopoll support for ... passthrough``,
``Add support Weighted Round Robin``) names the after column of a table that
shows it: the column whose name is that thing (``AutoCork``, ``ng + cling``,
``WRR``, the letters of the words it abbreviates) or a plainer column's name
with it (``passthru`` / ``passthru-poll``, ``bitmap`` / ``llbitmap``,
``v6.8_kernel`` / ``v6.8_kernel_disable_host_tagset`` under "disable ... host
tagset"). Its before is the plain column it extends, the one ``no``/``w/o``
it, or, of two columns, the other; other columns are context (a reference
beside the two sides, ``TCP | SMC-NoCork | SMC-AutoCork``).
"""

from __future__ import annotations

import re

from iolab.mail.claimed.naming import side_of

_BRINGS = r"(?:add|introduc|support|implement|enabl|disabl|us(?=e|ing)|convert\w*\s+to|switch\w*\s+to)"
_VERB = re.compile(rf"\b{_BRINGS}\w*\b", re.I)
_THING = re.compile(r"([\w/.+-]+(?:\s+[\w/.+-]+){0,3})\s+(?:support|feature|mode|option)\b", re.I)
_CUT = re.compile(r"\s(?:for|in|on|when|if|by|from|via|under)\s", re.I)
_PLAIN = re.compile(r"^(?:no|non|w/o|without)[\s_-]*", re.I)
_BASE = re.compile(r"^(?:normal|default|origin|regular|plain|legacy|classic|none|off|stock|base(?:line)?|vanilla)$", re.I)


def _subject(line: str) -> str:
    """A subject line without its tags (``[PATCH v3 0/5]``)."""
    return re.sub(r"^subject:\s*|\[[^]]*\]", " ", line, flags=re.I).strip()


def brought_words(about: list[str]) -> tuple[set[str], set[str]]:
    """What the subjects say the change brings, as words: what follows the verb, the verb among them (a
    column ``..._disable_host_tagset`` under "disabled shared host tagset"), up to a preposition, a thing
    before ``support`` or ``feature``, the area before the last colon, the initials of a capitalised name;
    and all the subjects' words (to tell apart columns that both extend a plain one)."""
    brought: set[str] = set()
    every: set[str] = set()
    for line in about:
        text = _subject(line)
        words = _words(text)
        every |= words
        verb = _VERB.search(text)
        spans = [_CUT.split(text[verb.start():] + " ")[0]] if verb else []
        spans += [m.group(1) for m in _THING.finditer(text)]  # "iopoll support", "numa cling feature"
        if spans and ":" in text:
            spans.append(text.rsplit(":", 1)[0])  # "md/llbitmap: introduce ...": the area it brings
        for span in spans:
            brought |= _words(span)
            brought.add(_initials(span))
    return {w for w in brought if len(w) >= 2}, every


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.split(r"[^A-Za-z0-9]+", text) if w}


def _initials(span: str) -> str:
    """The letters of a run of three or more capitalised words (``Weighted Round Robin``: ``wrr``)."""
    span = " ".join(w for w in span.split() if not _VERB.fullmatch(w))  # "Introduce Deficit Round Robin"
    runs = re.findall(r"(?:\b[A-Z][a-z]+\s+){2,}[A-Z][a-z]+\b", span)
    return "".join(w[0] for w in runs[0].split()).lower() if runs else ""


def _named(part: str, brought: set[str]) -> bool:
    """Whether a column's part (a word, or letters added to a plain name) is a thing brought: one of the
    words, a word it begins like (five letters, ``disable`` for ``disabled``) or within (``poll``: ``iopoll``)."""
    part = part.lower()
    return any(part == w or len(part) >= 5 and w.startswith(part[:5]) and len(w) >= 5 or
               len(part) >= 4 and part in w for w in brought)


def _extra(plain: str, name: str) -> list[str] | None:
    """What a name adds to a plainer one (``passthru`` / ``passthru-poll``: ``poll``; ``bitmap`` /
    ``llbitmap``: ``ll``), or None where it is not that name extended."""
    a, b = plain.strip().lower(), name.strip().lower()
    if not a or a == b or a not in b or not (b.startswith(a) or b.endswith(a)):
        return None
    words = [w for w in re.split(r"[^a-z0-9]+", b.replace(a, " ", 1)) if w]
    return words or None


def _apart(first: str, second: str) -> tuple[str, str]:
    """Two names without the words they share at their start and end (``SMC-NoCork`` / ``SMC-AutoCork``:
    ``nocork``, ``autocork``)."""
    a, b = ([w for w in re.split(r"[^a-z0-9]+", n.lower()) if w] for n in (first, second))
    while a and b and a[0] == b[0]:
        a, b = a[1:], b[1:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    return "".join(a), "".join(b)


def _brings(plain: str, name: str, brought: set[str]) -> bool:
    """Whether a column is a plainer one with a thing brought (``passthru`` / ``passthru-poll``), or the
    thing against its absence (``SMC-NoCork`` / ``SMC-AutoCork``, ``no-cling`` / ``cling``)."""
    added = _extra(plain, name)
    if added is not None and (name.strip().lower() in brought or all(_named(w, brought) for w in added)):
        return True
    if _PLAIN.match(plain) and _apart(_PLAIN.sub("", plain), name) == ("", "") and _named(name.strip(), brought):
        return True  # "no-cling" / "cling"
    a, b = _apart(plain, name)
    return bool(b) and b in brought and bool(_PLAIN.match(a)) and _PLAIN.sub("", a) in ("", b, b[-len(a) + 2:])


def brought_columns(names: list[str], about: list[str]) -> list[tuple[int, int, str]]:
    """A header's (before, after, key) columns where the subjects name what the after column brings:
    the plain column it extends or the one without it before; of two columns, a baseline's name
    (``normal``, ``origin``) against the other."""
    brought, every = brought_words(about) if about else (set(), set())
    if not brought or len(names) < 2:
        return []
    pairs = [(i, j, "") for j, name in enumerate(names) for i, plain in enumerate(names)
             if i != j and _brings(plain, name, brought)]
    if len(pairs) > 1:  # several plain names extended alike ("block-poll", "passthru-poll"): the subjects' own
        pairs = [p for p in pairs if all(_named(w, every) for w in _words(names[p[1]]))]
    if not pairs and len(names) == 2:
        said = [any(_named(w, brought) for w in _words(n) if len(w) >= 4) or n.strip().lower() in brought
                for n in names]
        base = [bool(_BASE.match(n.strip())) or side_of(re.sub(r"[-_]", " ", n)) == "before" for n in names]
        pairs = [(1 - said.index(True), said.index(True), "")] if said.count(True) == 1 and \
            base[1 - said.index(True)] and not base[said.index(True)] else []
    return pairs if len(pairs) == 1 else []
