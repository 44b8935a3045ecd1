"""The inspector in one of its shapes, as the demos and benchmarks run it:
the standalone process, or the split shape's cluster (an API and N
conductors); and which of its processes' CPU and memory they report."""

import contextlib
import dataclasses
import pathlib

from lab.servers.apache import ApacheApiServer
from lab.servers.inspector import InspectorServer
from lab.servers.split_cluster import SplitCluster


@dataclasses.dataclass(frozen=True)
class Shape:
    split: int | None = None
    """Conductors of the split shape; None runs the standalone process."""
    api_server: str = "apache"
    """Where the split API runs: under Apache (mod_wsgi) or "local"."""
    rpc_transport: str = "oslo"
    """How the split API hands work to the conductors: "oslo", "json-rpc"
    or "json-rpc-tls"."""

    def describe(self) -> str:
        if self.split is None:
            return "standalone"
        api = "under Apache" if self.api_server == "apache" else "on its own server"
        casts = {
            "json-rpc": "JSON-RPC, no broker",
            "json-rpc-tls": "JSON-RPC over TLS, no broker",
        }.get(self.rpc_transport, "RabbitMQ")
        return f"split: API {api}, {self.split} conductors, casts over {casts}"


@dataclasses.dataclass
class Running:
    """The inspector processes of one shape, as the demos and benchmarks
    see them."""

    url: str
    cpu_pids: dict[str, int]
    """Name -> PID whose process tree's CPU time is counted."""
    rss_pids: dict[str, int]
    """Name -> PID of each process whose peak memory is reported."""
    cluster: SplitCluster | None = None


def start(
    shape: Shape,
    work: pathlib.Path,
    ironic_url: str,
    stack: contextlib.ExitStack,
    options: dict[str, dict[str, str]] | None = None,
) -> Running:
    """Start ``shape`` in ``work`` against ``ironic_url`` and register its
    stop on ``stack``; ``options`` are the standalone process's own."""
    if shape.split is None:
        inspector = InspectorServer(work / "inspector", ironic_url, options=options)
        inspector.start()
        stack.callback(inspector.stop)
        assert inspector.pid is not None
        pids = {"inspector": inspector.pid}
        return Running(inspector.url, pids, pids)
    cluster = SplitCluster(
        work / "split",
        ironic_url,
        conductors=shape.split,
        api_server=shape.api_server,
        rpc_transport=shape.rpc_transport,
    )
    stack.callback(cluster.stop)
    cluster.start()
    api = cluster.api
    assert api is not None and api.pid is not None
    cpu = {"API": api.pid}
    if isinstance(api, ApacheApiServer):
        daemons = api.daemon_pids()
        rss = {f"API-{n}": pid for n, pid in enumerate(daemons, 1)}
    else:
        rss = dict(cpu)
    for conductor in cluster.conductors:
        assert conductor.pid is not None
        name = conductor.host.replace("lab-", "")
        cpu[name] = rss[name] = conductor.pid
    if cluster.rpc_transport == "oslo":  # the broker is part of the cost
        broker = cluster.rabbit.pid_file.read_text().split()
        if broker and broker[0].isdigit():
            cpu["RabbitMQ"] = rss["RabbitMQ"] = int(broker[0])
    return Running(cluster.url, cpu, rss, cluster)
