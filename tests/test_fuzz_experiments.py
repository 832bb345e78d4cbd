"""A fixed-seed corpus of hostile and broken experiment files (tests/fuzz_experiments.py)
through `iolab run --dry-run --force` (a plan too short to decide is refused
without it; these files test parsing): never a traceback, exit 0 or 2, a short
message naming a field, never the input echoed; hostile files refused."""

import pytest

from iolab import cli
from tests.fuzz_experiments import cases

MAX_LINES = 6
MAX_CHARS = 1200


def test_fuzzed_experiment_files(tmp_path, capsys):
    problems = []
    counts = {"ok": 0, "bad": 0}
    for case in cases(seed=12, count=390):
        path = tmp_path / f"{case.name}.toml"
        path.write_bytes(case.data)
        try:
            code = cli.main(["--store", str(tmp_path / "store.db"), "run", "--dry-run", "--force", str(path)])
        except BaseException as error:  # noqa: BLE001 - a traceback is the finding
            problems.append(f"{case.name}: {type(error).__name__}: {str(error)[:200]}")
            continue
        out, err = capsys.readouterr()
        counts["ok" if code == 0 else "bad"] += 1
        if code not in (0, 2):
            problems.append(f"{case.name}: exit {code}")
        if case.expect == "ok" and code != 0:
            problems.append(f"{case.name}: refused a valid file: {err[:300]}")
        if case.expect == "bad" and code != 2:
            problems.append(f"{case.name}: accepted (exit {code})")
        if code == 2 and (len(err.splitlines()) > MAX_LINES or len(err) > MAX_CHARS):
            problems.append(f"{case.name}: message of {len(err.splitlines())} lines, {len(err)} chars")
        if code == 2 and "iolab:" not in err:
            problems.append(f"{case.name}: exit 2 without a message")
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:40])
    assert counts["ok"] >= 25 and counts["bad"] >= 250  # the corpus has both kinds


@pytest.mark.parametrize("seed", [1, 2])
def test_corpus_is_fixed_by_its_seed(seed):
    first = [c.data for c in cases(seed=seed, count=40)]
    assert first == [c.data for c in cases(seed=seed, count=40)]
