"""The demo's second act: two machines repaired (a disk swapped, memory
lost), introspected again, and their hardware changes read from the API
(1.23), as an operator would after a data-centre visit."""

import json
import pathlib
import tempfile
import time
from typing import Any

import requests

from lab.machines.hardware import Machine, repair

VERSION = {"X-OpenStack-Ironic-Inspector-API-Version": "1.23"}


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return value.get("serial") or json.dumps(value, sort_keys=True)[:40]
    return "-" if value is None else str(value)


def reintrospect(
    url: str, uuids: dict[str, str], chosen: list[Machine], timeout: float = 60.0
) -> bool:
    """Repair ``chosen``, introspect them again, print their changes.
    False when they did not finish or their changes are not the repair."""
    http = requests.Session()
    started = time.monotonic()
    expected = {}
    for machine in chosen:
        old, new = repair(machine)
        expected[uuids[machine.name]] = {f"disk:{old}", f"disk:{new}", "memory"}
        resp = http.post(f"{url}/v1/introspection/{uuids[machine.name]}", timeout=30)
        resp.raise_for_status()
    deadline = time.monotonic() + timeout
    pending = set(expected)
    while pending and time.monotonic() < deadline:
        time.sleep(0.2)
        for uuid in list(pending):
            status = http.get(f"{url}/v1/introspection/{uuid}", timeout=30).json()
            if status["finished"]:
                pending.discard(uuid)
    print(
        "\nA disk swapped and a quarter of the memory gone in "
        + " and ".join(m.name for m in chosen)
        + f"; introspected again in {time.monotonic() - started:.1f} s, their "
        "changes (GET .../changes, API 1.23):"
    )
    ok = not pending
    for machine in chosen:
        uuid = uuids[machine.name]
        changes = http.get(
            f"{url}/v1/introspection/{uuid}/changes", headers=VERSION, timeout=30
        ).json()["changes"]
        latest = (
            [c for c in changes if c["run"] == changes[0]["run"]] if changes else []
        )
        for change in latest:
            field = f".{change['field']}" if change["field"] else ""
            print(
                f"  {machine.name}  {change['kind']:<8} {change['component']}{field}"
                f"  {_value(change['before'])} -> {_value(change['after'])}"
            )
        if {c["component"] for c in latest} != expected[uuid]:
            print(f"  {machine.name}: expected changes of {sorted(expected[uuid])}")
            ok = False
    if pending:
        print(f"  not finished within {timeout:.0f} s: {', '.join(sorted(pending))}")
    return ok


PAGE = pathlib.Path(tempfile.gettempdir()) / "inspector-demo-fleet.html"
"""Where the demo leaves the fleet page: it outlives the lab."""


def save_fleet_page(url: str, chosen: list[Machine], uuids: dict[str, str]) -> bool:
    """Write the /fleet page to :data:`PAGE` and say where; False when it
    does not name the repaired machines among the latest changes."""
    resp = requests.get(f"{url}/fleet", timeout=30)
    if resp.status_code != 200:
        print(f"The fleet page answered {resp.status_code}: {resp.text[:200]}")
        return False
    PAGE.write_text(resp.text)
    print(
        f"\nThe fleet page (GET {url}/fleet while the lab runs: the fleet by "
        f"product, outliers, cabling problems, the latest changes): {PAGE}"
    )
    missing = [
        m.name for m in chosen if f"fleet/nodes/{uuids[m.name]}" not in resp.text
    ]
    if missing:
        print(f"  the page does not list the changes of {', '.join(missing)}")
    return not missing
