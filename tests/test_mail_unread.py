"""iolab.mail.unread: the blocks of figures of a mail's text that no claim row came from, on lines
written for these tests (tables, a tool's output, prose), and what is passed over (commands, job
files, trailers, changelogs, dmesg and stack dumps, hex, diffstats)."""

import pytest

from iolab.mail.claimed import Claim
from iolab.mail.unread import Block, placed, unread

TABLE = """\
Results on a 4-core VM:

  threads     before      after
  -------     ------      -----
  1           1200        1350
  4           4100        4580
  16          9800       12010

Thanks.
"""

PIPES = """\
| workload | base (MB/s) | patched (MB/s) |
|----------|-------------|----------------|
| seqread  | 2874        | 3305           |
| randread | 812         | 845            |
"""

FIO = """\
Without the patch:
  READ: bw=4994MiB/s (5236MB/s), 4994MiB/s-4994MiB/s (5236MB/s-5236MB/s), io=146GiB (157GB), run=30001-30001msec
    lat (usec): min=20, max=241, avg=99.81, stdev=12.40
"""


def _claim(source: str) -> Claim:
    return Claim("x", 1.0, 2.0, "", "count", None, source=source)


def test_an_aligned_table_is_one_block_from_its_header_to_its_last_row():
    (block,) = unread(TABLE, ())
    assert (block.first_line, block.last_line) == (3, 7)
    assert block.header == "threads before after" and block.figures == 9


def test_a_header_of_two_lines_is_shown_by_its_first():
    (block,) = unread("Intro.\n\n              base      patched\nmessage\nrate (msg/s)  79287     148946\n", ())
    assert (block.first_line, block.last_line, block.header) == (3, 5, "base patched")


def test_a_pipe_table_and_a_tools_output_pasted_are_blocks():
    (pipes,) = unread(PIPES, ())
    assert (pipes.first_line, pipes.last_line, pipes.figures) == (1, 4, 4)
    (fio,) = unread(FIO, ())
    assert (fio.first_line, fio.last_line, fio.header) == (1, 3, "Without the patch:")


@pytest.mark.parametrize("text, lines", [
    ("Sequential reads went from 122 MB/s to 167 MB/s with it.\n", (1, 1)),
    ("The throughput increases from 122 MB/s\nto 167 MB/s (+36%) on the same box.\n", (1, 2)),
    ("base: 6.4 Million IOPS, patch: 6.49 Million IOPS\n", (1, 1)),
])
def test_prose_with_two_figures_with_a_unit_is_a_block(text, lines):
    (block,) = unread(text, ())
    assert (block.first_line, block.last_line) == lines


@pytest.mark.parametrize("text", [
    "We tested this on 2 machines over 3 days.\n",  # figures without a unit, not in columns
    "The fix takes about 1us.\n",  # one figure
    "A 64 KiB folio is compressed in 4 KiB pages,\nand a 2 MiB one in 512 of them.\n",  # sizes in prose
    " fs/ext4/inode.c | 12 ++++++------\n fs/ext4/super.c |  4 ++--\n 2 files changed, 8 insertions(+), 8 deletions(-)\n",
    "Signed-off-by: A Developer <a@example.org>\nLink: https://example.org/r/20250101.12345-1-a@example.org\n",
    "v2: read 10% faster, 250 MB/s now\n  - 3 fixes to the 4k path, 120 us less\n",
    "Changes since v1:\n- dropped the 64 KiB case (was 5% slower)\n- 8 MB/s better on 1 disk\n",
    "$ fio --name=t --rw=randread --bs=4k --iodepth=32 --size=1G --runtime=60s\n",
    "fio --name=t --rw=read --bs=1M --numjobs=8 \\\n    --size=512M --runtime=30 --time_based\n",
    "[global]\nbs=4k\niodepth=32\nsize=1G\nruntime=60\n",
    "[   12.345678] nvme0n1: p1 p2\n[   12.456789] EXT4-fs (nvme0n1p1): mounted, 4096 blocks, 12 ms\n",
    " ? blk_mq_submit_bio+0x1a2/0x5c0\n ? submit_bio_noacct+0x12f/0x4a0\n",
    "00000c00:  58 58 58 58 58 58 58 58 58 58 58 58\n00000c10:  58 58 58 58 58 58 58 58 58 58 58 58\n",
    "Tested on an Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz, 64 cores,\nRAM: 256 GB DDR4, 2 NUMA nodes\n",
    "struct foo {\n        u64 a;      /* 0 8 */\n        u32 b;      /* 8 4 */\n};\n",
    # lines whose only figures are settings
    "old kernel, rw=randread, numjobs=4 iodepth=64\nnew kernel, rw=randread, numjobs=4 iodepth=64\n",
    "null_blk queue_mode=2 submit_queues=8 hw_queue_depth=256\n",
    "Setup: (ioengine=libaio, iodepth=16, numjobs=2,\n        direct=1, bs=64k)\n",
    "   - POLL:   delay=0 budget=64\n   - HYBRID: delay=200 budget=16 weight=70\n",
    # a block whose figures are only changes: no row's two sides can be written from them
    "  --> +3.5% throughput, -22.0% max latency\n  --> +1.2% throughput, -9.7% max latency\n",
    "The warm case runs about 18% faster with it, the cold one\nsees a 12% increase and 1.4x fewer misses.\n",
    "That is a -31.5% reduction when cached and\na -28.0% reduction when not.\n",
])
def test_what_is_not_a_result_is_passed_over(text):
    assert unread(text, ()) == ()


