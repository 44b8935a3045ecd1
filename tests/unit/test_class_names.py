"""Each public class of the package has a name of its own."""

import ast
import collections
import pathlib

import inspector

PACKAGE = pathlib.Path(inspector.__file__).parent

PENDING: set[tuple[str, str]] = set()
"""Classes another branch of issue 31 renames: empty this set when it is
merged (the test fails on an entry that no longer names a class)."""


def class_names(
    package: pathlib.Path = PACKAGE,
) -> dict[str, list[tuple[str, str]]]:
    """Public module-level class name -> (module, file:line) defining it."""
    found: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        where = path.relative_to(package.parent)
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                found[node.name].append((module, f"{where}:{node.lineno}"))
    return found


def duplicates(
    names: dict[str, list[tuple[str, str]]], pending: set[tuple[str, str]]
) -> list[str]:
    """One line per name that more than one class has (pending ones aside)."""
    lines = []
    for name, defined in sorted(names.items()):
        kept = [module for module, _ in defined if (module, name) not in pending]
        if len(kept) > 1:
            lines.append(f"{name}: " + ", ".join(where for _, where in defined))
    return lines


def test_class_names_are_unique() -> None:
    found = duplicates(class_names(), PENDING)
    assert not found, "classes sharing a name:\n" + "\n".join(found)


def test_pending_renames_still_pending() -> None:
    names = class_names()
    gone = sorted(
        (module, name)
        for module, name in PENDING
        if module not in {m for m, _ in names.get(name, [])}
    )
    assert not gone, f"remove from PENDING, these classes are renamed: {gone}"


def test_finds_a_duplicate(tmp_path: pathlib.Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("class Answer:\n    class Inner: ...\n")
    (package / "sub" / "b.py").write_text("class Answer: ...\nclass _Private: ...\n")
    (package / "sub" / "c.py").write_text("class _Private: ...\nclass Inner: ...\n")
    names = class_names(package)
    assert duplicates(names, set()) == ["Answer: pkg/a.py:1, pkg/sub/b.py:1"]
    assert duplicates(names, {("pkg.a", "Answer")}) == []
