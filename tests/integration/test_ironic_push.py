"""The inspection hook inside a real Ironic 39 (issue 47 item 3): the
hook's distribution installed beside Ironic's virtualenv, enabled in
``[inspector]hooks``; Ironic inspects (agent, the test as the ramdisk)
while the service is down, then silent, then up with http_basic: every
inspection ends well, the hook adds at most its timeout, and each
inspection is recorded once, from the push or the spool's resend."""

import contextlib
import functools
import gzip
import io
import pathlib
import shutil
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import bcrypt
import pytest

from lab.machines import ironic_agent
from lab.machines.enroll import IronicAPI
from lab.servers.inspector import InspectorServer
from lab.servers.ironic import IronicServer
from lab.venvs import default_cache_dir
from lab.waiting import wait_until
from tests.integration.conftest import Client, Lab

ROOT = pathlib.Path(__file__).resolve().parents[2]
USER, PASSWORD = "ironic", "push-s3cret"
TIMEOUT = 2.0
"""The hook's [inspector_push]timeout."""


@pytest.fixture(scope="module")
def hook_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """The hook installed with ``pip install --target``, from a copy of
    its directory (a build leaves files beside the sources)."""
    work = tmp_path_factory.mktemp("push-hook")
    source = work / "source"
    shutil.copytree(
        ROOT / "ironic-push-hook",
        source,
        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"),
    )
    target = work / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(source),
        ],
        check=True,
        capture_output=True,
    )
    return target


@pytest.fixture(scope="module")
def inspector(tmp_path_factory: pytest.TempPathFactory) -> InspectorServer:
    """The service, not started: Ironic needs its address first."""
    work = tmp_path_factory.mktemp("inspector-push")
    users = work / "htpasswd"
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    users.write_text(f"{USER}:{hashed}\n")
    logs = work / "ramdisk-logs"
    logs.mkdir()
    return InspectorServer(
        work,
        "http://127.0.0.1:1",  # set once Ironic is made
        options={
            "DEFAULT": {
                "auth_strategy": "http_basic",
                "http_basic_auth_user_file": str(users),
            },
            "processing": {
                "ramdisk_logs_dir": str(logs),
                "always_store_ramdisk_logs": "True",
            },
        },
    )


