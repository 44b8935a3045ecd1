"""An instant stand-in for Ironic: the calls an inspector makes, answered
from memory at once, so a benchmark measures the inspector's own cost.

Run as its own process (``python -m lab ironic-standin --port P --log F``)
so its CPU is not counted as the inspector's. It speaks the part of the
Bare Metal API that ours, upstream ironic-inspector and the lab use: version
discovery, nodes (create, get with ``fields``, list, patch, validate,
provision ``manage``, power, boot device, traits), ports (create, list by
node or address, patch, delete). Power and provision changes are instant.
Every request is logged like Ironic's API log line, so the benchmark's call
counting works unchanged. Not a test double: nothing here is used by the
test suite.
"""

import copy
import json
import pathlib
import re
import sys
import threading
import time
import urllib.parse
import uuid as uuidlib
from http import server
from typing import Any

from lab.servers import loopback
from lab.servers.process import ServerProcess

VERSION = {
    "id": "v1",
    "status": "CURRENT",
    "min_version": "1.1",
    "version": "1.92",
    "links": [],
}
MICROVERSION_HEADERS = {
    "X-OpenStack-Ironic-API-Minimum-Version": "1.1",
    "X-OpenStack-Ironic-API-Maximum-Version": "1.92",
    "X-OpenStack-Ironic-API-Version": "1.92",
    "OpenStack-API-Version": "baremetal 1.92",
}
NODE = re.compile(r"^/v1/nodes/([^/]+)(/.*)?$")
PORT = re.compile(r"^/v1/ports/([^/]+)$")


class Store:
    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.by_name: dict[str, str] = {}
        self.ports: dict[str, dict[str, Any]] = {}
        self.by_address: dict[str, str] = {}
        self.node_ports: dict[str, list[str]] = {}
        self.lock = threading.Lock()

    def node(self, ident: str) -> dict[str, Any] | None:
        uuid = ident if ident in self.nodes else self.by_name.get(ident)
        return self.nodes.get(uuid) if uuid else None


def _fields(node: dict[str, Any], query: dict[str, list[str]]) -> dict[str, Any]:
    if "fields" not in query:
        return node
    wanted = query["fields"][0].split(",")
    return {k: node.get(k) for k in wanted}


def _patch(target: dict[str, Any], patches: list[dict[str, Any]]) -> None:
    for patch in patches:
        parts = [p for p in patch["path"].split("/") if p]
        where = target
        for part in parts[:-1]:
            where = where.setdefault(part, {})
        if patch["op"] == "remove":
            where.pop(parts[-1], None)
        else:
            where[parts[-1]] = patch["value"]


