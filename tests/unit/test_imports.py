"""The package's import structure: no cycles, and a lean API process."""

import ast
import pathlib
import subprocess
import sys
import textwrap

import inspector
from tests.import_graph import (
    Import,
    edges_of,
    find_cycle,
    graph_of,
    imports_of,
    modules_of,
)

PACKAGE = pathlib.Path(inspector.__file__).parent


def _modules() -> dict[str, pathlib.Path]:
    """Every module of the package by dotted name (packages by their own)."""
    return modules_of(PACKAGE)


def import_graph() -> dict[str, set[str]]:
    return graph_of(PACKAGE)


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "inspector.db.engine" in graph["inspector.runtime"]  # from x.y import Z
    assert "inspector.api.errors" in graph["inspector.api.app"]  # from x import mod
    assert "inspector.server.wiring" in graph["inspector.wsgi"]  # in a function
    assert "inspector.conductor.rpcapi" not in graph["inspector.runtime"]  # typing


def test_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_import_cycles() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# The layers. A module belongs to a unit: a package of ``inspector``
# (``db``), a top-level module outside the kernel (``wsgi``), or the kernel.
# A row names what a unit may import besides the kernel and itself: units,
# or single modules of a unit (``conductor.rpcapi``). A row may also be kept
# for one module (``conductor.work_queue``): then that module follows its own row,
# its siblings included. Keep doc/layout.md in step.

KERNEL = frozenset(
    {
        "inspector",
        # a page's limit, comma-separated names and FACT=VALUE filters, parsed
        # one way by the API, the manage CLI and the OpenStackClient plugin
        # (which may import only the kernel)
        "inspector.arguments",
        "inspector.exceptions",
        "inspector.faults",
        "inspector.hardware_facts",
        "inspector.connection_pool",
        "inspector.macs",
        "inspector.metrics",
        "inspector.outages",
        "inspector.runtime",
        "inspector.states",
        "inspector.version",
    }
)
"""Top-level modules every unit may import; they import only each other."""

# the Runtime names its members' types
KERNEL_EDGES = frozenset(
    {
        ("inspector.runtime", "inspector.db.engine"),
        ("inspector.runtime", "inspector.locking.base"),
    }
)

MAY_IMPORT: dict[str, frozenset[str]] = {
    "conf": frozenset(),
    "db": frozenset(),
    "baremetal": frozenset(),
    "net": frozenset(),
    # the standalone shape keeps the group and the locks in the database
    "coordination": frozenset({"db"}),
    "locking": frozenset({"coordination", "db"}),
    "hooks": frozenset(),
    # out-of-band inspection (issue 33): sushy and the facts, pure of the
    # database and the workflow; the conductor's start step calls it
    "redfish": frozenset(),
    # the fleet view's analysis (outliers, cabling) is pure: the API and the
    # CLI hand it what they read from the database
    "fleet": frozenset(),
    # actions work on the node context processing hands them
    "rules": frozenset({"hooks"}),
    # the hardware record reads the data as the hooks leave it (and decodes
    # raw LLDP with the hooks' decoder when lldp_basic is off)
    "history": frozenset({"hooks"}),
    # following Ironic's own inspections (issue 47): Ironic's stored data
    # read as a run of the history and recorded; the leader's periodic
    # task (conductor) and the push endpoint (api) call it
    "follow": frozenset({"db", "baremetal", "history", "hooks"}),
    # importing an ironic-inspector 12.x deployment (issue 48): its rules
    # judged as ours are, its data read as a hardware record; the manage
    # command runs it
    "importing": frozenset({"db", "rules", "history", "hooks"}),
    "jsonrpc": frozenset({"net"}),
    "pxe_filter": frozenset({"db", "baremetal"}),
    "intake": frozenset(
        {
            "db",
            "baremetal",
            "conductor.rpcapi",
            # a start in an out-of-band mode is refused at once (400) for a
            # node without Redfish driver_info or with a masked password:
            # the pure check, never sushy
            "redfish.credentials",
            # [redfish]engine = ironic: a node Ironic cannot inspect over
            # Redfish (its inspect interface, its provision state) is
            # refused at once too, by the same kind of pure check
            "redfish.ironic_engine",
        }
    ),
    "conductor": frozenset(
        {
            "conf",
            "db",
            "baremetal",
            "coordination",
            "locking",
            "hooks",
            "rules",
            "history",
            # the out-of-band start step (issue 33)
            "redfish",
            # the leader follows Ironic's own inspections (issue 47)
            "follow",
        }
    ),
    # the client side of the RPC API: the API process loads it, so it
    # knows nothing of the conductor's work
    "conductor.rpcapi": frozenset(),
    # the queue knows no workflow
    "conductor.work_queue": frozenset({"db", "locking"}),
    # the API process is the conductors' RPC client (as Ironic's API, whose
    # hooks import ironic.conductor.rpcapi): the health check asks the broker
    # through rpcapi.py and pings JSON-RPC conductors through probe.py
    "api": frozenset(
        {
            "conf",
            "db",
            "coordination",
            "intake",
            "net",
            "conductor.rpcapi",
            "jsonrpc.probe",
            "pxe_filter.report",
            "rules.validation",
            # the fleet view and its page run the pure analysis of fleet/
            "fleet",
            # API 1.24 (issue 34): masking sensitive rules, POST /v1/rules/test
            "rules.masking",
            "rules.runner",
            "rules.trial",
            # API 1.25 (issue 34 item 2): the built-in rules it lists read-only
            "rules.builtin",
            # Ironic's inspection hook pushes an inspection (issue 47 item
            # 3): checked and recorded by follow/push.py, imported by the
            # view on the first push only (it brings the hardware record)
            "follow.push",
        }
    ),
    # the composition root builds every shape (after its checks, which
    # read the expected cabling too)
    "server": frozenset(
        {
            "conf",
            "fleet",
            "db",
            "baremetal",
            "net",
            "coordination",
            "locking",
            "hooks",
            "rules",
            "history",
            "jsonrpc",
            "pxe_filter",
            "intake",
            "conductor",
            "api",
        }
    ),
    # OpenStackClient's commands (loaded by OSC only): HTTP to the API
    "osc": frozenset(),
    # the OS-process bootstrap: threads, options, logging, signals
    "bootstrap": frozenset({"conf"}),
}
# the entry points: the console scripts and the WSGI module, at the top
MAY_IMPORT["cmd"] = frozenset(MAY_IMPORT) - {"cmd"}
MAY_IMPORT["wsgi"] = frozenset(MAY_IMPORT) - {"cmd", "wsgi"}

