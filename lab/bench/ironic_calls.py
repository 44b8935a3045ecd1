"""What one call of the inspector's costs Ironic, in CPU.

The benchmark counts the calls of a run from Ironic's API log
(:mod:`lab.servers.ironic_log`); afterwards this replays each kind of call
the inspector makes against the then idle Ironic to measure the CPU time
Ironic spends on it. Together they say how many machines per second one
Ironic process can serve at most, whatever the inspector does.
"""

import time
from collections.abc import Callable
from typing import Any

import requests

from lab import procstat


def _each(url: str, uuids: list[str]) -> dict[str, Callable[[str], Any]]:
    http = requests.Session()
    http.headers["X-OpenStack-Ironic-API-Version"] = "1.80"

    def ok(resp: requests.Response) -> None:
        resp.raise_for_status()

    def port_round_trip(uuid: str) -> None:
        mac = "02:1a:b0:" + ":".join(uuid[i : i + 2] for i in (0, 2, 4))
        resp = http.post(f"{url}/v1/ports", json={"node_uuid": uuid, "address": mac})
        ok(resp)
        ok(http.delete(f"{url}/v1/ports/{resp.json()['uuid']}"))

    return {
        "GET node": lambda u: ok(http.get(f"{url}/v1/nodes/{u}")),
        "GET ports of a node": lambda u: ok(
            http.get(f"{url}/v1/ports/detail?node_uuid={u}")
        ),
        "PUT boot device": lambda u: ok(
            http.put(
                f"{url}/v1/nodes/{u}/management/boot_device",
                json={"boot_device": "pxe", "persistent": False},
            )
        ),
        "PUT power reboot": lambda u: ok(
            http.put(f"{url}/v1/nodes/{u}/states/power", json={"target": "rebooting"})
        ),
        "PATCH node properties": lambda u: ok(
            http.patch(
                f"{url}/v1/nodes/{u}",
                json=[
                    {
                        "op": "add",
                        "path": "/extra/lab_probe",
                        "value": str(time.monotonic()),
                    }
                ],
            )
        ),
        "POST + DELETE port": port_round_trip,
        "PUT power off": lambda u: ok(
            http.put(f"{url}/v1/nodes/{u}/states/power", json={"target": "power off"})
        ),
    }


def cpu_per_call(
    url: str, pid: int, uuids: list[str], rounds: int = 20
) -> dict[str, float]:
    """Ironic CPU milliseconds per call, one call at a time on an idle Ironic.

    Power calls finish in a background worker of Ironic; a pause after each
    batch lets that work land in the measurement.
    """
    costs: dict[str, float] = {}
    for name, call in _each(url, uuids).items():
        time.sleep(0.5)
        before = procstat.cpu_seconds(pid)
        for index in range(rounds):
            call(uuids[index % len(uuids)])
        time.sleep(0.5)
        costs[name] = round((procstat.cpu_seconds(pid) - before) * 1000 / rounds, 1)
    return costs
