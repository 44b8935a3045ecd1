"""The lab's rooms and what each may import: servers stand alone,
simulated machines stand on servers, benchmarks and demos on both, and only
the command line imports a benchmark or a demo; no cycle anywhere."""

import pathlib
import textwrap

import pytest

import lab
from tests.import_graph import edges_of, find_cycle, graph_of

LAB = pathlib.Path(lab.__file__).parent

COMMON = frozenset(
    {
        "lab",
        "lab.checkout",
        "lab.introspections",
        "lab.procstat",
        "lab.venvs",
        "lab.waiting",
    }
)
"""Top-level modules every room may import; they import only each other."""

MAY_IMPORT: dict[str, frozenset[str]] = {
    # launchers of real servers and stand-ins: nothing of the lab's own
    # machines, benchmarks or demos
    "servers": frozenset(),
    # simulated machines, their ramdisks and BMCs (the BMCs are servers;
    # a machine can be one of the emulator's systems)
    "machines": frozenset({"servers"}),
    "bench": frozenset({"servers", "machines"}),
    "demos": frozenset({"servers", "machines"}),
    # the command line (python -m lab) runs them all
    "cli": frozenset({"servers", "machines", "bench", "demos"}),
    "__main__": frozenset({"cli"}),
}
"""What each room may import besides the common modules and itself; keep
doc/lab.md ("The rooms") in step."""


def room_of(module: str) -> str:
    """``servers`` for ``lab.servers.etcd``; ``common`` for a common module."""
    if module in COMMON:
        return "common"
    return module.split(".")[1]


def allowed(importer: str, target: str) -> bool:
    if target in COMMON:
        return True
    if importer in COMMON:
        return False  # common modules import only each other
    room = room_of(importer)
    return room_of(target) == room or room_of(target) in MAY_IMPORT[room]


def forbidden_edges(package: pathlib.Path) -> list[str]:
    """``importer -> target (file:line)`` for each import no row allows."""
    found = []
    for name, edges in edges_of(package).items():
        for edge in edges:
            if edge.namespace or allowed(name, edge.target):
                continue
            where = name.replace(".", "/") + ".py"
            found.append(f"{name} -> {edge.target} ({where}:{edge.line})")
    return sorted(set(found))


def test_the_lab_has_no_import_cycle() -> None:
    cycle = find_cycle(graph_of(LAB))
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_every_room_has_a_row() -> None:
    rooms = {room_of(name) for name in graph_of(LAB)} - {"common"}
    assert rooms == set(MAY_IMPORT)


def test_the_rooms_import_what_their_rows_allow() -> None:
    found = forbidden_edges(LAB)
    assert not found, "imports the rooms forbid (see doc/lab.md):\n" + "\n".join(found)


def test_only_the_command_line_imports_a_demo_or_a_benchmark() -> None:
    graph = graph_of(LAB)
    importers = {
        name
        for name, targets in graph.items()
        if any(room_of(t) in ("demos", "bench") for t in targets)
    }
    assert {room_of(name) for name in importers} <= {"cli", "demos", "bench"}
    assert "lab.bench.commands" in graph["lab.cli"]  # the rule has something to see


@pytest.fixture
def broken(tmp_path: pathlib.Path) -> pathlib.Path:
    """A lab whose launcher imports a machine (in a function, as the
    Apache launcher once imported the split cluster) that imports it back,
    and whose benchmark imports a demo."""
    files = {
        "__init__.py": "",
        "waiting.py": "",
        "servers/__init__.py": "",
        "servers/apache.py": "def start():\n    from lab.machines import hardware\n",
        "machines/__init__.py": "",
        "machines/hardware.py": "from lab.servers.apache import start\n",
        "bench/__init__.py": "",
        "bench/throughput.py": "from lab import waiting\nfrom lab.demos import stage\n",
        "demos/__init__.py": "",
        "demos/stage.py": "",
    }
    root = tmp_path / "lab"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_the_rules_catch_a_forbidden_import_and_a_cycle(broken: pathlib.Path) -> None:
    assert forbidden_edges(broken) == [
        "lab.bench.throughput -> lab.demos.stage (lab/bench/throughput.py:2)",
        "lab.servers.apache -> lab.machines.hardware (lab/servers/apache.py:2)",
    ]
    assert find_cycle(graph_of(broken)) == [
        "lab.machines.hardware",
        "lab.servers.apache",
        "lab.machines.hardware",
    ]


def test_each_kind_of_edge() -> None:
    assert allowed("lab.machines.redfish_nodes", "lab.servers.redfish_emulator")
    assert allowed("lab.bench.fleet", "lab.machines.ramdisk")
    assert allowed("lab.demos.in_band", "lab.demos.stage")  # its own room
    assert allowed("lab.servers.etcd", "lab.waiting")  # common
    assert allowed("lab.cli", "lab.demos.in_band")
    assert not allowed("lab.servers.shapes", "lab.machines.dhcp")
    assert not allowed("lab.machines.ramdisk", "lab.bench.wall_time")
    assert not allowed("lab.bench.throughput", "lab.demos.stage")
    assert not allowed("lab.demos.in_band", "lab.bench.stats")
    assert not allowed("lab.waiting", "lab.servers.loopback")  # common
