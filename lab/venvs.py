"""Virtualenvs of PyPI releases in the lab's cache, each installed once.

Ironic, upstream ironic-inspector and ironic-python-agent run from
virtualenvs of their own under :func:`default_cache_dir`, built from this
interpreter's base Python, so the project's own virtualenv is never
touched. Standard library only: the real agent's child process, in IPA's
virtualenv, imports it.
"""

import fcntl
import logging
import os
import pathlib
import shutil
import subprocess
import sys

LOG = logging.getLogger(__name__)


def default_cache_dir() -> pathlib.Path:
    """Where downloads and the Ironic virtualenv live between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(pathlib.Path.home() / ".cache")
    return pathlib.Path(base) / "ironic-inspector-lab"


def _base_python() -> str:
    """A Python to build a venv with: this venv's base interpreter."""
    candidate = pathlib.Path(sys.base_prefix) / "bin" / "python3"
    return str(candidate) if candidate.exists() else sys.executable


def install_venv(
    venv: pathlib.Path, requirement: str, what: str, duration: str
) -> pathlib.Path:
    """Install ``requirement`` from PyPI into its own virtualenv ``venv``, once.

    A stamp file (``.installed``, holding the requirement) makes later calls
    return at once; a different requirement or an interrupted install starts
    over from an empty venv. Built from this venv's base interpreter, so the
    project's own virtualenv is never touched.
    """
    marker = venv / ".installed"
    if marker.exists() and marker.read_text().strip() == requirement:
        return venv
    venv.parent.mkdir(parents=True, exist_ok=True)
    # test processes running side by side (pytest-xdist) install it once
    with open(venv.parent / f".{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and marker.read_text().strip() == requirement:
            return venv
        return _install(venv, marker, requirement, what, duration)


def _install(
    venv: pathlib.Path, marker: pathlib.Path, requirement: str, what: str, duration: str
) -> pathlib.Path:
    LOG.info("Installing %s into %s (one-time, %s)", what, venv, duration)
    print(
        f"Installing {what} ({requirement}) into {venv} (one-time, {duration})...",
        file=sys.stderr,
        flush=True,
    )
    if venv.exists():
        shutil.rmtree(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([_base_python(), "-m", "venv", str(venv)], check=True)
    result = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", *requirement.split()],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"Installing {what} failed:\n{result.stdout[-3000:]}")
    marker.write_text(requirement + "\n")
    return venv