@pytest.mark.parametrize("text", [
    "old kernel: iops=41200 lat=310\nnew kernel: iops=45800 lat=279\n",  # a result's names keep theirs
    "queue_depth=32: 410 MB/s\nqueue_depth=64: 455 MB/s\n",  # a setting beside a result
])
def test_a_result_given_as_key_and_value_is_still_a_block(text):
    assert len(unread(text, ())) == 1


@pytest.mark.parametrize("text", [
    "job        real (mm:ss)   delta\nseq hdd    131:20         +412%\nseq ssd    74:02          +190%\n",  # a side's time
    "The warm case went from 410 usec to 350 usec, about 15% faster.\n",  # both sides and the change
    "with 91% lock contention and 77% sys time, down\nto 25% lock contention and 12.5% sys time\n",  # shares measured
])
def test_a_change_beside_a_sides_value_is_still_a_block(text):
    assert len(unread(text, ())) == 1


def test_a_table_whose_rows_name_a_ramdisk_is_no_machines_description():
    (block,) = unread("device    base   patched\nramdisk   1200   1350\nramfs     900    990\n", ())
    assert (block.first_line, block.last_line, block.figures) == (1, 3, 4)


def test_a_table_drawn_in_box_characters_is_one_block_its_rules_passed_over():
    text = "Results:\n\n┌─────────┬───────┐\n│kernel   │MB/s   │\n├─────────┼───────┤\n│base     │1200   │\n" \
           "│patched  │1350   │\n└─────────┴───────┘\n"
    (block,) = unread(text, ())
    assert (block.first_line, block.last_line, block.header, block.figures) == (4, 7, "│kernel │MB/s │", 2)


def test_a_command_followed_by_its_result_is_a_result():
    (block,) = unread("taskset -c 1 t/io_uring -r5 -p0 /dev/nullb0: 2.18M IOPS, 8.5 GB/s\n", ())
    assert block.figures >= 2


def test_a_table_every_row_of_which_was_read_is_not_listed():
    rows = [line for line in TABLE.splitlines() if line.strip()[:1].isdigit()]
    assert unread(TABLE, [_claim(row) for row in rows]) == ()


def test_a_table_read_in_part_is_listed_with_the_figures_not_read():
    (block,) = unread(TABLE, [_claim("1           1200        1350")])
    assert (block.first_line, block.last_line, block.figures) == (3, 7, 6)


def test_a_claim_read_from_two_sides_or_across_lines_marks_each_line():
    text = "before:\n  4k  IOPS=92.7k, BW=362MiB/s\nafter:\n  4k  IOPS=94.7k, BW=370MiB/s\n"
    assert unread(text, [_claim("4k IOPS=92.7k, BW=362MiB/s / 4k IOPS=94.7k, BW=370MiB/s")]) == ()
    prose = "The throughput increases from 122 MB/s\nto 167 MB/s (+36%) on the same box.\n"
    assert unread(prose, [_claim("The throughput increases from 122 MB/s to 167 MB/s (+36%) on the same box.")]) == ()


