"""A package's imports read from its source: every module's imports of the
package's own modules (function-level ones included, ``TYPE_CHECKING``
ones not), and a cycle among them. The layer tests of ``inspector/``
(tests/unit/test_imports.py) and of ``lab/`` (tests/tooling/test_lab_imports.py)
stand on it."""

import ast
import pathlib
from typing import NamedTuple


def modules_of(package: pathlib.Path) -> dict[str, pathlib.Path]:
    """Every module of ``package`` by dotted name (packages by their own)."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class Import(NamedTuple):
    target: str
    line: int
    namespace: bool
    """A package named only as the place of its submodules (``from pkg import
    sub``): Python runs its ``__init__`` (a cycle may pass through it), but
    nothing of it is used (no layer is crossed by it)."""


def imports_of(
    tree: ast.Module, name: str, is_package: bool, modules: set[str]
) -> list[Import]:
    """The modules of ``modules`` that module ``name`` imports, at any
    level, outside ``TYPE_CHECKING``."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[Import] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for statement in node.orelse:
                visit(statement)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules:
                    found.append(Import(alias.name, node.lineno, False))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            submodules = [
                f"{source}.{alias.name}"
                for alias in node.names
                if f"{source}.{alias.name}" in modules
            ]
            if source in modules:
                only_place = len(submodules) == len(node.names)
                found.append(Import(source, node.lineno, only_place))
            found.extend(Import(sub, node.lineno, False) for sub in submodules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return [found_import for found_import in found if found_import.target != name]


def edges_of(package: pathlib.Path) -> dict[str, list[Import]]:
    """Each module of ``package`` -> its imports of the package's modules."""
    modules = modules_of(package)
    names = set(modules)
    found = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        found[name] = imports_of(tree, name, path.name == "__init__.py", names)
    return found


def graph_of(package: pathlib.Path) -> dict[str, set[str]]:
    """Each module of ``package`` -> the package's modules it imports."""
    return {
        name: {edge.target for edge in edges}
        for name, edges in edges_of(package).items()
    }


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
