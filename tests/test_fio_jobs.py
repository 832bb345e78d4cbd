"""What a fio job asks of the target and the clock (iolab.engines.fio_jobs)."""

from iolab.engines import fio_jobs


def test_room_counts_clones_and_shared_files_once():
    job = "[global]\nsize=256M\n[a]\nnumjobs=4\n[b]\nfilename=shared\nnumjobs=8\n[c]\nfilename=shared\nsize=1G\n"
    need, how = fio_jobs.room(fio_jobs.jobs(job))
    assert need == 4 * 256 * 2**20 + 2**30
    assert how[0] == "a: 4 x 256MiB"
    assert fio_jobs.room(fio_jobs.jobs("[j]\nsize=50%\n"))[0] == 0  # of the device: no room of its own
    assert fio_jobs.room(fio_jobs.jobs("[j]\nfilesize=64k\nnrfiles=4\n"))[0] == 4 * 64 * 1024


def test_duration_of_groups_and_bounds():
    timed = "[global]\ntime_based\nruntime=3\n[a]\n[b]\nruntime=5s\nramp_time=1\n[c]\nstonewall\nruntime=2m\n"
    assert fio_jobs.duration(fio_jobs.jobs(timed)) == (6 + 120, True)
    assert fio_jobs.duration(fio_jobs.jobs("[j]\nsize=1G\nruntime=10\n")) == (10, False)  # a cap
    assert fio_jobs.duration(fio_jobs.jobs("[j]\nsize=1G\n")) == (None, False)
    # a variant's options come after the job's own
    assert fio_jobs.duration(fio_jobs.jobs("[j]\nruntime=10\n", {"time_based": True, "runtime": 4})) == (4, True)


def test_directions_follow_rw():
    found = fio_jobs.jobs("[r]\n[w]\nrw=randwrite\n[m]\nreadwrite=randrw:8\n")
    assert [sorted(j.directions) for j in found] == [["read"], ["write"], ["read", "write"]]
