"""The labelled corpus stays whole: every mail has a label that parses, every
labelled line is a line of its mail, and the split follows its fixed rule."""
import email
import hashlib
import math
import re
import tomllib

import pytest

from tests.corpus import load, part_of, splits, tuned_on
from tests.corpus.loader import LABELS, MAILS

REQUIRED = {"message_id": str, "archive": str, "commit": str, "list": str, "subject": str,
            "kind": str, "forms": list}
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def _lines(text):
    return {line.rstrip() for line in text.splitlines()}


MINUTES = re.compile(r"(\d+)m(\d+(?:\.\d+)?)s")


def _numbers(line):
    """The numbers on a line, with time(1)'s 1m2.934s also read as 62.934 s."""
    found = {float(n) for n in NUMBER.findall(line.replace(",", ""))}
    return found | {int(m) * 60 + float(s) for m, s in MINUTES.findall(line)}


def test_every_mail_has_a_label_and_every_label_a_mail():
    mails = {p.stem for p in MAILS.glob("*.eml")}
    labels = {p.stem for p in LABELS.glob("*.toml")}
    assert mails, "the corpus is empty"
    assert mails == labels, f"mails without label: {sorted(mails - labels)}; labels without mail: {sorted(labels - mails)}"


def test_every_label_parses_with_its_fields():
    for path in sorted(LABELS.glob("*.toml")):
        with open(path, "rb") as f:
            label = tomllib.load(f)
        for key, kind in REQUIRED.items():
            assert isinstance(label.get(key), kind), f"{path.name}: {key}"
        assert label["kind"] in ("patch", "cover"), path.name
        assert path.stem.startswith(label["list"] + "-"), path.name
        for claim in label.get("claims", []):
            assert claim["better"] in ("higher", "lower"), f"{path.name}: {claim['label']}"
            assert isinstance(claim["before"], (int, float)) and isinstance(claim["after"], (int, float))
            assert claim["unit"], f"{path.name}: {claim['label']} has no unit"
        for bench in label.get("benchmark", []):
            assert bench["tool"] and bench["command"], path.name


@pytest.mark.parametrize("mail", load(), ids=lambda m: m.slug)
def test_labelled_lines_are_lines_of_the_mail(mail):
    lines = _lines(mail.text)
    rows = [*mail.label.get("claims", []), *mail.label.get("benchmark", []),
            *mail.label.get("relative", []), *mail.label.get("context", [])]
    for row in rows:
        for key in ("line", "before_line"):
            if key in row:
                assert row[key].rstrip() in lines, f"{mail.slug}: {key} not in the mail: {row[key]!r}"
    msg = email.message_from_bytes(mail.raw)
    assert msg["Message-Id"].strip().strip("<>") == mail.message_id, mail.slug


def _on(value, line):
    return any(math.isclose(value, n, rel_tol=1e-9) for n in _numbers(line))


@pytest.mark.parametrize("mail", load(), ids=lambda m: m.slug)
def test_claim_values_are_on_their_lines(mail):
    for claim in mail.claims:
        if claim.aggregate or claim.derived:
            continue
        assert _on(claim.after, claim.line), f"{mail.slug}: {claim.label} after"
        assert _on(claim.before, claim.before_line or claim.line), f"{mail.slug}: {claim.label} before"


# The 757 mails tuned on (split.toml's tuned_on, samples 1 to 11): each
# sample's held-out part was measured once on 2026-11-28 (26.7%/55.0%,
# 42.1%/72.7%, 18.8%/69.4%, 38.6%/35.1%, 39.4%/56.6%, 16.0%/32.1%, 26.2%/35.6%, 30.2%/66.7%, 31.5%/63.4%, 45.1%/66.7%, 52.0%/81.2% recall/precision),
# then tuned on. The digest of the sorted
# slugs keeps a later mail out of the list.
TUNED_ON = 757
TUNED_ON_DIGEST = "ff93366a75d8011002844f9e9b35486f7fdd5eda91b2ecbfe0b17dec51baafc4"


def test_split_follows_its_rule_and_covers_every_mail():
    assigned = splits()
    mails = load()
    assert set(assigned) == {m.slug for m in mails}
    first = tuned_on()
    assert len(first) == len(set(first)) == TUNED_ON
    assert hashlib.sha256("\n".join(sorted(first)).encode()).hexdigest() == TUNED_ON_DIGEST
    assert set(first) <= set(assigned), sorted(set(first) - set(assigned))
    for mail in mails:
        assert assigned[mail.slug] == part_of(mail.slug, mail.message_id), mail.slug
    assert {m.slug for m in load("tune")} | {m.slug for m in load("held_out")} == set(assigned)
