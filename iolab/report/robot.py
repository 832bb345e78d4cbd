"""The list robot's answers (``iolab watch``): a finished run's reply block as
a mail (RFC 5322, Python's email library: In-Reply-To the series' cover
letter or first patch), and the static page of every series checked.

Pure: the caller (iolab.cli.watch) reads the store, renders each run's
reply block (iolab.report.reply) and writes the files; iolab sends no mail.
"""

from __future__ import annotations

import email.utils
import html
import re
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

# each of analysis.results.WORDS has its own look: an undecided row is not shown as "no change"
WORD_CLASS = {"agrees": "agrees", "opposite": "opposite", "no change found": "none", "undecided": "undecided",
              "not reproduced": "none"}


@dataclass(frozen=True)
class Answer:
    """What iolab found for one series: the claim rows (label, the mail's
    delta, iolab's delta, mark, word) and where its report is."""

    run_id: int
    status: str  # the run's: running | complete | failed | interrupted
    rows: tuple[tuple[str, ...], ...]
    report: str | None  # the run's HTML report, relative to the page
    reply_id: str | None  # the reply mail's Message-Id


@dataclass(frozen=True)
class Line:
    """A series on the page."""

    subject: str
    revision: int
    family: str
    message_id: str
    status: str  # queued | skipped | answered
    reason: str | None
    claims: tuple[dict[str, Any], ...]  # the mail's rows as read
    answer: Answer | None


def _re(subject: str) -> str:
    return subject if re.match(r"^\s*re:", subject, re.I) else f"Re: {subject}"


def _domain(sender: str) -> str:
    address = email.utils.parseaddr(sender)[1]
    return address.rsplit("@", 1)[1] if "@" in address else "iolab.invalid"


def reply(headers: dict[str, Any], text: str, sender: str, run_id: int) -> EmailMessage:
    """The reply to a series: To its author, Cc whom it was sent to, In-Reply-To
    its cover letter or first patch, with the report's reply block as its body."""
    message = EmailMessage()
    message["From"] = sender
    to = str(headers.get("from") or "")
    if to:
        message["To"] = to
    others = [a for a in [*headers.get("to", []), *headers.get("cc", [])]
              if email.utils.parseaddr(a)[1].lower() not in {email.utils.parseaddr(to)[1].lower(),
                                                            email.utils.parseaddr(sender)[1].lower()}]
    if others:
        message["Cc"] = ", ".join(dict.fromkeys(others))
    message["Subject"] = _re(str(headers.get("subject") or ""))
    message["Date"] = email.utils.formatdate(localtime=False)
    message["Message-Id"] = email.utils.make_msgid(f"iolab.run{run_id}", domain=_domain(sender))
    parent = f"<{headers['message_id']}>"
    message["In-Reply-To"] = parent
    message["References"] = " ".join([*(f"<{r}>" for r in headers.get("references", [])), parent])
    message["X-Mailer"] = "iolab watch"
    message.set_content("iolab built this series on its kernel source and ran the workloads chosen for it (the "
                        "mail's own benchmark\nwhere iolab maps it), base against patched:\n\n" + text)
    return message


_STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:80em}table{border-collapse:collapse;margin:.3em 0}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eee}
.agrees{color:#070}.opposite{color:#a00}.none{color:#666}.undecided{color:#850;font-style:italic}.skip{color:#666}code{font-size:90%}"""


def _claims(line: Line) -> str:
    if not line.claims:
        return "<span class=skip>none stated</span>"
    shown = []
    for claim in line.claims[:8]:
        unit = f" {claim.get('unit')}" if claim.get("unit") else ""
        shown.append(html.escape(f"{claim.get('label')}: {claim.get('before'):g} -> {claim.get('after'):g}{unit}"))
    more = f"<br>... {len(line.claims) - 8} more" if len(line.claims) > 8 else ""
    return "<br>".join(shown) + more


def _answer(line: Line) -> str:
    if line.answer is None:
        return f"<span class=skip>{html.escape(line.reason or 'not run')}</span>"
    answer = line.answer
    if answer.status != "complete":
        return f"run {answer.run_id}: {html.escape(answer.status)}"
    if not answer.rows:
        return f"run {answer.run_id}: no claim rows to check"
    cells = "".join(f"<tr><td>{html.escape(r[0])}</td><td>{html.escape(r[1])}</td><td>{html.escape(r[2])} "
                    f"{html.escape(r[3])}</td><td class={WORD_CLASS.get(r[4], 'none')}>{html.escape(r[4])}</td></tr>"
                    for r in answer.rows)
    return f"<table><tr><th>row</th><th>mail</th><th>iolab</th><th>word</th></tr>{cells}</table>"


def _report(line: Line) -> str:
    if line.answer is None:
        return ""
    link = (f"<a href=\"{html.escape(line.answer.report)}\">run {line.answer.run_id}</a>" if line.answer.report
            else f"run {line.answer.run_id}")
    sent = f"<br><small>reply {html.escape(line.answer.reply_id)}</small>" if line.answer.reply_id else ""
    return link + sent


def _side_by_side(lines: list[Line]) -> list[str]:
    """Each series with two or more versions that ran: the versions' answers in columns."""
    out = []
    families: dict[str, list[Line]] = {}
    for line in lines:
        if line.answer is not None and line.answer.status == "complete":
            families.setdefault(line.family, []).append(line)
    for versions in families.values():
        versions = sorted({v.revision: v for v in versions}.values(), key=lambda v: v.revision)
        if len(versions) < 2:
            continue
        labels = list(dict.fromkeys(r[0] for v in versions for r in (v.answer.rows if v.answer else ())))
        head = "".join(f"<th>v{v.revision} (run {v.answer.run_id if v.answer else '?'})</th>" for v in versions)
        body = []
        for label in labels:
            cells = []
            for version in versions:
                row = next((r for r in (version.answer.rows if version.answer else ()) if r[0] == label), None)
                cells.append(f"<td class={WORD_CLASS.get(row[4], 'none')}>{html.escape(row[2])} "
                             f"{html.escape(row[3])} {html.escape(row[4])}</td>" if row else "<td>-</td>")
            body.append(f"<tr><td>{html.escape(label)}</td>{''.join(cells)}</tr>")
        out += [f"<h3>{html.escape(versions[-1].subject)}: versions side by side</h3>",
                f"<table><tr><th>row</th>{head}</tr>{''.join(body)}</table>"]
    return out


def page(lines: list[Line], title: str = "iolab: patch series checked") -> str:
    """The static page: every series checked, newest first, then versions side by side."""
    rows = []
    for line in reversed(lines):
        rows.append(f"<tr><td>{html.escape(line.subject)}<br><small>&lt;{html.escape(line.message_id)}&gt;</small>"
                    f"</td><td>v{line.revision}</td><td>{html.escape(line.status)}</td><td>{_claims(line)}</td>"
                    f"<td>{_answer(line)}</td><td>{_report(line)}</td></tr>")
    table = ("<table><tr><th>series</th><th>version</th><th>status</th><th>the mail's claims</th>"
             f"<th>iolab's answer</th><th>report</th></tr>{''.join(rows)}</table>")
    return "\n".join(["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", f"<title>{html.escape(title)}</title>",
                      f"<style>{_STYLE}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
                      "<p>Directions and ratios of the mail's figures against iolab's, never its figures against "
                      "this machine's.</p>", table, *_side_by_side(lines), "</body></html>", ""])
