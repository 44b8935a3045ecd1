"""A fleet of Redfish BMCs in one process: one BMC per machine, as in a
real rack, for the 1,000-machine out-of-band benchmark.

Each BMC listens on its own port of 127.0.0.1 (its own address: the
inspector keeps one session per BMC and counts the per-host bound per
BMC, as it would for a rack of real ones) and serves one system, the
static tree of :mod:`lab.machines.redfish_static`, with a SessionService: a login
is a POST that returns an ``X-Auth-Token``, later requests carry it (basic
authentication works too). Answers are JSON encoded once at start and one
asyncio loop serves every port, so what the fleet costs per machine is
what answering costs, not a web framework's (sushy-tools' emulator spends
60-75 ms of CPU per machine in Flask and libvirt: doc/benchmarks.md).

Run as its own process (``python -m lab.machines.redfish_fleet SPEC
PORTS``) so its CPU is counted apart; :class:`BmcFleet` starts and stops it.
"""

import asyncio
import base64
import dataclasses
import functools
import json
import os
import pathlib
import secrets
import sys

from lab import checkout
from lab.machines.redfish_static import ROOT, StaticSystem, tree
from lab.servers.process import ServerProcess

USERNAME = "admin"
PASSWORD = "lab-fleet"
SESSIONS = f"{ROOT}/SessionService/Sessions"


def documents(system: StaticSystem) -> dict[str, bytes]:
    """Path -> encoded body of the one-system BMC of ``system``; the root
    names the SessionService, as a real BMC's does."""
    paths = tree([system])
    root = dict(paths[f"{ROOT}/"])
    root["SessionService"] = {"@odata.id": f"{ROOT}/SessionService"}
    root["Links"] = {"Sessions": {"@odata.id": SESSIONS}}
    paths[f"{ROOT}/"] = root
    paths[f"{ROOT}/SessionService"] = {
        "@odata.id": f"{ROOT}/SessionService",
        "Id": "SessionService",
        "Name": "Session Service",
        "ServiceEnabled": True,
        "SessionTimeout": 1800,
        "Sessions": {"@odata.id": SESSIONS},
    }
    return {path.rstrip("/"): json.dumps(body).encode() for path, body in paths.items()}


class _Bmc:
    """One BMC's answers (its documents, its sessions)."""

    def __init__(self, system: StaticSystem) -> None:
        self.docs = documents(system)
        self.tokens: set[str] = set()
        basic = base64.b64encode(f"{USERNAME}:{PASSWORD}".encode()).decode()
        self.basic = f"Basic {basic}"

    def answer(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, str], bytes]:
        if method == "GET" and path in ("/redfish", ROOT):
            return 200, {}, self.docs[ROOT]
        if method == "POST" and path == SESSIONS:
            return self._login(body)
        token = headers.get("x-auth-token")
        if token not in self.tokens and headers.get("authorization") != self.basic:
            return _error(401, "unauthorised")
        if method == "DELETE" and path.startswith(SESSIONS + "/"):
            self.tokens.discard(token or "")
            return 204, {}, b""
        if method != "GET":
            return _error(405, f"{method} is not allowed on {path}")
        found = self.docs.get(path)
        if found is None:
            return _error(404, f"no resource at {path}")
        return 200, {}, found

    def _login(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        try:
            asked = json.loads(body or b"{}")
        except ValueError:
            return _error(400, "the login is not JSON")
        if asked.get("UserName") != USERNAME or asked.get("Password") != PASSWORD:
            return _error(401, "wrong user name or password")
        token = secrets.token_hex(16)
        self.tokens.add(token)
        where = f"{SESSIONS}/{len(self.tokens)}"
        answer = {"@odata.id": where, "Id": str(len(self.tokens)), "UserName": USERNAME}
        return (
            201,
            {"X-Auth-Token": token, "Location": where},
            json.dumps(answer).encode(),
        )


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    body = {"error": {"code": "Base.1.0.GeneralError", "message": message}}
    return status, {}, json.dumps(body).encode()


_REASONS = {200: "OK", 201: "Created", 204: "No Content", 400: "Bad Request"}
_REASONS.update({401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed"})


async def _serve_connection(
    bmc: _Bmc, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    """HTTP/1.1 with keep-alive, as sushy's requests session speaks it."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target = lines[0].split(" ")[:2]
            headers = {}
            for line in lines[1:]:
                key, sep, value = line.partition(":")
                if sep:
                    headers[key.strip().lower()] = value.strip()
            length = int(headers.get("content-length") or 0)
            body = await reader.readexactly(length) if length else b""
            path = target.split("?", 1)[0].rstrip("/")
            status, extra, payload = bmc.answer(method, path, headers, body)
            # sushy asks for a connection per request (some BMCs choke on
            # kept-alive ones): say it is closed, or the client reuses it
            closing = headers.get("connection", "").lower() == "close"
            out = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Error')}"]
            out += [f"{k}: {v}" for k, v in extra.items()]
            out += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
            out += ["Connection: close"] if closing else []
            writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + payload)
            await writer.drain()
            if closing:
                break
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass  # the client went, or spoke no HTTP: this connection ends
    finally:
        writer.close()


async def _serve(systems: list[StaticSystem], ports_file: pathlib.Path) -> None:
    ports = []
    for system in systems:
        server = await asyncio.start_server(
            functools.partial(_serve_connection, _Bmc(system)), "127.0.0.1", 0
        )
        ports.append(server.sockets[0].getsockname()[1])
    partial = ports_file.with_suffix(".part")
    partial.write_text(json.dumps(ports))
    partial.rename(ports_file)  # whole or absent: the parent polls for it
    await asyncio.Event().wait()


class BmcFleet(ServerProcess):
    """One BMC per system of ``systems`` on 127.0.0.1, in a child process
    in ``work_dir``; ``addresses[i]`` is the i-th system's BMC (``url`` and
    ``port`` the first's, once started). ``stop()`` ends the child by its
    PID."""

    name = "The BMC fleet"

    def __init__(self, work_dir: pathlib.Path, systems: list[StaticSystem]) -> None:
        super().__init__(work_dir, "fleet.log")
        self.systems = systems
        self.addresses: list[str] = []

    @property
    def url(self) -> str:
        return self.addresses[0] if self.addresses else ""

    def system_id(self, index: int) -> str:
        return f"{ROOT}/Systems/{self.systems[index].ident}"

    def start(self, timeout: float = 120.0) -> None:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        spec = self.work_dir / "systems.json"
        spec.write_text(json.dumps([dataclasses.asdict(s) for s in self.systems]))
        ports_file = self.work_dir / "ports.json"
        ports_file.unlink(missing_ok=True)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [str(checkout.ROOT)]
            + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
        )
        command = [sys.executable, "-m", "lab.machines.redfish_fleet"]
        self._spawn(command + [str(spec), str(ports_file)], env=env, session=True)
        # the child writes every port at once, when all of them listen
        self._await(ports_file.exists, timeout, "the BMC fleet to listen")
        ports = json.loads(ports_file.read_text())
        self.port = ports[0] if ports else self.port
        self.addresses = [f"http://127.0.0.1:{port}" for port in ports]


def main(argv: list[str]) -> int:
    systems = [StaticSystem(**s) for s in json.loads(pathlib.Path(argv[0]).read_text())]
    asyncio.run(_serve(systems, pathlib.Path(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
