"""The images of ``make image`` under podman (runc, containers/containers.conf):
the standalone one on the host's network against the lab's real Ironic, one
machine introspected, ``podman stop`` draining it; bad input ending the
container at once with a clear message, never a restart loop."""

import os
import pathlib
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from lab.machines.ramdisk import RamdiskPlayer
from lab.servers.container import CONFIG, RUNTIME, UID, ContainerServer
from lab.servers.ironic import IronicServer
from tests.integration.conftest import Client, Lab, start
from tools import images

pytestmark = pytest.mark.skipif(
    not (shutil.which("podman") and shutil.which("mmdebstrap"))
    or not os.path.exists(RUNTIME)
    or os.geteuid() != 0,
    reason="podman, runc or mmdebstrap is missing (make packages installs "
    "them), or not root (the lab runs podman rootful)",
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Every image, built once for the module (the base rootfs comes from
    the lab's cache); their ids by name."""
    return images.build(images.NAMES, tmp_path_factory.mktemp("image"))


@pytest.fixture
def container(
    built: dict[str, str], ironic: IronicServer, tmp_path: pathlib.Path
) -> Iterator[ContainerServer]:
    # power-ons 3 s apart: a start waiting for its slot is a step in flight
    options = {"DEFAULT": {"introspection_delay": "3"}}
    server = ContainerServer(tmp_path, ironic.url, built["standalone"], options)
    yield server
    server.stop()


def test_images_are_lean_and_non_root(built: dict[str, str]) -> None:
    for name, image in built.items():
        config = images.podman("image", "inspect", "--format",
                               "{{.Config.User}} {{.Size}}", image).stdout  # fmt: skip
        user, size = config.split()
        assert user == f"{UID}:{UID}", name
        # 291 MB each when written (a compiler alone would add 100 MB or more)
        assert int(size) < 350e6, f"{name}: {int(size) / 1e6:.0f} MB"
        # no compiler, no pip, no test dependencies
        listing = images.podman(
            "run", "--rm", "--network", "none", image, "python3", "-c",
            "import importlib.util as u, shutil; print(shutil.which('gcc'), "
            "shutil.which('pip'), u.find_spec('pytest'), u.find_spec('inspector'))",
        ).stdout  # fmt: skip
        assert listing.split()[:3] == ["None"] * 3, (name, listing)
        assert listing.split()[3] != "None", (name, listing)


def test_standalone_introspects_and_drains_on_podman_stop(
    container: ContainerServer, lab: Lab
) -> None:
    container.start(timeout=120)
    health = container.podman("healthcheck", "run", container.container)
    assert health.returncode == 0, health.stdout + health.stderr
    (machine, uuid), (_, second), (_, third) = lab.machines(3)
    client = Client(container.url)
    player = RamdiskPlayer(lab.api, container.url, [machine])
    player.start()
    try:
        start(client, uuid)
        status = client.wait_for(uuid, "finished", "error", timeout=60)
    finally:
        player.stop()
    assert status["state"] == "finished", status
    assert lab.api.node(uuid)["properties"]["cpus"] == machine.cpus
    # SIGTERM while the third start waits 3 s for its power-on slot: it is
    # finished before the process ends, not cut short
    start(client, second)
    start(client, third)
    client.wait_for(second, "waiting")
    assert container.stop() == 0, container.log_tail()
    log = container.log_file.read_text()
    assert "takes no more casts; finishing its 1 step(s)" in log, log[-3000:]
    assert "ironic-inspector stopped" in log, log[-3000:]
    assert "unfinished" not in log, log[-3000:]
    assert (container.data_dir / "inspector.sqlite").stat().st_uid == UID
    # the state outlives the container: a new one finds both started
    again = ContainerServer(container.work_dir, container.ironic_url, container.image)
    again.start(timeout=120)
    try:
        for uuid in second, third:
            status = Client(again.url).get(f"/v1/introspection/{uuid}").json()
            assert status["state"] == "waiting", status
    finally:
        assert again.stop() == 0, again.log_tail()


def _run(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Runs a container to its end: a bad start must end, not loop."""
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=90)


def test_missing_configuration_exits_at_once(container: ContainerServer) -> None:
    done = _run(
        ["podman", "--runtime", RUNTIME, "run", "--rm", "--network", "none",
         container.image],
        container.env,
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert CONFIG in done.stdout + done.stderr


def test_unreadable_configuration_exits_at_once(container: ContainerServer) -> None:
    container.prepare()
    container.config_file.chmod(0o600)  # root's: the service's user cannot read it
    done = _run(container.command(), container.env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert CONFIG in done.stdout + done.stderr


def test_read_only_data_volume_exits_at_once(
    built: dict[str, str], ironic: IronicServer, tmp_path: pathlib.Path
) -> None:
    server = ContainerServer(
        tmp_path, ironic.url, built["standalone"], data_options="ro"
    )
    server.prepare()
    done = _run(server.command(), server.env)
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert (
        "cannot create or write the SQLite file "
        "/var/lib/ironic-inspector/inspector.sqlite"
    ) in output, output
