"""The integration tests' CPU ledger as a table: ``python -m tools.test_cpu
DIR [--top N] [--by module]`` after ``INSPECTOR_TEST_CPU=DIR pytest
tests/integration ...`` (tests/integration/cpu_ledger.py, doc/testing.md).
"""

import argparse
import json
import pathlib
import sys
from collections.abc import Iterable

COLUMNS = ("wall", "all", "ironic", "postgres", "pytest")


def load(directory: pathlib.Path) -> list[dict[str, object]]:
    """Every test's line from every worker's file."""
    rows = []
    for path in sorted(directory.glob("cpu-*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line]
    return rows


def _number(row: dict[str, object], key: str) -> float:
    value = row.get(key, 0.0)
    return float(value) if isinstance(value, int | float) else 0.0


def by_module(rows: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    """The rows summed per test module."""
    summed: dict[str, dict[str, object]] = {}
    for row in rows:
        module = str(row["test"]).split("::")[0]
        into = summed.setdefault(module, {"test": module})
        for key in COLUMNS:
            into[key] = round(_number(into, key) + _number(row, key), 2)
    return list(summed.values())


def table(rows: list[dict[str, object]], top: int) -> str:
    """A Markdown table, most CPU first: seconds of wall time and CPU (all
    processes of the test's tree, and of which Ironic, PostgreSQL and the
    test process itself); the last line sums every row."""
    rows = sorted(rows, key=lambda r: -_number(r, "all"))
    lines = [
        "| test | wall s | CPU s | Ironic | PostgreSQL | test process | others |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]

    def line(name: str, values: dict[str, float]) -> str:
        others = values["all"] - values["ironic"] - values["postgres"]
        others -= values["pytest"]
        cells = [values[k] for k in COLUMNS] + [others]
        return f"| {name} | " + " | ".join(f"{c:.1f}" for c in cells) + " |"

    total = dict.fromkeys(COLUMNS, 0.0)
    for row in rows:
        values = {k: _number(row, k) for k in COLUMNS}
        for key in COLUMNS:
            total[key] += values[key]
        if len(lines) - 2 < top:
            lines.append(line(str(row["test"]), values))
    lines.append(line(f"**all {len(rows)}**", total))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("directory", type=pathlib.Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--by", choices=("test", "module"), default="test")
    args = parser.parse_args(argv)
    rows = load(args.directory)
    if not rows:
        print(f"no cpu-*.jsonl in {args.directory}", file=sys.stderr)
        return 1
    print(table(by_module(rows) if args.by == "module" else rows, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
