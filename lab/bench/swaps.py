"""Microbenchmarks of the swaps of issue 31: the CPU one call costs.

``python -m lab bench-swaps`` prints, for this checkout's code:

- ``ironic``: CPU per ``get_node`` and ``patch_node`` of the Ironic client
  on a kept-alive connection, against the lab's Ironic stand-in (its own
  process, so its CPU is not counted);
- ``payload``: CPU per validation of ``tests/data/ipa-inventory.json``
  (the ramdisk's post).

Each is ``time.process_time`` over many iterations after a warm-up; run it
before and after a change on a quiet machine (or several times in
alternation) to compare. It measures only; nothing passes or fails.
"""

import argparse
import json
import pathlib
import tempfile
import time
import urllib.request
from collections.abc import Callable

from lab import checkout

INVENTORY = checkout.ROOT / "tests" / "data" / "ipa-inventory.json"


def _per_call(work: Callable[[], object], iterations: int) -> float:
    """Microseconds of CPU per call of ``work`` (after a warm-up)."""
    for _ in range(min(200, iterations)):
        work()
    started = time.process_time()
    for _ in range(iterations):
        work()
    return (time.process_time() - started) / iterations * 1e6


def ironic(iterations: int) -> dict[str, float]:
    from oslo_config import cfg

    from inspector.baremetal.client import BaremetalClient
    from inspector.conf import opts
    from lab.servers.ironic_standin import StandinServer

    with tempfile.TemporaryDirectory(prefix="swap-bench-") as work:
        standin = StandinServer(pathlib.Path(work))
        standin.start()
        try:
            node = {"name": "bench-0", "driver": "fake-hardware"}
            request = urllib.request.Request(
                standin.url + "/v1/nodes",
                data=json.dumps(node).encode(),
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                uuid = json.load(answer)["uuid"]
            conf = cfg.ConfigOpts()
            opts.register_all(conf)
            conf([])
            conf.set_override("auth_type", "none", group="ironic")
            conf.set_override("endpoint_override", standin.url, group="ironic")
            client = BaremetalClient(conf)
            patch = [{"op": "add", "path": "/extra/bench", "value": 1}]
            return {
                "get_node": _per_call(lambda: client.get_node(uuid), iterations),
                "patch_node": _per_call(
                    lambda: client.patch_node(uuid, patch), iterations
                ),
            }
        finally:
            standin.stop()


def payload(iterations: int) -> dict[str, float]:
    from inspector.api import payload as module

    data = json.loads(INVENTORY.read_text())
    return {"validate": _per_call(lambda: module.validate(data), iterations)}


def run(args: argparse.Namespace) -> int:
    """``python -m lab bench-swaps``: ``--iterations``, ``--only``."""
    for name, bench in (("ironic", ironic), ("payload", payload)):
        if args.only and name not in args.only:
            continue
        for what, micros in bench(args.iterations).items():
            print(f"{name} {what}: {micros:.1f} us CPU per call")
    return 0