def test_blocks_are_numbered_by_the_lines_of_the_file_that_holds_them():
    mail = "From: a@example.org\nSubject: [PATCH] x\n\n" + TABLE + "---\n fs/x.c | 2 +-\n"
    (block,) = placed(unread(TABLE, ()), TABLE, {"x.eml": mail})
    assert block == Block(6, 10, "threads before after", 9, "x.eml")
    encoded = mail.replace("  threads", "=20 threads")  # a quoted-printable copy: not found as written
    assert placed(unread(TABLE, ()), TABLE, {"x.eml": encoded})[0].lines_of == "text"


COUNTERS_THEN_RESULT = """\
Lock statistics on the test box:

  contentions    182734
  wait-max       9981
  acquisitions   44120331

The result:

  job       unpatched   patched   change
  seqwrite  1810 MB/s   2210 MB/s  +22%
  randrw    310 MB/s    342 MB/s   +10%
"""


@pytest.mark.parametrize("text, first", [
    (COUNTERS_THEN_RESULT, 9),  # a table of both sides with a change before counters of no side
    ("slab:   1843 objects, 2211 objects\ninodes: 3120 objects, 4410 objects\n\nBefore: 3.1 GB/s\nAfter: 3.6 GB/s (+16%)\n",
     4),
    ("  1   118   121\n  2   97    99\n\nrandread went from 410 usec to 380 usec, -7%\n", 4),  # units, a change
    # prose of a setup, though it names two sides and two units, after a table of both sides
    ("We ran it for 60 s on a box whose disks write\n3.2 GB/s at most, before and after, with 8 jobs.\n\n"
     "  job   base   patched\n  seq   1200   1350\n  rand  410    455\n", 4),
])
def test_the_block_likeliest_to_hold_a_claim_comes_first(text, first):
    blocks = unread(text, ())
    assert len(blocks) == 2 and blocks[0].first_line == first


def test_blocks_equally_likely_keep_the_texts_order_and_are_numbered_in_their_files_whatever_their_order():
    two = "  4k   118   121\n  64k  97    99\n\nThe same on the\nsecond box, whose\ndisks are\nolder and\nslower:\n\n" \
          "  8k   218   221\n  128k 197   199\n"
    assert [b.first_line for b in unread(two, ())] == [1, 10]  # alike, but more than GAP lines of text apart
    mail = "Subject: x\n\n" + COUNTERS_THEN_RESULT
    assert [(b.first_line, b.lines_of) for b in placed(unread(COUNTERS_THEN_RESULT, ()), COUNTERS_THEN_RESULT,
                                                       {"x.eml": mail})] == [(11, "x.eml"), (5, "x.eml")]


def test_a_mutant_line_is_read_in_bounded_time():
    """Found by tests/test_fuzz_mails.py: a 70 000-letter word took the address pattern 80 s."""
    import time

    began = time.monotonic()
    for line in ("A" * 70_000, "a@" * 30_000, "1=" * 30_000, " 1" * 30_000, "Mon, " * 10_000):
        unread(line + "\n" + line, ())
    assert time.monotonic() - began < 20  # now about 1 s; a loaded CI host: a wide bound


def test_the_dry_run_names_the_blocks_not_read_by_the_lines_of_the_mail(tmp_path):
    from pathlib import Path

    from iolab import mail
    from iolab.mail.reading import reading
    from iolab.run.claimed import unread_lines

    given = Path(__file__).parent / "fixtures" / "mail" / "unread-one-side.mbox"
    assert list(unread_lines(reading(mail.read([given])))) == [
        "  not read: 2 blocks of figures, lines 11-14, 16-16 of unread-one-side.mbox (iolab mail lists them;",
        "    the experiment has [[claims.row]] tables to fill for them)"]
    copy = tmp_path / "sent.mbox"  # a table sent quoted-printable: the text's own line numbers, said so
    copy.write_text(given.read_text().replace("Message-Id:", "Content-Transfer-Encoding: quoted-printable\n"
                                              "Message-Id:").replace("  percentile    usec", "=20 percentile    usec"))
    assert "lines 6-9 of the text read, 17-17 of sent.mbox (iolab" in " ".join(unread_lines(reading(mail.read([copy]))))