PENDING: set[tuple[str, str]] = set()
"""Forbidden edges that another branch of issue 31 removes: empty this set
when it is merged (the test fails on an entry that is no longer an edge)."""


def _short(module: str) -> str:
    return module.removeprefix("inspector.")


def unit_of(module: str) -> str:
    """``db`` for ``inspector.db.engine``; ``kernel`` for a kernel module."""
    if module in KERNEL:
        return "kernel"
    return _short(module).split(".")[0]


def row_of(module: str) -> str:
    """The most specific row of :data:`MAY_IMPORT` that ``module`` follows."""
    name = _short(module)
    while name not in MAY_IMPORT and "." in name:
        name = name.rpartition(".")[0]
    return name


def _allowed(importer: str, target: str) -> bool:
    if target in KERNEL:
        return True
    if importer in KERNEL:
        return (importer, target) in KERNEL_EDGES
    row = row_of(importer)
    if "." not in row and unit_of(target) == row:
        return True  # within its own package
    short = _short(target)
    return any(
        short == entry or short.startswith(f"{entry}.") for entry in MAY_IMPORT[row]
    )


def forbidden_edges() -> list[str]:
    """``importer -> target (file:line)`` for each import no row allows."""
    modules = _modules()
    found = []
    for name, edges in edges_of(PACKAGE).items():
        for edge in edges:
            if edge.namespace or _allowed(name, edge.target):
                continue
            if (name, edge.target) in PENDING:
                continue
            where = modules[name].relative_to(PACKAGE.parent)
            found.append(f"{name} -> {edge.target} ({where}:{edge.line})")
    return sorted(set(found))


def test_every_unit_has_a_row() -> None:
    units = {unit_of(name) for name in _modules()} - {"kernel"}
    assert not units - set(MAY_IMPORT), (
        f"units without a row: {units - set(MAY_IMPORT)}"
    )
    modules = {_short(name) for name in _modules()}
    named = set(MAY_IMPORT) | {e for row in MAY_IMPORT.values() for e in row}
    stale = sorted(named - modules)
    assert not stale, f"the layer table names modules that do not exist: {stale}"


def test_the_layer_rules_hold() -> None:
    found = forbidden_edges()
    assert not found, "imports the layers forbid (see doc/layout.md):\n" + "\n".join(
        found
    )


