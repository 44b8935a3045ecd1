"""What every demo stands on: its options, its work directory, the lab's
Ironic, the phases it prints, and the lab kept up when asked."""

import contextlib
import dataclasses
import pathlib
import signal
import sys
import tempfile
import time

from inspector import bootstrap
from lab.servers.ironic import IronicServer
from lab.servers.shapes import Running, Shape
from lab.venvs import default_cache_dir


@dataclasses.dataclass
class DemoOptions:
    machines: int = 20
    seed: int = 0
    keep_running: bool = False
    work_dir: pathlib.Path | None = None
    timeout: float | None = None
    split: int | None = None
    """Conductors of the split shape; None runs the standalone process."""
    split_api: str = "apache"
    """Where the split API runs: under Apache (mod_wsgi) or "local"."""
    rpc_transport: str = "oslo"
    """How the split API hands work to the conductors: "oslo" or "json-rpc"."""
    pxe: bool = False
    """Standalone: machines boot through real DHCP from a dnsmasq guarded by
    the inspector's PXE filter before their ramdisk posts."""

    @property
    def shape(self) -> Shape:
        return Shape(self.split, self.split_api, self.rpc_transport)


def phase(name: str, started: float) -> None:
    """One line: what is done and the seconds it took since ``started``."""
    print(f"  {name:<38} {time.monotonic() - started:6.1f} s", flush=True)


def prepare(options: DemoOptions, prefix: str) -> tuple[pathlib.Path, float]:
    """A demo's work directory (made, named) and how long it waits."""
    work = options.work_dir or pathlib.Path(tempfile.mkdtemp(prefix=prefix))
    work.mkdir(parents=True, exist_ok=True)
    print(f"Lab work directory: {work}")
    return work, options.timeout or 120 + 2 * options.machines


def start_ironic(work: pathlib.Path, stack: contextlib.ExitStack) -> IronicServer:
    """The lab's Ironic in ``work``, its stop registered on ``stack``."""
    started = time.monotonic()
    ironic = IronicServer(default_cache_dir(), work / "ironic")
    ironic.start()
    stack.callback(ironic.stop)
    phase(f"Ironic up at {ironic.url}", started)
    return ironic


def keep_running(running: Running, work: pathlib.Path, ironic: IronicServer) -> None:
    """Say where every server is and how to use it; return on Ctrl-C or
    a plain kill."""
    url = running.url
    where = [f"Ironic: {ironic.url} (log {ironic.log_file})"]
    cluster = running.cluster
    if cluster is None:
        where.append(f"inspector: {url} (log {work / 'inspector' / 'inspector.log'})")
        where.append(f"the fleet page: {url}/fleet")
    else:
        assert cluster.api is not None
        api = "Apache + mod_wsgi" if cluster.api_server == "apache" else "local server"
        where.append(f"API ({api}): {url} (logs in {cluster.api.work_dir})")
        for c in cluster.conductors:
            rpc = c.options.get("json_rpc", {}).get("port")
            scheme = "https" if cluster.rpc_tls else "http"
            endpoint = f" (JSON-RPC {scheme}://127.0.0.1:{rpc}/)" if rpc else ""
            where.append(f"{c.host}: log {c.log_file}{endpoint}")
        where.append(f"etcd: {cluster.etcd.url}")
        if cluster.rpc_transport == "oslo":
            where.append(f"RabbitMQ: {cluster.rabbit.url}")
        where.append(f"PostgreSQL: {cluster.database_url}")
    print(
        f"""
The lab keeps running. In another shell:

  pip install python-openstackclient python-ironic-inspector-client
  export OS_AUTH_TYPE=none
  openstack --os-endpoint {url} baremetal introspection list
  openstack --os-endpoint {url} baremetal introspection status lab-0001
  openstack --os-endpoint {url} baremetal introspection data save lab-0001
  openstack --os-endpoint {url} baremetal introspection start lab-0002 --wait
  openstack --os-endpoint {ironic.url} baremetal node list   # Ironic itself

The lab's ramdisks answer a machine powered on by introspection while this
runs, so "start" finishes by itself.

"""
        + "\n".join(f"  {line}" for line in where)
        + "\n\nPress Ctrl-C to stop.",
        flush=True,
    )
    # Ctrl-C or a plain kill both stop the lab cleanly (a shell that started
    # this in the background may have left SIGINT ignored), whichever of
    # the lab's threads the kernel hands the signal to
    with contextlib.closing(
        bootstrap.receive_signals((signal.SIGINT, signal.SIGTERM))
    ) as received:
        next(received)
    print("\nStopping.", file=sys.stderr)
