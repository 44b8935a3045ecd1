"""A backend outage is a few lines in each process's log, not a flood.

Two conductors and the API (split shape) with light work; each backend
(PostgreSQL, etcd, RabbitMQ) is taken down for 10 s in turn. For each
process: at most a few lines at WARNING or above for the whole outage, no
traceback (a known outage is not a bug), and the log says when the backend
is back. The counts are printed.
"""

import pathlib
import re
import time
from collections.abc import Callable, Iterator

import pytest

from lab.servers.split_cluster import SplitCluster
from tests.integration.conftest import Client, Lab, SplitFactory, introspect

OUTAGE = 10.0
MOST_LINES = 6
"""Lines at WARNING or above one process may write for one outage."""

LEVEL = re.compile(r" (WARNING|ERROR|CRITICAL) ")
BROKER_DRIVER = re.compile(r" (WARNING|ERROR) oslo\.messaging\._drivers\.")
"""oslo.messaging's line for each reconnection try: one per process and
outage (inspector.outages.Quieter), in the API as in the conductors."""
RECOVERY = re.compile(r" INFO .*(works again|can be read again|Reconnected)")


@pytest.fixture(scope="module")
def cluster(split_cluster: SplitFactory) -> Iterator[SplitCluster]:
    with split_cluster(
        "log_volume",
        conductors=2,
        options={
            "DEFAULT": {"introspection_delay": "0"},
            "coordination": {"sweep_interval": "1", "leader_lease": "3"},
        },
    ) as split:
        yield split


def _logs(cluster: SplitCluster) -> dict[str, pathlib.Path]:
    assert cluster.api is not None
    logs = {"api": cluster.api.log_file}
    logs.update({c.host: c.log_file for c in cluster.conductors})
    return logs


def _sizes(logs: dict[str, pathlib.Path]) -> dict[str, int]:
    return {name: path.stat().st_size for name, path in logs.items()}


def _new_lines(path: pathlib.Path, offset: int) -> list[str]:
    with path.open("rb") as handle:
        handle.seek(offset)
        return handle.read().decode(errors="replace").splitlines()


@pytest.mark.parametrize("backend", ["postgresql", "etcd", "rabbitmq"])
@pytest.mark.timeout(300)
def test_outage_is_a_few_lines(cluster: SplitCluster, lab: Lab, backend: str) -> None:
    outages: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "postgresql": (cluster.postgres.pause, cluster.postgres.resume),
        "etcd": (cluster.etcd.stop, cluster.etcd.start),
        "rabbitmq": (cluster.rabbit.stop, cluster.rabbit.start),
    }
    down, up = outages[backend]
    client = Client(cluster.url)
    introspect(client, *lab.machines(2))  # the processes have done work
    logs = _logs(cluster)
    before = _sizes(logs)
    down()
    deadline = time.monotonic() + OUTAGE
    while time.monotonic() < deadline:
        client.get("/v1/introspection")  # an operator keeps looking
        time.sleep(0.5)
    up()
    (node,) = lab.machines(1)
    # back to work: something that needs every backend succeeds
    statuses = introspect(client, node, timeout=90)
    assert statuses[0]["state"] == "finished", statuses
    time.sleep(2)  # the periodic duties notice the recovery
    report = []
    for name, path in logs.items():
        lines = _new_lines(path, before[name])
        loud = [line for line in lines if LEVEL.search(line)]
        tracebacks = [line for line in lines if line.startswith("Traceback")]
        report.append(f"{name}: {len(lines)} lines, {len(loud)} at WARNING+")
        assert not tracebacks, (name, "\n".join(lines))
        print(f"{backend}, {name}:\n  " + "\n  ".join(x[24:260] for x in loud))
    print(f"{backend} down {OUTAGE:.0f} s: " + "; ".join(report))
    recovered = []
    for name, path in logs.items():
        lines = _new_lines(path, before[name])
        loud = [x for x in lines if LEVEL.search(x)]
        assert len(loud) <= MOST_LINES, (name, loud)
        driver = [x for x in loud if BROKER_DRIVER.search(x)]
        assert len(driver) <= 1, (name, driver)
        recovered += [x for x in lines if RECOVERY.search(x)]
    print("  recovery: " + "\n  ".join(x[24:200] for x in recovered))
    assert recovered, f"no process said that {backend} is back"