@pytest.mark.parametrize("text, last, figures", [
    # headers naming each a side: one place to fill, though their rows differ
    ("Before:\n  read   1200 MB/s\n  write   800 MB/s\n\nAfter:\n  read   1350 MB/s\n  write   860 MB/s\n"
     "  trim   12 MB/s\n", 8, 5),
    # a test's sections, headers the same but for their figures
    ("Run 1 of the test:\n  seq   410 MB/s\n  rand  120 MB/s\n\nRun 2 of the test:\n  seq   610 MB/s\n  rand  150 MB/s\n"
     "  mixed 290 MB/s\n", 8, 5),
    # rows of figures the same shape under other headers, a line of prose between
    ("  threads  before  after\n  1   1200   1350\n  4   4100   4580\n\nand reads:\n\n  threads  read MB/s\n"
     "  1   810   870\n  4   2900   3010\n", 9, 12),
])
def test_blocks_alike_a_few_lines_apart_are_one_block(text, last, figures):
    (block,) = unread(text, ())
    assert (block.first_line, block.last_line, block.figures) == (1, last, figures)


def test_blocks_alike_are_one_only_a_few_lines_apart_and_blocks_unlike_stay_apart():
    near = "Before:\n  read   1200 MB/s\n  write   800 MB/s\n\nAfter:\n  read   1350 MB/s\n  write   860 MB/s\n"
    assert [(b.first_line, b.last_line) for b in unread(near, ())] == [(1, 7)]
    far = near.replace("\n\nAfter:", "\n" + "\nsome words\n" * 5 + "\nAfter:")
    assert [(b.first_line, b.last_line) for b in unread(far, ())] == [(1, 3), (15, 17)]
    unlike = near.replace("After:\n  read   1350 MB/s\n  write   860 MB/s", "Lock statistics:\n  wait-max   9981 us\n"
                          "  contentions  182734  182790  182802")
    assert [(b.first_line, b.last_line) for b in unread(unlike, ())] == [(1, 3), (5, 7)]


def test_blocks_alike_in_turn_are_one_block_and_lines_passed_over_between_blocks_alike_do_not_part_them():
    turns = ("  State   Usage   Rejected\n  S0      766     14\n  S1      1031    9\n\n"
             "524288000 bytes copied, 3.56 s, 140.3 MB/s\n\n"
             "  State   Usage   Rejected\n  S0      802     16\n  S1      1100    12\n\n"
             "524288000 bytes copied, 3.28 s, 152.2 MB/s\n")  # a table and its run's summary, twice
    assert [(b.first_line, b.last_line) for b in unread(turns, ())] == [(1, 11)]
    commands = "$ echo 3 > /proc/sys/vm/drop_caches\n$ fio --name=read --rw=read --bs=1M --size=1G\n"
    sides = "Before:\n  read   1200 MB/s\n  write   800 MB/s\n\n{}\nAfter:\n  read   1350 MB/s\n  write   860 MB/s\n"
    assert [(b.first_line, b.last_line) for b in unread(sides.format(commands * 2), ())] == [(1, 12)]
    far = sides.format(commands * 6)  # more than SPAN lines between
    assert [(b.first_line, b.last_line) for b in unread(far, ())] == [(1, 3), (18, 20)]


def test_no_block_spans_two_parts_of_the_text():
    cover, patch = "Before:\n  read   1200 MB/s\n  write   800 MB/s", "After:\n  read   1350 MB/s\n  write   860 MB/s\n"
    text = "\n\n".join([cover, patch])  # as Mail.text() joins a cover letter and a description
    assert [(b.first_line, b.last_line) for b in unread(text, ())] == [(1, 7)]
    assert [(b.first_line, b.last_line) for b in unread(text, (), [cover, patch])] == [(1, 3), (5, 7)]


def test_a_block_is_numbered_in_its_file_though_the_file_holds_a_line_the_text_read_leaves_out():
    text = "Before:\n  read   1200 MB/s\n  write   800 MB/s\n\nAfter:\n  read   1350 MB/s\n  write   860 MB/s\n"
    mail = "Subject: x\n\n" + text.replace("\n\nAfter:", "\n\n---\nAfter:")  # a patch's notes after its "---"
    (block,) = placed(unread(text, ()), text, {"x.eml": mail})
    assert (block.first_line, block.last_line, block.lines_of) == (3, 10, "x.eml")
