"""Figures told in a paragraph a side (iolab.mail.claimed.narrated)."""

from iolab.mail.claimed.narrated import narrated


def test_two_paragraphs_a_side_each_saying_how_long_each_thing_took():
    text = """Without this change, mounting the array takes 2,400 ms and the journal
replay takes 1.2 s, measured on the test box:

    [    3.100000] md0: mounted

With this change, mounting the array takes 900 ms and the journal replay
takes 450 ms:

    [    1.600000] md0: mounted
"""
    rows = [(c.label, c.before, c.after, c.unit, c.better) for c in narrated(text.splitlines())]
    assert rows == [("array", 2400, 900, "ms", "lower"), ("replay", 1.2, 0.45, "s", "lower")]


def test_one_side_told_gives_no_row():
    text = """With this change, mounting the array takes 900 ms and the journal replay takes 450 ms.
"""
    assert narrated(text.splitlines()) == []


def test_the_reader_returns_the_told_rows():
    from iolab.mail.claimed import claims
    text = """Without this change, mounting the array takes 2,400 ms on the test box:

    [    3.100000] md0: mounted

With this change, mounting the array takes 900 ms:

    [    1.600000] md0: mounted
"""
    assert [(c.before, c.after, c.unit) for c in claims(text)] == [(2400, 900, "ms")]


def test_a_tools_line_under_a_label_is_no_paragraph_told():
    text = """Before:
fsck: pass one completed in 12.5s

After:
fsck: pass one completed in 8.5s
"""
    assert narrated(text.splitlines()) == []


def test_two_sentences_of_one_paragraph_each_opening_with_its_side():
    text = """We ran the metadata stress on an 8-core box for an hour. On the stock
kernel, the scan was completed in 812 ms. With the series applied, the scan was
completed in 640 ms, a gain of a fifth.
"""
    assert [(c.label, c.before, c.after, c.unit) for c in narrated(text.splitlines())] == [("scan", 812, 640, "ms")]
