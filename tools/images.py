"""``make image``: the service's container images, from this repository's
wheel on a Debian base made from Debian's packages, without any registry.

The base is a bookworm root file system that mmdebstrap makes from Debian's
packages (about 2.5 minutes, once: the tarball is kept in the lab's cache
directory) and ``podman import`` turns into a local image. The build context
holds only wheels: this repository's and its dependencies', at the versions
of the project's virtualenv, so the build itself downloads nothing. The
same inputs give the same layers: the tarball and the images are made with
one fixed SOURCE_DATE_EPOCH (``--timestamp``), the wheels carry it too, and
the bytecode holds hashes of the sources, not their times.

    python -m tools.images [--name standalone ...]

Podman runs with runc and ``containers/containers.conf``
(:mod:`lab.servers.container`).
"""

import argparse
import fcntl
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys
import time

from lab.servers.container import RUNTIME, podman_command, podman_env
from lab.venvs import default_cache_dir

ROOT = pathlib.Path(__file__).resolve().parent.parent
CONTAINERS = ROOT / "containers"
CONTAINERFILE = CONTAINERS / "Containerfile"
REPOSITORY = "localhost/ironic-inspector"
NAMES = ("standalone", "api", "conductor", "pxe-filter")
"""The images, each a target of the Containerfile."""

SUITE = "bookworm"
BASE_PACKAGES = ("ca-certificates", "netbase", "python3")
"""What the base adds to Debian's minbase: TLS roots for Ironic and
Keystone over HTTPS, /etc/services and /etc/protocols, the interpreter."""

BASE_TRIM = (
    "path-exclude=/usr/share/doc/*",
    "path-include=/usr/share/doc/*/copyright",
    "path-exclude=/usr/share/info/*",
    "path-exclude=/usr/share/locale/*",
    "path-exclude=/usr/share/man/*",
)
"""What dpkg leaves out of the base (about 50 MB): documentation but the
licences, manual pages, translations."""

BASE_EPOCH = 1700000000
"""The time every file of the base tarball and of the images has
(SOURCE_DATE_EPOCH), and the images' creation time."""

EXTRAS = "postgresql,mysql"
"""The database drivers the images carry beside SQLite."""

PIP = [sys.executable, "-m", "pip", "--disable-pip-version-check"]


def podman(*args: str, check: bool = True) -> "subprocess.CompletedProcess[str]":
    """``podman --runtime runc ARGS``; its output captured, an error raised
    with podman's own message."""
    done = subprocess.run(
        podman_command(*args),
        env=podman_env(),
        capture_output=True,
        text=True,
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"podman {' '.join(args[:2])} failed ({done.returncode}):\n"
            f"{done.stderr[-3000:]}"
        )
    return done


