"""A library's internals are read in one module per library:
tooz's in inspector.coordination.backend, sushy's in
inspector.redfish.connector."""

import ast
import pathlib
from typing import Any

from tooz import coordination

import inspector
from inspector.coordination import backend

PACKAGE = pathlib.Path(inspector.__file__).parent
OWNERS = {
    PACKAGE / "coordination" / "backend.py": "tooz",
    PACKAGE / "redfish" / "connector.py": "sushy",
}
"""The modules that may read a library's private fields, each pinned by
a test of those fields (test_tooz_internals.py, test_sushy_internals.py)."""
PUBLIC_UNDERSCORED = {"_asdict", "_replace"}
"""namedtuple's API, underscored so as not to clash with field names."""
PUBLIC_FUNCTIONS = {"os._exit"}
"""The standard library's own underscored functions (ending a process
without waiting for its threads)."""


def _private_reads(tree: ast.AST) -> list[str]:
    """``x._name`` reads of another object's private fields (``self``,
    ``cls`` and ``super()`` are the object's own)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name, owner = node.attr, node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "setattr", "hasattr")
            and len(node.args) > 1
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            name, owner = node.args[1].value, node.args[0]
        else:
            continue
        if not name.startswith("_") or name.startswith("__"):
            continue
        if name in PUBLIC_UNDERSCORED or ast.unparse(node) in PUBLIC_FUNCTIONS:
            continue
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls"):
            continue
        if isinstance(owner, ast.Call) and ast.unparse(owner.func) == "super":
            continue
        found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_only_the_owners_read_private_fields() -> None:
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in OWNERS:
            continue
        found = _private_reads(ast.parse(path.read_text(), str(path)))
        if found:
            offenders[str(path.relative_to(PACKAGE.parent))] = found
    assert not offenders, (
        f"private fields read outside {sorted(p.name for p in OWNERS)}: {offenders}"
    )


def test_the_check_sees_private_reads() -> None:
    tree = ast.parse(
        "coordinator._client\ngetattr(c, '_dir')\nself._x\nsuper()._y()\nr._asdict()"
    )
    assert _private_reads(tree) == [
        "line 1: coordinator._client",
        "line 2: getattr(c, '_dir')",
    ]


def test_the_file_driver_gives_its_directory(tmp_path: pathlib.Path) -> None:
    coordinator = coordination.get_coordinator(f"file://{tmp_path}", b"test")
    assert backend.direct_access(coordinator) == ("file", str(tmp_path))


def _driver(module: str, **fields: Any) -> Any:
    return type("Driver", (), {"__module__": module, **fields})()


def test_each_driver_gives_its_client() -> None:
    client = object()
    for module, field in (
        ("tooz.drivers.etcd3gw", "client"),
        ("tooz.drivers.redis", "_client"),
        ("tooz.drivers.memcached", "client"),
    ):
        coordinator = _driver(module, **{field: client})
        assert backend.direct_access(coordinator)[1] is client
    coordinator = _driver("tooz.drivers.zookeeper", _client=object())
    assert backend.direct_access(coordinator) == ("zookeeper", None)


def test_stop_refreshing_forgets_the_lock() -> None:
    lock: Any = object()
    coordinator = _driver("tooz.drivers.etcd3gw", _acquired_locks={lock})
    backend.stop_refreshing(coordinator, lock)
    assert not coordinator._acquired_locks
    backend.stop_refreshing(_driver("tooz.drivers.file"), lock)  # nothing to do
