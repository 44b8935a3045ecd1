"""The package's import structure: no cycles, and a lean API process."""

import ast
import pathlib
import subprocess
import sys
import textwrap

import inspector

PACKAGE = pathlib.Path(inspector.__file__).parent


def _modules() -> dict[str, pathlib.Path]:
    """Every module of the package by dotted name (packages by their own)."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    tree: ast.Module, name: str, is_package: bool, modules: set[str]
) -> set[str]:
    """Inspector modules ``name`` imports, at any level, outside TYPE_CHECKING."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source in modules:
                found.add(source)
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.add(f"{source}.{alias.name}")
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    names = set(modules)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        graph[name] = _imported(tree, name, path.name == "__init__.py", names)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    done: set[str] = set()
    path: list[str] = []
    on_path: set[str] = set()

    def visit(node: str) -> list[str] | None:
        path.append(node)
        on_path.add(node)
        for target in sorted(graph.get(node, ())):
            if target in on_path:
                return path[path.index(target) :] + [target]
            if target not in done:
                cycle = visit(target)
                if cycle:
                    return cycle
        on_path.discard(path.pop())
        done.add(node)
        return None

    for start in sorted(graph):
        if start not in done:
            cycle = visit(start)
            if cycle:
                return cycle
    return None


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
    from inspector.runtime import Runtime

    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    messaging.set_transport_defaults("ironic_inspector")
    conf([], project="ironic-inspector", default_config_files=[])
    conf.set_override("auth_strategy", "noauth")
    conf.set_override("driver", "noop", group="pxe_filter")
    db = engine.Database("sqlite://")
    migration.ensure_schema(db)
    rt = Runtime(
        conf=conf,
        db=db,
        baremetal=BaremetalClient(conf),
        locks=factory.from_conf(conf),
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
        if m.startswith("inspector.processing.") and m != "inspector.processing.base"
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