def base_rootfs(cache_dir: pathlib.Path | None = None) -> pathlib.Path:
    """The base's root file system tarball, made once per set of packages
    (side by side builds wait for the one that makes it)."""
    args = [
        "--variant=minbase",
        f"--include={','.join(sorted(BASE_PACKAGES))}",
        *(f"--dpkgopt={option}" for option in BASE_TRIM),
        # merged /usr set up by mmdebstrap: else apt pulls in usrmerge, and
        # Perl with it (about 30 MB)
        "--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr",
        "--mode=root",
        SUITE,
    ]
    key = hashlib.sha256(" ".join([*args, str(BASE_EPOCH)]).encode()).hexdigest()
    folder = (cache_dir or default_cache_dir()) / "images"
    tarball = folder / f"{SUITE}-minbase-{key[:12]}.tar"
    if tarball.exists():
        return tarball
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".rootfs.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tarball.exists():
            return tarball
        print(
            f"Making the {SUITE} base with mmdebstrap into {tarball} "
            "(one-time, about 2.5 minutes)...",
            file=sys.stderr,
            flush=True,
        )
        partial = tarball.with_suffix(".partial.tar")
        env = dict(os.environ, SOURCE_DATE_EPOCH=str(BASE_EPOCH))
        done = subprocess.run(
            ["mmdebstrap", "--quiet", *args, str(partial)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"mmdebstrap failed:\n{done.stdout[-3000:]}")
        partial.replace(tarball)
    return tarball


def base_image(tarball: pathlib.Path) -> str:
    """The base imported into podman under a name its tarball's digest ends
    (imported once; an import of the same tarball gives the same layer)."""
    tag = f"{REPOSITORY}/base:{SUITE}-{tarball.stem.rsplit('-', 1)[-1]}"
    if podman("image", "exists", tag, check=False).returncode != 0:
        podman("import", "--quiet", str(tarball), tag)
    return tag


def source_epoch() -> int:
    """The time the images' files and their creation carry: SOURCE_DATE_EPOCH
    when set, else the base's. Not the last commit's: any commit would then
    change every layer, and podman's cache would never be used."""
    return int(os.environ.get("SOURCE_DATE_EPOCH") or BASE_EPOCH)


def wheelhouse(folder: pathlib.Path, epoch: int) -> pathlib.Path:
    """``folder``/wheels: this repository's wheel, its dependencies' at the
    versions this virtualenv has, and pip's own as ``pip.whl`` (the build
    runs it from there). The dependencies' wheels are kept in the lab's
    cache by their pins: collecting them takes a minute or more."""
    wheels = folder / "wheels"
    if wheels.exists():
        shutil.rmtree(wheels)
    wheels.mkdir(parents=True)
    pins = _pins()
    deps = _dependency_wheels(pins)
    for wheel in sorted(deps.iterdir()):
        shutil.copy2(wheel, wheels / wheel.name)
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(epoch))
    subprocess.run(
        [*PIP, "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(wheels), str(ROOT)],
        check=True,
        env=env,
    )  # fmt: skip
    # the same times every build: podman's layer cache compares them too
    for path in [*wheels.iterdir(), wheels]:
        os.utime(path, (epoch, epoch))
    return wheels


def _pins() -> list[str]:
    """``name==version`` of every package in this virtualenv but the
    project's own (installed editable), sorted."""
    frozen = subprocess.run(
        [*PIP, "freeze", "--exclude-editable", "--all"],
        check=True,
        stdout=subprocess.PIPE,
        text=True,
    ).stdout
    # a line naming a path (a package installed from a folder) pins nothing
    return sorted(line for line in frozen.splitlines() if "==" in line)


def _dependency_wheels(pins: list[str]) -> pathlib.Path:
    """The dependencies' wheels and ``pip.whl``, collected once per set of pins."""
    key = hashlib.sha256("\n".join([EXTRAS, *pins]).encode()).hexdigest()[:12]
    folder = default_cache_dir() / "images" / f"wheels-{key}"
    if (folder / "pip.whl").exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / ".wheels.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "pip.whl").exists():
            _collect(folder, key, pins)
    return folder


def _collect(folder: pathlib.Path, key: str, pins: list[str]) -> None:
    staging = folder.with_name(folder.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    constraints = staging.parent / f"constraints-{key}.txt"
    constraints.write_text("\n".join(pins) + "\n")
    print(
        f"Collecting the dependencies' wheels into {folder} "
        "(one-time, a minute or two)...",
        file=sys.stderr,
        flush=True,
    )
    subprocess.run(
        [*PIP, "wheel", "--quiet", "--wheel-dir", str(staging), "--constraint",
         str(constraints), f"{ROOT}[{EXTRAS}]"],
        check=True,
    )  # fmt: skip
    for own in staging.glob("ironic_inspector_ng-*.whl"):
        own.unlink()  # built afresh on every call
    version = next(p.split("==")[1] for p in pins if p.startswith("pip=="))
    subprocess.run(
        [*PIP, "download", "--quiet", "--no-deps", "--dest", str(staging),
         f"pip=={version}"],
        check=True,
    )  # fmt: skip
    (staging / f"pip-{version}-py3-none-any.whl").replace(staging / "pip.whl")
    if folder.exists():
        shutil.rmtree(folder)
    staging.replace(folder)


def build(
    names: tuple[str, ...] = NAMES, work_dir: pathlib.Path | None = None
) -> dict[str, str]:
    """Builds ``names`` and tags each ``localhost/ironic-inspector/NAME:latest``;
    their image ids by name."""
    work_dir = work_dir or ROOT / ".work" / "image"
    base = base_image(base_rootfs())
    epoch = source_epoch()
    wheelhouse(work_dir / "context", epoch)
    ids = {}
    for name in names:
        iidfile = work_dir / f"{name}.iid"
        podman(
            "build", "--runtime", RUNTIME, "--network", "none",
            "--format", "docker", "--timestamp", str(epoch),
            "--build-arg", f"BASE={base}",
            "--build-arg", f"SOURCE_DATE_EPOCH={epoch}",
            "--target", name, "--tag", f"{REPOSITORY}/{name}:latest",
            "--iidfile", str(iidfile), "--file", str(CONTAINERFILE),
            str(work_dir / "context"),
        )  # fmt: skip
        ids[name] = iidfile.read_text().strip()
    return ids


def sizes(names: tuple[str, ...] = NAMES) -> dict[str, int]:
    """Each image's size in bytes, as ``podman image ls`` counts it."""
    found = {}
    for name in names:
        out = podman("image", "inspect", "--format", "{{.Size}}",
                     f"{REPOSITORY}/{name}:latest").stdout  # fmt: skip
        found[name] = int(out.strip())
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.images", description=__doc__)
    parser.add_argument(
        "--name", action="append", choices=NAMES, help="build only this image"
    )
    args = parser.parse_args(argv)
    names = tuple(args.name or NAMES)
    started = time.monotonic()
    ids = build(names)
    for name, size in sizes(names).items():
        image = ids[name].removeprefix("sha256:")[:12]
        print(f"{REPOSITORY}/{name}:latest  {image}  {size / 1e6:.0f} MB")
    print(f"built in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
