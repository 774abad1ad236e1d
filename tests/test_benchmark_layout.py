"""benchmarks/ holds the maintained benchmarks, benchmarks/explore/ the exploration (issue 38).

Every script at the top of benchmarks/ is maintained: ``run_all.sh`` runs it and the README's table
names it; the exploration scripts are run by neither. A new benchmark that is not added to both
fails here instead of silently rotting.
"""

import re
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _scripts(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py")}


def _run_all() -> set[str]:
    return set(re.findall(r"^run (\w+) ", (BENCH / "run_all.sh").read_text(), flags=re.M))


def _readme_table() -> set[str]:
    return set(re.findall(r"^\| `(\w+)\.py` \|", (BENCH / "README.md").read_text(), flags=re.M))


def test_run_all_runs_every_maintained_benchmark_and_no_exploration():
    maintained = _scripts(BENCH)
    assert maintained, "no benchmark scripts found"
    assert _run_all() == maintained
    assert not _run_all() & _scripts(BENCH / "explore")


def test_the_readme_lists_every_maintained_benchmark():
    assert _readme_table() == _scripts(BENCH)
