"""The JSON-RPC transport over real HTTP(S) on loopback: a conductor's
endpoint (allow-list, limits, authentication, TLS, start-up errors) and the
API's client and cast retries against it. The conductor's manager is a
recorder: what matters here is what reaches it."""

import base64
import json
import logging
import pathlib
import socket
import time
import uuid as uuid_lib
from collections.abc import Iterator
from typing import Any

import bcrypt
import pytest
import requests
from oslo_config import cfg

from inspector import exceptions
from inspector.conductor.rpcapi import ConductorClient
from inspector.conf import opts
from inspector.jsonrpc import auth, endpoint, probe
from inspector.jsonrpc.client import CallFailed, JsonRpcSender
from inspector.jsonrpc.server import JsonRpcServer
from lab.servers import loopback
from tests.unit.net.certs import Certs, make_certs

NODE = str(uuid_lib.uuid4())
PASSWORD = "s3cret-Pa55"


class Recorder:
    """Stands in for the conductor manager: records the calls it gets."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.calls: list[tuple[str, str, int]] = []
        self.fail = fail

    def _record(self, name: str, uuid: str, version: int) -> None:
        if self.fail is not None:
            raise self.fail
        self.calls.append((name, uuid, version))

    def start_introspection(self, ctxt: Any, uuid: str, version: int) -> None:
        self._record("start_introspection", uuid, version)

    def process(self, ctxt: Any, uuid: str, version: int) -> None:
        self._record("process", uuid, version)

    def reapply(self, ctxt: Any, uuid: str, version: int) -> None:
        self._record("reapply", uuid, version)

    def abort(self, ctxt: Any, uuid: str, version: int) -> None:
        self._record("abort", uuid, version)

    def sweep(self, *args: Any) -> None:  # a manager method that is no RPC
        self.calls.append(("sweep", "", 0))

    def stop(self) -> None:
        self.calls.append(("stop", "", 0))


def make_conf(**groups: dict[str, Any]) -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], project="ironic-inspector", default_config_files=[])
    conf.set_override("host", "conductor-a")
    conf.set_override("auth_strategy", "noauth")
    conf.set_override("host_ip", "127.0.0.1", group="json_rpc")
    conf.set_override("port", loopback.free_port(), group="json_rpc")
    for group, values in groups.items():
        for name, value in values.items():
            conf.set_override(name, value, group=None if group == "DEFAULT" else group)
    return conf


class Running:
    def __init__(self, conf: cfg.ConfigOpts, manager: Recorder) -> None:
        self.conf = conf
        self.manager = manager
        self.server = JsonRpcServer(conf, manager)
        self.url = self.server.url

    def post(self, body: Any, **kwargs: Any) -> requests.Response:
        if isinstance(body, bytes | Iterator):
            data = body  # as is: malformed, or streamed without a length
        else:
            data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
        return requests.post(self.url, data=data, headers=headers, timeout=5, **kwargs)


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[JsonRpcServer] = []

    def start(conf: cfg.ConfigOpts, manager: Recorder | None = None) -> Running:
        running = Running(conf, manager or Recorder())
        running.server.start()
        started.append(running.server)
        return running

    yield start
    for server in started:
        server.stop()


def call(method: str, params: dict[str, Any], request_id: Any = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        body["id"] = request_id
    return body


def error_of(resp: requests.Response) -> tuple[int, str]:
    error = resp.json()["error"]
    return error["code"], error["message"]


def test_a_cast_runs_the_method_and_answers(serve: Any) -> None:
    running = serve(make_conf())
    resp = running.post(call("process", {"context": {}, "uuid": NODE, "version": 3}))
    assert resp.status_code == 200, resp.text
    assert resp.json() == {"jsonrpc": "2.0", "result": None, "id": 1}
    notification = call("abort", {"uuid": NODE, "version": 4}, request_id=None)
    resp = running.post(notification)
    assert resp.status_code == 204 and resp.content == b""
    assert running.manager.calls == [("process", NODE, 3), ("abort", NODE, 4)]
    resp = running.post(call("ping", {}))
    assert resp.json()["result"] == {"host": "conductor-a"}


@pytest.mark.parametrize(
    "method", ["sweep", "stop", "_queue", "__init__", "__class__", "calls", ""]
)
def test_only_rpc_methods_can_be_called(serve: Any, method: str) -> None:
    running = serve(make_conf())
    resp = running.post(call(method, {"uuid": NODE, "version": 1}))
    code, _message = error_of(resp)
    if method:
        assert (resp.status_code, code) == (404, -32601), resp.text
    else:
        assert (resp.status_code, code) == (400, -32600), resp.text
    assert running.manager.calls == []


@pytest.mark.parametrize(
    ("body", "status", "code", "message"),
    [
        (b"{not json", 400, -32700, "not JSON"),
        (b"[" * 9 + b"]" * 9, 400, -32600, "deeper than 8"),
        (b'{"a": ' * 5000 + b"1" + b"}" * 5000, 400, -32600, "deeper than 8"),
        (b"[]", 400, -32600, "no batches"),
        (b'{"jsonrpc": "1.0", "method": "process", "id": 1}', 400, -32600, "2.0"),
        (b'{"jsonrpc": "2.0", "method": 7, "id": 1}', 400, -32600, "method"),
        (b'{"jsonrpc": "2.0", "method": "x", "id": [1]}', 400, -32600, "id must"),
    ],
)
def test_malformed_requests_are_refused(
    serve: Any, body: bytes, status: int, code: int, message: str
) -> None:
    running = serve(make_conf())
    resp = running.post(body)
    assert resp.status_code == status, resp.text
    got_code, got_message = error_of(resp)
    assert got_code == code and message in got_message, got_message
    assert running.manager.calls == []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"uuid": NODE}, "missing: version"),
        ({"uuid": NODE, "version": 1, "force": True}, "unknown: force"),
        ({"uuid": NODE, "version": "1"}, "version must be an integer"),
        ({"uuid": NODE, "version": True}, "version must be an integer"),
        ({"uuid": "../../etc", "version": 1}, "uuid is not a UUID"),
        ([NODE, 1], "params must be an object"),
    ],
)
def test_bad_params_are_refused(serve: Any, params: Any, message: str) -> None:
    running = serve(make_conf())
    resp = running.post(call("start_introspection", params))
    assert resp.status_code == 400, resp.text
    code, got = error_of(resp)
    assert code == -32602 and message in got, got
    assert running.manager.calls == []


def test_http_shape_is_enforced(serve: Any) -> None:
    conf = make_conf(json_rpc={"max_request_body_size": 2048})
    running = serve(conf)
    assert requests.get(running.url, timeout=5).status_code == 405
    body = json.dumps(call("process", {"uuid": NODE, "version": 1})).encode()
    other_path = requests.post(
        running.url + "process",
        data=body,
        headers={"Content-Type": "application/json"},
        timeout=5,
    )
    assert other_path.status_code == 404
    text = requests.post(
        running.url, data=body, headers={"Content-Type": "text/plain"}, timeout=5
    )
    assert text.status_code == 415
    big = running.post(b" " * 4096 + body)
    assert big.status_code == 413 and "max_request_body_size" in big.text
    # without a Content-Length the server reads no more than the cap
    chunked = running.post(iter([b" " * 1500, b" " * 1500, body]))
    assert chunked.status_code == 413, chunked.text
    assert running.manager.calls == []


def test_a_conductor_that_cannot_take_work_says_so(serve: Any) -> None:
    down = Recorder(exceptions.DatabaseUnavailable(reason="gone"))
    running = serve(make_conf(), down)
    resp = running.post(call("process", {"uuid": NODE, "version": 1}))
    assert resp.status_code == 503
    code, message = error_of(resp)
    assert code == -32000 and "conductor-a cannot take work" in message
    broken = serve(make_conf(), Recorder(KeyError("secret detail")))
    resp = broken.post(call("process", {"uuid": NODE, "version": 1}))
    assert resp.status_code == 500
    assert error_of(resp) == (-32603, "conductor conductor-a failed: KeyError")


def test_a_stopping_conductor_refuses_new_calls(serve: Any) -> None:
    """Draining: a call is refused (the API's client then calls another
    conductor), the ping still answers, nothing reaches the manager."""
    stopping = Recorder()
    running = serve(make_conf(), stopping)
    stopping.draining = True  # type: ignore[attr-defined]
    resp = running.post(call("start_introspection", {"uuid": NODE, "version": 1}))
    assert resp.status_code == 503
    assert error_of(resp) == (
        -32000,
        "conductor conductor-a is stopping: it takes no new work",
    )
    assert running.post(call("ping", {})).json()["result"] == {"host": "conductor-a"}
    assert stopping.calls == []


# authentication


def htpasswd(
    tmp_path: pathlib.Path, user: str = "api", password: str = PASSWORD
) -> str:
    path = tmp_path / "htpasswd-json-rpc"
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    path.write_text(f"{user}:{hashed}\n")
    return str(path)


def basic(user: str, password: str) -> dict[str, str]:
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}"}


def test_http_basic_refuses_without_valid_credentials(
    serve: Any, tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    conf = make_conf(
        json_rpc={
            "auth_strategy": "http_basic",
            "http_basic_auth_user_file": htpasswd(tmp_path),
        }
    )
    running = serve(conf)
    body = call("process", {"uuid": NODE, "version": 1})
    for headers in ({}, basic("api", "wrong"), basic("nobody", PASSWORD)):
        resp = running.post(body, headers=headers)
        assert resp.status_code == 401, resp.text
        assert resp.headers["WWW-Authenticate"].startswith("Basic")
        assert error_of(resp)[0] == -32001
    # ping and unknown methods are behind the same door
    assert running.post(call("ping", {})).status_code == 401
    assert running.post(call("sweep", {})).status_code == 401
    assert running.manager.calls == []
    resp = running.post(body, headers=basic("api", PASSWORD))
    assert resp.status_code == 200, resp.text
    assert running.manager.calls == [("process", NODE, 1)]
    assert PASSWORD not in caplog.text and "wrong" not in caplog.text


def test_the_client_sends_its_credentials(serve: Any, tmp_path: pathlib.Path) -> None:
    server_conf = make_conf(
        json_rpc={
            "auth_strategy": "http_basic",
            "http_basic_auth_user_file": htpasswd(tmp_path),
        }
    )
    running = serve(server_conf)
    good = make_conf(
        json_rpc={
            "auth_strategy": "http_basic",
            "http_basic_username": "api",
            "http_basic_password": PASSWORD,
        }
    )
    JsonRpcSender(good, lambda _h: running.url).send(
        "conductor-a", "reapply", {"uuid": NODE, "version": 2}
    )
    assert running.manager.calls == [("reapply", NODE, 2)]
    bad = make_conf(
        json_rpc={
            "auth_strategy": "http_basic",
            "http_basic_username": "api",
            "http_basic_password": "not-it",
        }
    )
    with pytest.raises(CallFailed) as caught:
        JsonRpcSender(bad, lambda _h: running.url).send(
            "conductor-a", "reapply", {"uuid": NODE, "version": 3}
        )
    assert str(caught.value) == (
        f"{running.url}: refused with 401 (wrong credentials: check "
        "[json_rpc]auth_strategy and the credentials on both sides)"
    )
    assert running.manager.calls == [("reapply", NODE, 2)]


def test_strategy_follows_the_api_unless_set() -> None:
    conf = make_conf()
    conf.set_override("auth_strategy", "http_basic")
    conf.clear_override("auth_strategy", group="json_rpc")
    assert auth.strategy(conf) == "http_basic"
    conf.set_override("auth_strategy", "noauth", group="json_rpc")
    assert auth.strategy(conf) == "noauth"


@pytest.mark.parametrize(
    ("environ", "status"),
    [
        ({}, 401),
        ({"HTTP_X_IDENTITY_STATUS": "Invalid", "HTTP_X_ROLES": "admin"}, 401),
        ({"HTTP_X_IDENTITY_STATUS": "Confirmed", "HTTP_X_ROLES": "reader"}, 403),
        ({"HTTP_X_IDENTITY_STATUS": "Confirmed", "HTTP_X_ROLES": "reader,Admin"}, 200),
    ],
)
def test_keystone_needs_a_confirmed_token_with_an_allowed_role(
    environ: dict[str, str], status: int
) -> None:
    reached: list[bool] = []

    def app(_environ: Any, start_response: Any) -> list[bytes]:
        reached.append(True)
        start_response("200 OK", [])
        return [b""]

    gate = auth.RoleGate(app, ["admin"])
    statuses: list[str] = []
    gate(dict(environ), lambda s, _h: statuses.append(s))
    assert statuses[0].startswith(str(status))
    assert reached == ([True] if status == 200 else [])


def test_keystone_without_credentials_is_refused_at_start() -> None:
    conf = make_conf(json_rpc={"auth_strategy": "keystone"})
    with pytest.raises(exceptions.ConfigError, match=r"\[keystone_authtoken\]"):
        JsonRpcServer(conf, Recorder())
    with pytest.raises(exceptions.ConfigError, match=r"credentials in \[json_rpc\]"):
        JsonRpcSender(conf, lambda _h: None)


# TLS


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    return make_certs(tmp_path_factory.mktemp("json-rpc-certs"))


def tls_server_conf(certs: Certs) -> cfg.ConfigOpts:
    return make_conf(
        json_rpc={
            "use_ssl": True,
            "cert_file": str(certs.server.cert),
            "key_file": str(certs.server.key),
            "advertise_host": "localhost",
        }
    )


def test_tls_with_a_verified_certificate(serve: Any, certs: Certs) -> None:
    running = serve(tls_server_conf(certs))
    assert running.url.startswith("https://localhost:")
    trusting = make_conf(json_rpc={"use_ssl": True, "cafile": str(certs.ca.cert)})
    sender = JsonRpcSender(trusting, lambda _h: running.url)
    sender.send("conductor-a", "process", {"uuid": NODE, "version": 1})
    assert running.manager.calls == [("process", NODE, 1)]
    # the system's CAs do not know the lab's CA: the call fails, naming TLS
    stranger = JsonRpcSender(make_conf(), lambda _h: running.url)
    with pytest.raises(CallFailed, match="TLS failed.*CERTIFICATE_VERIFY_FAILED"):
        stranger.send("conductor-a", "process", {"uuid": NODE, "version": 2})
    # plain HTTP to a TLS port is not an answer either
    plain = JsonRpcSender(make_conf(), lambda _h: running.url.replace("https", "http"))
    with pytest.raises(CallFailed):
        plain.send("conductor-a", "process", {"uuid": NODE, "version": 3})
    insecure = JsonRpcSender(
        make_conf(json_rpc={"insecure": True}), lambda _h: running.url
    )
    insecure.send("conductor-a", "abort", {"uuid": NODE, "version": 4})
    assert running.manager.calls == [("process", NODE, 1), ("abort", NODE, 4)]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"cert_file": "/nonexistent/json-rpc.crt"},
            r"\[json_rpc\]cert_file .* cannot",
        ),
        ({"key_file": "/nonexistent/json-rpc.key"}, r"\[json_rpc\]key_file .* cannot"),
        ({"cert_file": None}, r"\[json_rpc\]use_ssl is True but \[json_rpc\]cert_file"),
    ],
)
def test_bad_tls_files_name_the_option(
    certs: Certs, change: dict[str, Any], message: str
) -> None:
    conf = tls_server_conf(certs)
    for name, value in change.items():
        conf.set_override(name, value, group="json_rpc")
    with pytest.raises(exceptions.ConfigError, match=message):
        JsonRpcServer(conf, Recorder())


def test_unparsable_htpasswd_names_the_option_and_line(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "htpasswd"
    path.write_text("# users\napi:plaintext-password\n")
    conf = make_conf(
        json_rpc={"auth_strategy": "http_basic", "http_basic_auth_user_file": str(path)}
    )
    with pytest.raises(
        exceptions.ConfigError,
        match=r"\[json_rpc\]http_basic_auth_user_file .* line 2 is not user:bcrypt",
    ):
        JsonRpcServer(conf, Recorder())
    path.write_text("")
    with pytest.raises(exceptions.ConfigError, match="has no users"):
        JsonRpcServer(conf, Recorder())
    conf.set_override("http_basic_auth_user_file", str(tmp_path / "no"), "json_rpc")
    with pytest.raises(exceptions.ConfigError, match="No such file"):
        JsonRpcServer(conf, Recorder())


def test_a_port_in_use_names_the_options() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        conf = make_conf(json_rpc={"port": taken.getsockname()[1]})
        server = JsonRpcServer(conf, Recorder())
        with pytest.raises(
            exceptions.ConfigError,
            match=r"\(\[json_rpc\]host_ip/port\): Address already in use$",
        ):
            server.start()


@pytest.mark.parametrize(
    ("host_ip", "warned"), [("127.0.0.1", False), ("0.0.0.0", True), ("::", True)]
)
def test_listening_beyond_loopback_unprotected_is_loud(
    serve: Any, caplog: pytest.LogCaptureFixture, host_ip: str, warned: bool
) -> None:
    caplog.set_level(logging.WARNING, logger="inspector.jsonrpc.server")
    serve(make_conf(json_rpc={"host_ip": host_ip}))
    text = caplog.text
    assert ("authentication is DISABLED" in text) is warned
    assert ("not encrypted" in text) is warned


@pytest.mark.parametrize(
    ("values", "url"),
    [
        ({"host_ip": "127.0.0.1", "port": 8089}, "http://127.0.0.1:8089/"),
        ({"host_ip": "::", "port": 8089}, "http://conductor-a:8089/"),
        (
            {"host_ip": "fd00::5", "port": 6189, "use_ssl": True},
            "https://[fd00::5]:6189/",
        ),
        ({"host_ip": "::", "advertise_host": "10.0.0.7"}, "http://10.0.0.7:8089/"),
    ],
)
def test_the_published_url(values: dict[str, Any], url: str) -> None:
    conf = make_conf(json_rpc={"port": 8089, **values})
    assert endpoint.advertised(conf) == url


# the API's side: casts that move on and give up


def test_casts_skip_dead_conductors_and_give_up_with_each_cause(
    serve: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    running = serve(make_conf())
    dead = f"http://127.0.0.1:{loopback.free_port()}/"
    urls = {"dead-1": dead, "live": running.url, "silent": None}

    class Router:
        def __init__(self, hosts: list[str]) -> None:
            self._hosts = hosts

        def pick(self, exclude: Any = ()) -> str:
            left = [h for h in self._hosts if h not in exclude]
            if not left:
                raise exceptions.ServiceUnavailable(reason="no conductor is available")
            return left[0]

        def invalidate(self) -> None:
            pass

        def hosts(self) -> list[str]:
            return list(self._hosts)

    sender = JsonRpcSender(make_conf(), urls.get)
    client = ConductorClient(sender, Router(["dead-1", "live"]))
    assert client.process(NODE, 5) == "live"
    assert running.manager.calls == [("process", NODE, 5)]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == [
        f"Conductor(s) did not take process of node {NODE} "
        f"(dead-1: {dead}: connection refused); conductor live did"
    ]
    caplog.clear()
    client = ConductorClient(sender, Router(["dead-1", "silent"]))
    started = time.monotonic()
    with pytest.raises(exceptions.ServiceUnavailable) as caught:
        client.abort(NODE, 6)
    assert time.monotonic() - started < 5
    assert caught.value.kwargs["reason"] == (
        "could not hand abort over to a conductor (tried dead-1, silent): "
        f"dead-1: {dead}: connection refused; silent: conductor silent published "
        "no JSON-RPC endpoint (is it on [DEFAULT]rpc_transport = json-rpc?)"
    )
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_stuck_conductor_costs_one_timeout(serve: Any) -> None:
    with socket.socket() as stuck:  # accepts connections, never answers
        stuck.bind(("127.0.0.1", 0))
        stuck.listen()
        url = f"http://127.0.0.1:{stuck.getsockname()[1]}/"
        sender = JsonRpcSender(make_conf(json_rpc={"timeout": 0.5}), lambda _h: url)
        started = time.monotonic()
        with pytest.raises(CallFailed, match="no answer within 0.5 s"):
            sender.send("stuck", "process", {"uuid": NODE, "version": 1})
        assert time.monotonic() - started < 2


def test_ping_reports_each_conductor(serve: Any) -> None:
    running = serve(make_conf())
    dead = f"http://127.0.0.1:{loopback.free_port()}/"
    sender = JsonRpcSender(make_conf(), lambda _h: None)
    urls = {"conductor-a": running.url, "conductor-b": dead, "impostor": running.url}
    answers = probe.ping_all(sender, sorted(urls), urls.get)
    assert [(a.host, a.ok) for a in answers] == [
        ("conductor-a", True),
        ("conductor-b", False),
        ("impostor", False),
    ]
    ok, line = probe.summary(answers)
    assert ok and line.startswith("json-rpc: 1 of 3 conductor(s) answer")
    assert "conductor-b " + dead + ": connection refused" in line
    assert "answered as 'conductor-a', not 'impostor'" in line
    assert probe.summary([]) == (False, "json-rpc: no live conductor to call")


def test_require_skips_conductors_that_refuse_this_api(
    serve: Any, tmp_path: pathlib.Path
) -> None:
    """Before an operator's request is recorded: a conductor that refuses
    the API's credentials counts as none; one that answered stays ready
    for a while without another ping."""
    server_conf = make_conf(
        json_rpc={
            "auth_strategy": "http_basic",
            "http_basic_auth_user_file": htpasswd(tmp_path),
        }
    )
    running = serve(server_conf)

    class Router:
        def pick(self, exclude: Any = ()) -> str:
            if "conductor-a" in exclude:
                raise exceptions.ServiceUnavailable(reason="no conductor is available")
            return "conductor-a"

        def invalidate(self) -> None:
            pass

        def hosts(self) -> list[str]:
            return ["conductor-a"]

    def client(password: str) -> ConductorClient:
        conf = make_conf(
            json_rpc={
                "auth_strategy": "http_basic",
                "http_basic_username": "api",
                "http_basic_password": password,
            }
        )
        return ConductorClient(JsonRpcSender(conf, lambda _h: running.url), Router())

    with pytest.raises(exceptions.ServiceUnavailable) as caught:
        client("not-it").require()
    assert caught.value.kwargs["reason"] == (
        "no conductor takes work from this API (tried conductor-a): conductor-a: "
        f"{running.url}: refused with 401 (wrong credentials: check "
        "[json_rpc]auth_strategy and the credentials on both sides)"
    )
    good = client(PASSWORD)
    good.require()
    running.server.stop()  # answered a moment ago: ready without asking
    good.require()
    assert running.manager.calls == []  # a ping runs nothing


def test_an_unreadable_ca_file_is_refused_at_start(tmp_path: pathlib.Path) -> None:
    conf = make_conf(json_rpc={"cafile": str(tmp_path / "missing-ca.crt")})
    with pytest.raises(
        exceptions.ConfigError,
        match=r"\[json_rpc\]cafile .*missing-ca.crt cannot be read: No such file",
    ):
        JsonRpcSender(conf, lambda _h: None)
