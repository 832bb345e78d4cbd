"""The claims reader's cells of both sides under a header that names them short (iolab.mail.claimed.slashed)."""

from iolab.mail.claimed.slashed import slashed_tables


def test_cells_of_both_sides_under_a_short_with_and_without():
    for caption, first_is_after in (("(w/w.o patch):", True), ("(wo/w patch):", False)):
        lines = ["Results " + caption, "", "bs      IOPS(read)   IOPS(write)", "----    ----------   ----------",
                 "4k      600K/500K    300K/250K", "8k      310K/300K    150K/149K"]
        found = sorted((c.before, c.after) for c in slashed_tables(lines)[0])
        pairs = [(500e3, 600e3), (250e3, 300e3), (300e3, 310e3), (149e3, 150e3)]
        assert found == sorted(pairs if first_is_after else [(a, b) for b, a in pairs])
