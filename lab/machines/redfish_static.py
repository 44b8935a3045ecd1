"""A static Redfish BMC on loopback: generated JSON trees for the quirks
sushy-tools' emulator cannot produce (memory under 1 GiB, no drives, a
storage controller with no drives, a NIC without MAC, LLDP, HTML answers).

One server serves any number of systems (``/redfish/v1/Systems/<id>``),
each a :class:`StaticSystem`, in a thread of the lab's process; HTTP basic
authentication only (no SessionService: sushy falls back to basic). Used
by the unit tests of ``inspector/redfish`` and by the integration tests'
``auto`` fallback.
"""

import base64
import dataclasses
import http.server
import json
from typing import Any

from lab.servers.threaded import ThreadedHttpServer

ROOT = "/redfish/v1"
GiB = 1024**3


@dataclasses.dataclass
class StaticSystem:
    """One system's hardware and its quirks."""

    ident: str
    macs: list[str]
    cpus: int = 8
    memory_gib: float = 32
    drives_gib: list[int] = dataclasses.field(default_factory=lambda: [480])
    empty_controller: bool = False
    """A second storage controller whose ``Drives`` is null (sushy's TypeError)."""
    mac_less_nic: bool = False
    lldp: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    """LLDPReceive by MAC."""
    html: bool = False
    """Answer the system's resources with an HTML page (a broken BMC)."""
    vendor: str = "Contoso"
    model: str = "R-100"
    serial: str = "SN0001"


def tree(systems: list[StaticSystem]) -> dict[str, Any]:
    """Path -> JSON body of a BMC with ``systems``."""
    out: dict[str, Any] = {
        f"{ROOT}/": {
            "@odata.id": f"{ROOT}/",
            "Id": "RootService",
            "Name": "Static BMC",
            "RedfishVersion": "1.11.0",
            "UUID": "00000000-0000-0000-0000-000000000001",
            "Systems": {"@odata.id": f"{ROOT}/Systems"},
            "Chassis": {"@odata.id": f"{ROOT}/Chassis"},
        },
        f"{ROOT}/Systems": {
            "@odata.id": f"{ROOT}/Systems",
            "Name": "Systems",
            "Members": [{"@odata.id": f"{ROOT}/Systems/{s.ident}"} for s in systems],
        },
        f"{ROOT}/Chassis": {
            "@odata.id": f"{ROOT}/Chassis",
            "Name": "Chassis",
            "Members": [{"@odata.id": f"{ROOT}/Chassis/{s.ident}"} for s in systems],
        },
    }
    for system in systems:
        out.update(_system(system))
    return out


