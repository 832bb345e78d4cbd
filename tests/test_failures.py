"""Failed cells grouped by their error in general form (iolab.analysis.failures):
the texts are those a trial's run printed, one per cell."""

from pathlib import Path

from iolab.analysis.failures import general, grouped
from iolab.cell import targets
from iolab.cell.sample import Sample

from tests.helpers import experiment

MOUNT = ("mount -t xfs failed (exit 32): mount: {cell}/mnt: wrong fs type, bad option, bad superblock on "
         "/dev/{loop}, missing codepage or helper program, or other error.")
SYSFS = ("sysfs /sys/block/{loop}/queue/read_ahead_kb: writing 'lots' to /sys/block/{loop}/queue/read_ahead_kb "
         "failed: Invalid argument (EINVAL)")


def _failed(seq: int, error: str, variant: str = "patched") -> Sample:
    return Sample(seq=seq, round=seq // 2, iteration=seq // 2, warmup=False, variant=variant,
                  workload="randread", status="failed", error=error)


def test_a_cells_directory_and_loop_device_are_put_in_general_form():
    cell = "/tmp/iolab-run-f7694bcff659/cell1-b4c1b437837f"
    assert general(MOUNT.format(cell=cell, loop="loop0")) == MOUNT.format(cell="<cell dir>", loop="loopN")
    assert general(SYSFS.format(loop="loop12")) == SYSFS.format(loop="loopN")
    assert general("fio: open /tmp/iolab-guest/cell13-0123456789ab/mnt/f: EINVAL") == \
        "fio: open <cell dir>/mnt/f: EINVAL"
    assert general("cannot remove '/srv/x/iolab-cell-aaaaaaaaaaaa/f'") == "cannot remove '<cell dir>/f'"
    assert general("no room in /dev/shm/iolab-img-bbbbbbbbbbbb/image") == "no room in <image dir>/image"
    assert general("scratch /var/tmp/iolab-run-cccccccccccc gone") == "scratch <run dir> gone"
    # what is not iolab's own stays: another directory, a word with loop in it, a short hex name
    for text in ("mount: /mnt/cell1: busy", "loopback0 and loops", "/tmp/iolab-run-abc/cell1-abc",
                 "sysfs /sys/block/sda/queue/scheduler"):
        assert general(text) == text


def test_the_names_follow_the_code_that_makes_the_directories(tmp_path: Path):
    with targets.temp_dir(str(tmp_path), targets.cell_dir_prefix(7)) as made:
        assert general(f"mount: {made}/mnt: busy") == "mount: <cell dir>/mnt: busy"
    with targets.temp_dir(str(tmp_path), targets.IMAGE_DIR) as made:
        assert general(str(made / "image")) == "<image dir>/image"


def test_cells_that_fail_alike_make_one_note_listing_them_all():
    runs = ["/tmp/iolab-run-f7694bcff659/cell1-b4c1b437837f", "/tmp/iolab-run-f7694bcff659/cell4-826a4e437787",
            "/tmp/iolab-run-f7694bcff659/cell2-50e938def242"]
    failed = {("patched", "randread"): [_failed(seq, MOUNT.format(cell=cell, loop=f"loop{seq % 2}"))
                                        for seq, cell in zip((1, 4, 2), runs)]
              + [_failed(9, SYSFS.format(loop="loop1")), _failed(7, SYSFS.format(loop="loop0"))],
              ("base", "randread"): [_failed(0, SYSFS.format(loop="loop0"), variant="base")]}
    found = grouped(failed, experiment())
    assert [(f.variant, f.error, f.cells) for f in found] == [
        ("base", SYSFS.format(loop="loopN"), [0]),  # another variant: a note of its own
        ("patched", MOUNT.format(cell="<cell dir>", loop="loopN"), [1, 2, 4]),
        ("patched", SYSFS.format(loop="loopN"), [7, 9]),
    ]


def test_a_workload_whose_every_cell_failed_shows_its_rows_failed(tmp_path: Path):
    """No cell produced a metric: the rows are those the job would have had
    (a random-read job: read rows), each FAILED, not a bare header."""
    from iolab import analysis
    from iolab.report import renderer
    from iolab.run import runner
    from iolab.store import Store
    from tests.fakes import ScriptedHost

    error = MOUNT.format(cell="/tmp/iolab-run-f7694bcff659/cell1-b4c1b437837f", loop="loop0")
    levels = {"base": 100.0, "broken": 1.0}
    store = Store(tmp_path / "s.db")
    host = ScriptedHost(levels, dict.fromkeys(levels, error))
    run_id = runner.run(experiment(list(levels), 3, report=None), store, host=host)
    text = renderer("text")(analysis.analyse(store.run(run_id), store.samples(run_id)))
    table = text.split("\n\n")[1].splitlines()
    assert [line.split()[-3:] for line in table[1:]] == [["FAILED", "FAILED", "-"]] * 3
    assert "rd BW MiB/s" in table[1] and "rd p99 us" in table[3]
    # one note for the cause that struck both variants (stopped after round 1), its cells counted together
    assert text.count("<cell dir>/mnt") == 1 and "FAILED base, broken / randread: 4 cell(s) [0, 1, 2, 3]" in text
