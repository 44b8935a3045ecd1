"""The integration tests' CPU ledger: the readings and the table."""

import json
import os
import pathlib
import subprocess
import sys

from lab import procstat
from tools import test_cpu


def test_a_reaped_child_counts_in_its_parents_lifetime_cpu() -> None:
    own_before = procstat.own_cpu_seconds(os.getpid())
    before = procstat.lifetime_cpu_seconds(os.getpid())
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    subprocess.run([sys.executable, "-c", burn], check=True)
    # gone, yet counted (through this process's cutime)
    assert procstat.lifetime_cpu_seconds(os.getpid()) - before >= 0.25
    assert procstat.own_cpu_seconds(os.getpid()) - own_before < 0.25


def _rows(tmp_path: pathlib.Path) -> pathlib.Path:
    rows = [
        {
            "test": "tests/integration/test_a.py::one",
            "wall": 10.0,
            "all": 8.0,
            "ironic": 5.0,
            "postgres": 1.0,
            "pytest": 0.5,
        },
        {
            "test": "tests/integration/test_a.py::two",
            "wall": 3.0,
            "all": 2.0,
            "ironic": 1.0,
            "pytest": 0.5,
        },
        {
            "test": "tests/integration/test_b.py::three",
            "wall": 20.0,
            "all": 30.0,
            "ironic": 1.0,
            "postgres": 2.0,
            "pytest": 1.0,
        },
    ]
    (tmp_path / "cpu-gw0.jsonl").write_text(
        "\n".join(json.dumps(r) for r in rows[:2]) + "\n"
    )
    (tmp_path / "cpu-gw1.jsonl").write_text(json.dumps(rows[2]) + "\n")
    return tmp_path


def test_the_table_puts_the_most_cpu_first_and_sums_every_row(
    tmp_path: pathlib.Path,
) -> None:
    lines = test_cpu.table(test_cpu.load(_rows(tmp_path)), top=2).splitlines()
    assert lines[2] == (
        "| tests/integration/test_b.py::three | 20.0 | 30.0 | 1.0 | 2.0 | 1.0 | 26.0 |"
    )
    assert lines[3].startswith("| tests/integration/test_a.py::one | 10.0 | 8.0 |")
    assert len(lines) == 5  # two rows shown (top), the sum of all three
    assert lines[4] == "| **all 3** | 33.0 | 40.0 | 7.0 | 3.0 | 2.0 | 28.0 |"


def test_by_module_sums_each_modules_tests(tmp_path: pathlib.Path) -> None:
    modules = test_cpu.by_module(test_cpu.load(_rows(tmp_path)))
    by_name = {m["test"]: m for m in modules}
    assert by_name["tests/integration/test_a.py"]["all"] == 10.0
    assert by_name["tests/integration/test_a.py"]["postgres"] == 1.0
    assert test_cpu.main([str(tmp_path), "--by", "module"]) == 0


def test_an_empty_directory_is_an_error(tmp_path: pathlib.Path) -> None:
    assert test_cpu.main([str(tmp_path)]) == 1