class Handler(server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # headers and body go out in two writes: without TCP_NODELAY the body
    # waits for the client's delayed ACK, 40 ms per call
    disable_nagle_algorithm = True
    store: Store
    log_file: Any

    def log_message(self, *_args: Any) -> None:
        return

    def _send(self, status: int, body: Any = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for key, value in MICROVERSION_HEADERS.items():
            self.send_header(key, value)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.log_file.write(
            f"ironic.api [-] 127.0.0.1 - {self.command} {self.path} - {status} \n"
        )

    def _error(self, status: int, message: str) -> None:
        self._send(status, {"error_message": json.dumps({"faultstring": message})})

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def do_GET(self) -> None:  # noqa: N802
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        path = url.path.rstrip("/") or "/"
        store = self.store
        base = f"http://{self.headers.get('Host', '127.0.0.1')}"
        version = {**VERSION, "links": [{"href": f"{base}/v1/", "rel": "self"}]}
        if path == "/":
            self._send(200, {"versions": [version], "default_version": version})
        elif path == "/v1":
            self._send(
                200,
                {"id": "v1", "version": version, "links": version["links"]},
            )
        elif path in ("/v1/nodes", "/v1/nodes/detail"):
            with store.lock:
                found = list(store.nodes.values())
                if query.get("sort_key") == ["updated_at"]:
                    found.sort(key=lambda n: n["updated_at"], reverse=True)
                if "limit" in query:
                    found = found[: int(query["limit"][0])]
                nodes = [_fields(n, query) for n in found]
            self._send(200, {"nodes": copy.deepcopy(nodes)})
        elif path in ("/v1/ports", "/v1/ports/detail"):
            with store.lock:
                owner = (query.get("node_uuid") or query.get("node") or [""])[0]
                address = (query.get("address") or [""])[0]
                if owner:
                    node = store.node(owner)
                    ids = store.node_ports.get(node["uuid"], []) if node else []
                elif address:
                    port_id = store.by_address.get(address.lower())
                    ids = [port_id] if port_id else []
                else:
                    ids = list(store.ports)
                ports = [_fields(store.ports[i], query) for i in ids]
            self._send(200, {"ports": copy.deepcopy(ports)})
        elif match := NODE.match(path):
            with store.lock:
                node = store.node(match.group(1))
                body = copy.deepcopy(node) if node else None
            if body is None:
                self._error(404, f"Node {match.group(1)} could not be found.")
            elif match.group(2) == "/validate":
                ok = {"result": True, "reason": None}
                self._send(
                    200, {i: ok for i in ("boot", "deploy", "management", "power")}
                )
            else:
                self._send(200, _fields(body, query))
        else:
            self._error(404, f"No such resource {path}")

    def do_POST(self) -> None:  # noqa: N802
        body = self._body() or {}
        store = self.store
        if self.path.rstrip("/") == "/v1/nodes":
            uuid = str(uuidlib.uuid4())
            node = {
                "uuid": uuid,
                "name": body.get("name"),
                "driver": body.get("driver", "fake-hardware"),
                "driver_info": body.get("driver_info", {}),
                "properties": body.get("properties", {}),
                "extra": body.get("extra", {}),
                "provision_state": "enroll",
                "power_state": "power off",
                "target_power_state": None,
                "maintenance": False,
                "reservation": None,
                "traits": [],
                "last_error": None,
                "resource_class": body.get("resource_class"),
                "updated_at": time.monotonic(),
            }
            with store.lock:
                store.nodes[uuid] = node
                if node["name"]:
                    store.by_name[node["name"]] = uuid
                store.node_ports[uuid] = []
            self._send(201, node)
        elif self.path.rstrip("/") == "/v1/ports":
            address = str(body.get("address", "")).lower()
            with store.lock:
                owner_node = store.node(str(body.get("node_uuid")))
                if owner_node is None:
                    self._error(400, "No such node")
                    return
                if address in store.by_address:
                    self._error(
                        409, f"A port with MAC address {address} already exists."
                    )
                    return
                port = {
                    "uuid": str(uuidlib.uuid4()),
                    "address": address,
                    "node_uuid": owner_node["uuid"],
                    "pxe_enabled": body.get("pxe_enabled", True),
                    "extra": body.get("extra", {}),
                    "local_link_connection": body.get("local_link_connection", {}),
                    "physical_network": body.get("physical_network"),
                }
                store.ports[port["uuid"]] = port
                store.by_address[address] = port["uuid"]
                store.node_ports[owner_node["uuid"]].append(port["uuid"])
            self._send(201, port)
        else:
            self._error(404, f"No such resource {self.path}")

    def do_PUT(self) -> None:  # noqa: N802
        body = self._body() or {}
        match = NODE.match(urllib.parse.urlsplit(self.path).path)
        if not match:
            self._error(404, f"No such resource {self.path}")
            return
        with self.store.lock:
            node = self.store.node(match.group(1))
            if node is None:
                self._error(404, f"Node {match.group(1)} could not be found.")
                return
            what = match.group(2) or ""
            node["updated_at"] = time.monotonic()
            if what == "/states/power":
                target = body.get("target")
                node["power_state"] = (
                    "power off" if target == "power off" else "power on"
                )
            elif what == "/states/provision":
                if body.get("target") == "manage":
                    node["provision_state"] = "manageable"
            elif what.startswith("/traits/"):
                trait = what.split("/")[-1]
                if trait not in node["traits"]:
                    node["traits"].append(trait)
            elif what != "/management/boot_device":
                self._error(404, f"No such resource {self.path}")
                return
        self._send(202 if what.startswith("/states") else 204)

    def do_PATCH(self) -> None:  # noqa: N802
        patches = self._body() or []
        path = urllib.parse.urlsplit(self.path).path
        with self.store.lock:
            if match := NODE.match(path):
                target = self.store.node(match.group(1))
            elif match := PORT.match(path):
                target = self.store.ports.get(match.group(1))
            else:
                target = None
            if target is None:
                self._error(404, f"No such resource {path}")
                return
            _patch(target, patches)
            target["updated_at"] = time.monotonic()
            body = copy.deepcopy(target)
        self._send(200, body)

    def do_DELETE(self) -> None:  # noqa: N802
        path = urllib.parse.urlsplit(self.path).path
        store = self.store
        with store.lock:
            if (match := NODE.match(path)) and match.group(2) is None:
                node = store.node(match.group(1))
                if node is not None:
                    for port_id in store.node_ports.pop(node["uuid"], []):
                        port = store.ports.pop(port_id)
                        store.by_address.pop(port["address"], None)
                    store.nodes.pop(node["uuid"])
                    store.by_name.pop(node.get("name") or "", None)
            elif match and str(match.group(2)).startswith("/traits/"):
                node = store.node(match.group(1))
                trait = str(match.group(2)).split("/")[-1]
                if node is not None and trait in node["traits"]:
                    node["traits"].remove(trait)
            elif match := PORT.match(path):
                gone = store.ports.pop(match.group(1), None)
                if gone is not None:
                    store.by_address.pop(gone["address"], None)
                    store.node_ports.get(gone["node_uuid"], []).remove(gone["uuid"])
        self._send(204)


def serve(port: int, log_path: str) -> None:
    """Serve on 127.0.0.1:``port`` until killed, logging each request."""
    Handler.store = Store()
    Handler.log_file = open(log_path, "a", buffering=1)  # noqa: SIM115
    httpd = server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    httpd.daemon_threads = True
    httpd.serve_forever()


class StandinServer(ServerProcess):
    """The stand-in as its own process, shaped like the lab's IronicServer:
    its log is the API log Ironic's would be."""

    name = "The Ironic stand-in"

    def __init__(self, work_dir: pathlib.Path, port: int | None = None) -> None:
        super().__init__(work_dir, "ironic.log", port, "standin.stdout")

    def start(self, timeout: float = 30.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.log_file.touch()
        command = [sys.executable, "-m", "lab", "ironic-standin"]
        self._spawn(command + ["--port", str(self.port), "--log", str(self.log_file)])
        self._await(
            lambda: loopback.answers_http(self.url + "/v1"),
            timeout,
            f"the stand-in to answer on {self.url}",
        )
