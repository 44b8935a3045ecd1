"""The hook's distribution: installing it into Ironic's environment
brings nothing else, its modules import only the standard library (and
Ironic's, inside functions or in the hook's own module), and its entry
point names the hook class."""

import ast
import pathlib
import sys
import tomllib

from tests.unit.push_hook.conftest import HOOK_DIR

PACKAGE = HOOK_DIR / "inspector_push_hook"
OWN = "inspector_push_hook"
IRONICS = {
    # module -> what it may import beyond the standard library, and where
    "hook.py": {
        ("ironic.drivers.modules.inspector.hooks.base", "top"),
        ("ironic.common", "function"),
        ("oslo_config", "function"),
    },
    "settings.py": {("oslo_config", "function")},
}


def _project() -> dict[str, object]:
    project: dict[str, object] = tomllib.loads(
        (HOOK_DIR / "pyproject.toml").read_text()
    )["project"]
    return project


def test_it_depends_on_nothing() -> None:
    assert _project()["dependencies"] == []


def test_its_entry_point_is_the_hook_class() -> None:
    points = _project()["entry-points"]
    assert isinstance(points, dict)
    assert points["ironic.inspection.hooks"] == {
        "inspector_push": "inspector_push_hook.hook:PushHook"
    }
    module, _, attribute = points["oslo.config.opts"]["inspector_push"].partition(":")
    assert module == "inspector_push_hook.settings" and attribute == "list_opts"


def _imports(path: pathlib.Path) -> set[tuple[str, str]]:
    """(module, ``top`` or ``function``) for each import of ``path``."""
    tree = ast.parse(path.read_text())
    found: set[tuple[str, str]] = set()
    top = set(map(id, tree.body))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        where = "top" if id(node) in top else "function"
        found |= {(name, where) for name in names}
    return found


def test_it_imports_the_standard_library_only() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) >= 6
    for path in modules:
        allowed = IRONICS.get(path.name, set())
        for name, where in _imports(path):
            root = name.split(".")[0]
            if root in sys.stdlib_module_names or root == OWN:
                continue
            assert (name, where) in allowed, f"{path.name} imports {name} ({where})"


def test_the_service_is_never_imported() -> None:
    for path in PACKAGE.glob("*.py"):
        roots = {name.split(".")[0] for name, _ in _imports(path)}
        assert "inspector" not in roots, path.name