@pytest.fixture(scope="module")
def spool(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return tmp_path_factory.mktemp("push-spool")


@pytest.fixture(scope="module")
def ironic(
    hook_dir: pathlib.Path,
    inspector: InspectorServer,
    spool: pathlib.Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[IronicServer]:
    """An Ironic of this module's own, with the hook enabled."""
    server = IronicServer(
        default_cache_dir(),
        tmp_path_factory.mktemp("ironic-push"),
        extra_config={
            "inspector": {"hooks": "$default_hooks,inspector_push"},
            "inspector_push": {
                "url": inspector.url,
                "auth_type": "http_basic",
                "username": USER,
                "password": PASSWORD,
                "timeout": str(TIMEOUT),
                "spool_dir": str(spool),
            },
        },
        python_path=[hook_dir],
    )
    server.start()
    inspector.ironic_url = server.url
    yield server
    server.stop()


@contextlib.contextmanager
def silent_port(port: int) -> Iterator[None]:
    """``port`` accepts connections and never answers."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


def tarball(text: str) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        content = text.encode()
        info = tarfile.TarInfo("journal")
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    return out.getvalue()


def inspects(api: IronicAPI, uuid: str, payload: dict[str, Any]) -> float:
    """Ironic inspects ``uuid``: the seconds from the ramdisk's post to
    ``manageable``, the stretch the hook runs in."""
    _node, took = ironic_agent.inspect_timed(api, uuid, payload, interval=0.02)
    return took


def spooled(spool: pathlib.Path) -> int:
    return len(list(spool.glob("*.json")))


def history(client: Client, uuid: str) -> list[dict[str, Any]]:
    resp = client.get(f"/v1/introspection/{uuid}/history")
    if resp.status_code == 404:
        return []
    assert resp.status_code == 200, resp.text
    entries: list[dict[str, Any]] = resp.json()["history"]
    return entries


def test_the_hook_never_holds_ironic_and_every_inspection_arrives(
    ironic: IronicServer, inspector: InspectorServer, spool: pathlib.Path
) -> None:
    lab = Lab(IronicAPI(ironic.url), seed=49)
    (m_down, down), (m_silent, quiet), (m_up, up) = lab.machines(3)

    # the service down: nothing listens, the push is spooled at once
    took_down = inspects(lab.api, down, m_down.payload())
    assert spooled(spool) == 1

    # the service silent: the hook gives up after its timeout, its worker
    # spools the push when its own request times out
    with silent_port(inspector.port):
        took_silent = inspects(lab.api, quiet, m_silent.payload())
        wait_until(
            lambda: spooled(spool),
            10,
            "the silent push spooled",
            until=lambda n: n == 2,
        )

    inspector.start()
    try:
        client = Client(inspector.url)
        client.http.auth = (USER, PASSWORD)
        logs = tarball("ironic-python-agent: hello from the ramdisk\n")
        took_up = inspects(lab.api, up, m_up.payload(logs=logs))

        # its own push, then the two spooled ones, in the same call
        for uuid in (up, down, quiet):
            runs = wait_until(
                functools.partial(history, client, uuid),
                15,
                f"the inspection of {uuid} recorded",
            )
            assert [(r["source"], r["interface"]) for r in runs] == [
                ("ironic", "agent")
            ], runs
        assert spooled(spool) == 0
        written = list((inspector.work_dir / "ramdisk-logs").iterdir())
        assert [p.name.startswith(up) for p in written] == [True], written
        assert gzip.decompress(written[0].read_bytes()).count(b"hello from") == 1

        # a push Ironic does not vouch for (a start after Ironic's last
        # finish), an older one, and one without credentials
        forged = {
            "node_uuid": up,
            "inspection_started_at": "2099-01-01T00:00:00+00:00",
            "inventory": m_up.inventory,
        }
        refused = client.post("/v1/ironic/inspections", json=forged)
        assert refused.status_code == 409, refused.text
        older = {**forged, "inspection_started_at": "2026-01-01T00:00:00+00:00"}
        stale = client.post("/v1/ironic/inspections", json=older)
        assert stale.status_code == 200 and not stale.json()["recorded"], stale.text
        anonymous = Client(inspector.url).post("/v1/ironic/inspections", json=forged)
        assert anonymous.status_code == 401
        assert len(history(client, up)) == 1
    finally:
        assert inspector.stop() == 0, inspector.log_tail()

    # the follower beside the hook: its first (whole) poll sees the three
    # ended (Ironic cleared their starts) and records none a second time
    inspector.options["ironic_follow"] = {"enabled": "True", "poll_interval": "1"}
    inspector.start()
    try:
        client = Client(inspector.url)
        client.http.auth = (USER, PASSWORD)
        wait_until(
            lambda: client.get("/metrics").text,
            30,
            "the follower's first poll",
            until=lambda text: (
                "ironic_inspector_ironic_follow_last_poll_failed 0.0" in text
            ),
        )
        time.sleep(2)  # two more polls
        for uuid in (up, down, quiet):
            assert len(history(client, uuid)) == 1, history(client, uuid)
        text = client.get("/metrics").text
        assert 'ironic_inspector_follow_runs_total{way="poll"}' not in text, text
    finally:
        assert inspector.stop() == 0, inspector.log_tail()

    print(
        f"Ironic's agent inspection, post to manageable, with the hook: service "
        f"down {took_down:.2f} s, silent {took_silent:.2f} s (timeout "
        f"{TIMEOUT} s), up {took_up:.2f} s (its push and two resent)"
    )
    assert took_silent < took_down + TIMEOUT + 1.5
    assert took_silent >= TIMEOUT  # it did wait for the silent service