def _system(s: StaticSystem) -> dict[str, Any]:
    base = f"{ROOT}/Systems/{s.ident}"
    chassis = f"{ROOT}/Chassis/{s.ident}"
    out: dict[str, Any] = {
        base: {
            "@odata.id": base,
            "@odata.type": "#ComputerSystem.v1_10_0.ComputerSystem",
            "Id": s.ident,
            "Name": s.ident,
            "Manufacturer": s.vendor,
            "Model": s.model,
            "SerialNumber": s.serial,
            "BiosVersion": "1.2.3",
            "PowerState": "Off",
            "Boot": {
                "BootSourceOverrideEnabled": "Disabled",
                "BootSourceOverrideTarget": "None",
                "BootSourceOverrideMode": "UEFI",
            },
            "MemorySummary": {"TotalSystemMemoryGiB": s.memory_gib},
            "Processors": {"@odata.id": f"{base}/Processors"},
            "Storage": {"@odata.id": f"{base}/Storage"},
            "EthernetInterfaces": {"@odata.id": f"{base}/EthernetInterfaces"},
            "Links": {"Chassis": [{"@odata.id": chassis}]},
            "Status": {"State": "Enabled", "Health": "OK"},
        },
        f"{base}/Processors": {
            "@odata.id": f"{base}/Processors",
            "Name": "Processors",
            "Members": [{"@odata.id": f"{base}/Processors/CPU0"}],
        },
        f"{base}/Processors/CPU0": {
            "@odata.id": f"{base}/Processors/CPU0",
            "Id": "CPU0",
            "Name": "CPU0",
            "ProcessorType": "CPU",
            "ProcessorArchitecture": "x86",
            "InstructionSet": "x86-64",
            "Model": "Static CPU 3000",
            "TotalCores": s.cpus,
            "TotalThreads": s.cpus,
        },
    }
    controllers = [{"@odata.id": f"{base}/Storage/1"}]
    if s.empty_controller:
        controllers.append({"@odata.id": f"{base}/Storage/2"})
        out[f"{base}/Storage/2"] = {
            "@odata.id": f"{base}/Storage/2",
            "Id": "2",
            "Name": "Empty controller",
            "Drives": None,
        }
    out[f"{base}/Storage"] = {
        "@odata.id": f"{base}/Storage",
        "Name": "Storage",
        "Members": controllers,
    }
    out[f"{base}/Storage/1"] = {
        "@odata.id": f"{base}/Storage/1",
        "Id": "1",
        "Name": "Controller",
        "Drives": [
            {"@odata.id": f"{base}/Storage/1/Drives/{i}"}
            for i in range(len(s.drives_gib))
        ],
    }
    for i, size in enumerate(s.drives_gib):
        out[f"{base}/Storage/1/Drives/{i}"] = {
            "@odata.id": f"{base}/Storage/1/Drives/{i}",
            "Id": str(i),
            "Name": f"Drive {i}",
            "CapacityBytes": size * GiB,
            "MediaType": "SSD" if i == 0 else "HDD",
            "Model": f"Disk-{size}",
            "SerialNumber": f"{s.serial}-D{i}",
            "Manufacturer": "Disks Inc",
        }
    nics = [{"@odata.id": f"{base}/EthernetInterfaces/{i}"} for i in range(len(s.macs))]
    for i, mac in enumerate(s.macs):
        out[f"{base}/EthernetInterfaces/{i}"] = {
            "@odata.id": f"{base}/EthernetInterfaces/{i}",
            "Id": f"nic{i}",
            "Name": f"NIC {i}",
            "MACAddress": mac,
            "SpeedMbps": 25000,
            "LinkStatus": "LinkUp",
            "Status": {"State": "Enabled", "Health": "OK"},
        }
    if s.mac_less_nic:
        nics.append({"@odata.id": f"{base}/EthernetInterfaces/nomac"})
        out[f"{base}/EthernetInterfaces/nomac"] = {
            "@odata.id": f"{base}/EthernetInterfaces/nomac",
            "Id": "nomac",
            "Name": "NIC without MAC",
            "Status": {"State": "Enabled", "Health": "OK"},
        }
    out[f"{base}/EthernetInterfaces"] = {
        "@odata.id": f"{base}/EthernetInterfaces",
        "Name": "NICs",
        "Members": nics,
    }
    ports = [
        {"@odata.id": f"{chassis}/NetworkAdapters/1/Ports/{i}"}
        for i in range(len(s.macs))
    ]
    out[chassis] = {
        "@odata.id": chassis,
        "Id": s.ident,
        "Name": s.ident,
        "ChassisType": "RackMount",
        "NetworkAdapters": {"@odata.id": f"{chassis}/NetworkAdapters"},
    }
    out[f"{chassis}/NetworkAdapters"] = {
        "@odata.id": f"{chassis}/NetworkAdapters",
        "Name": "Adapters",
        "Members": [{"@odata.id": f"{chassis}/NetworkAdapters/1"}],
    }
    out[f"{chassis}/NetworkAdapters/1"] = {
        "@odata.id": f"{chassis}/NetworkAdapters/1",
        "Id": "1",
        "Name": "Adapter",
        "Ports": {"@odata.id": f"{chassis}/NetworkAdapters/1/Ports"},
    }
    out[f"{chassis}/NetworkAdapters/1/Ports"] = {
        "@odata.id": f"{chassis}/NetworkAdapters/1/Ports",
        "Name": "Ports",
        "Members": ports,
    }
    for i, mac in enumerate(s.macs):
        ethernet: dict[str, Any] = {"AssociatedMACAddresses": [mac]}
        if mac in s.lldp:
            ethernet["LLDPReceive"] = s.lldp[mac]
        out[f"{chassis}/NetworkAdapters/1/Ports/{i}"] = {
            "@odata.id": f"{chassis}/NetworkAdapters/1/Ports/{i}",
            "Id": str(i),
            "Name": f"Port {i}",
            "Ethernet": ethernet,
        }
    return out


class StaticBmc(ThreadedHttpServer):
    """The tree served on 127.0.0.1 (a free port) in a thread, from
    :meth:`start` to :meth:`stop`; ``url`` is what a node's
    ``redfish_address`` names."""

    def __init__(
        self,
        systems: list[StaticSystem],
        username: str = "admin",
        password: str = "password",
    ) -> None:
        self.systems = {s.ident: s for s in systems}
        self.paths = tree(systems)
        self.requests: list[str] = []
        token = base64.b64encode(f"{username}:{password}".encode()).decode()
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?")[0].rstrip("/")
                owner.requests.append(path)
                if path in ("/redfish", ROOT) or self.path == f"{ROOT}/":
                    return self._json(owner.paths[f"{ROOT}/"])
                if self.headers.get("Authorization") != f"Basic {token}":
                    return self._error(401, "unauthorised")
                for ident, system in owner.systems.items():
                    if system.html and f"/Systems/{ident}" in path:
                        return self._send(
                            200, b"<html><body>Login</body></html>", "text/html"
                        )
                body = owner.paths.get(path)
                if body is None:
                    return self._error(404, f"no resource at {path}")
                return self._json(body)

            def _error(self, code: int, message: str) -> None:
                body = {"error": {"code": "Base.1.0.GeneralError", "message": message}}
                self._send(code, json.dumps(body).encode())

            def _json(self, body: Any) -> None:
                self._send(200, json.dumps(body).encode())

            def _send(
                self, code: int, body: bytes, kind: str = "application/json"
            ) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        super().__init__(Handler, "static-bmc")
