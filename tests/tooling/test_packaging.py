"""The wheel ships the service only: no lab, no documentation tooling."""

import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    # a copy of the tracked files: a build/ left in the checkout by an
    # earlier build would still hold modules that were moved away
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("*.whl")
    return zipfile.ZipFile(built)


def test_wheel_holds_the_service_only(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    packages = {n.split("/")[0] for n in names if not n.startswith("ironic_")}
    assert packages == {"inspector"}
    assert not [n for n in names if "diagram" in n or "config_reference" in n]
    assert "inspector/db/migrations/script.py.mako" in names
    assert "inspector/db/migrations/versions/0001_initial_schema.py" in names


def test_wheel_installs_the_documentation(wheel: zipfile.ZipFile) -> None:
    docs = [n for n in wheel.namelist() if "/share/doc/ironic-inspector-ng/" in n]
    shipped = {n.rsplit("/", 1)[-1] for n in docs}
    assert {"README.md", "deploy.md", "config-reference.md"} <= shipped


def test_entry_points_name_existing_modules(wheel: zipfile.ZipFile) -> None:
    import importlib

    (entry,) = [n for n in wheel.namelist() if n.endswith("entry_points.txt")]
    for line in wheel.read(entry).decode().splitlines():
        if "=" not in line:
            continue
        module = line.split("=", 1)[1].strip().split(":")[0]
        importlib.import_module(module)