def test_pending_edges_still_exist() -> None:
    graph = import_graph()
    gone = sorted(edge for edge in PENDING if edge[1] not in graph[edge[0]])
    assert not gone, f"remove from PENDING, these edges are gone: {gone}"


def test_a_package_named_for_its_submodules_crosses_no_layer() -> None:
    modules = set(_modules())
    tree = ast.parse(
        "from inspector.conductor import work_queue\nfrom inspector.db import Nothing\n"
    )
    found = imports_of(tree, "inspector.api.x", False, modules)
    assert found == [
        Import("inspector.conductor", 1, True),
        Import("inspector.conductor.work_queue", 1, False),
        Import("inspector.db", 2, False),  # a name of the package itself
    ]


def test_the_layer_rules_catch_each_kind_of_edge() -> None:
    assert not _allowed("inspector.coordination.members", "inspector.jsonrpc.endpoint")
    assert not _allowed("inspector.wsgi", "inspector.cmd")  # a sibling entry point
    assert not _allowed("inspector.exceptions", "inspector.db.engine")  # kernel
    assert not _allowed("inspector.conductor.work_queue", "inspector.conductor.start")
    assert not _allowed("inspector.api.health", "inspector.conductor.manager")
    assert _allowed("inspector.api.health", "inspector.conductor.rpcapi")
    assert _allowed("inspector.conductor.start", "inspector.conductor.work_queue")
    assert _allowed("inspector.runtime", "inspector.db.engine")
    assert _allowed("inspector.db.engine", "inspector.exceptions")


API_IMPORTS = textwrap.dedent(
    """
    import sys

    import oslo_messaging as messaging
    from oslo_config import cfg

    import inspector.api.app
    import inspector.intake.operator
    import inspector.intake.ramdisk
    import inspector.server.wiring
    import inspector.wsgi
    from inspector.baremetal.client import BaremetalClient
    from inspector.conf import opts
    from inspector.db import engine, migration
    from inspector.locking import factory
    from inspector.db.data_store import DataStores
    from inspector.runtime import ApiRuntime

    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    messaging.set_transport_defaults("ironic_inspector")
    conf([], project="ironic-inspector", default_config_files=[])
    conf.set_override("auth_strategy", "noauth")
    conf.set_override("driver", "noop", group="pxe_filter")
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    rt = ApiRuntime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=factory.from_conf(conf),
        stores=DataStores(conf, db),
        rpc=None,  # no request here casts or lists conductors
        conductors=None,
    )
    app = inspector.api.app.create_app(rt)
    assert app.test_client().get("/").status_code == 200
    print("\\n".join(sorted(sys.modules)))
    """
)

CONDUCTOR_ONLY = (
    "inspector.conductor.manager",
    "inspector.conductor.work_queue",
    "inspector.conductor.processing",
    "inspector.conductor.service",
)


def loaded_by(script: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``script``
    (which prints ``sys.modules``)."""
    result = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=PACKAGE.parent,
    )
    assert result.returncode == 0, result.stderr
    return set(result.stdout.split())


def test_the_api_does_not_load_the_conductor() -> None:
    loaded = loaded_by(API_IMPORTS)
    assert "inspector.api.app" in loaded  # the list is the child's
    conductor = sorted(loaded & set(CONDUCTOR_ONLY))
    hooks = sorted(
        m
        for m in loaded
        if m.startswith("inspector.hooks.") and m != "inspector.hooks.base"
    )
    rules = sorted(m for m in loaded if m.startswith("inspector.rules."))
    assert not conductor, f"the API imports conductor modules: {conductor}"
    assert not hooks, f"the API imports processing hooks: {hooks}"
    assert not rules, f"the API imports rule modules: {rules}"


CONDUCTOR_IMPORTS = textwrap.dedent(
    """
    import sys

    import inspector.cmd.conductor
    import inspector.conductor.reconcile
    import inspector.conductor.service
    import inspector.server.wiring

    print("\\n".join(sorted(sys.modules)))
    """
)


def test_a_conductor_does_not_load_the_api() -> None:
    loaded = loaded_by(CONDUCTOR_IMPORTS)
    assert "inspector.conductor.service" in loaded  # the list is the child's
    api = sorted(
        m
        for m in loaded
        if m == "flask" or m.startswith(("inspector.api.", "inspector.intake."))
    )
    assert not api, f"a conductor imports the API's modules: {api}"
