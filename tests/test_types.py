"""The types bind: mypy over iolab/ finds no error.

The choices of the statistics (iolab.stats.kinds), the frozen samples and
the typed report are checked by mypy with the project's settings
([tool.mypy] in pyproject.toml), not only when a run happens to reach them:
a verdict spelt wrong, an optional value used as if it were there, or a dict
splatted into a dataclass fails here. Only iolab/ is checked, not tests/.
"""

import subprocess
import sys

from tests.helpers import REPO


def test_mypy_finds_no_error_in_iolab():
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "iolab"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"mypy over iolab/:\n{result.stdout}{result.stderr}"
    assert result.stdout.startswith("Success: no issues found"), result.stdout
