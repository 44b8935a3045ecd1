"""OpenStackClient's commands of ours, without OpenStackClient: their
arguments, the requests they make (a recording session) and the
microversion each sends, pinned to the API's table."""

import importlib.metadata
import io
import json
import pathlib
import types
from typing import Any

import pytest

from inspector import states
from inspector.api import versions
from inspector.osc import conductors, history, introspection, pxe_filters, rules


class Response:
    def __init__(self, status: int, body: Any) -> None:
        self.status_code = status
        self._body = body
        self.text = "" if body is None else json.dumps(body)

    def json(self) -> Any:
        if self._body is None:
            raise ValueError("no body")
        return self._body


class Manager:
    """OpenStackClient's client manager as the commands use it: its
    configuration and a session that records each request and answers
    from ``answers`` (path -> (status, body)), 404 for anything else."""

    def __init__(self, answers: dict[str, tuple[int, Any]] | None = None) -> None:
        self.session = self
        self.answers = answers or {}
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    def get_configuration(self) -> dict[str, str]:
        return {"inspector_url": "http://inspector.test:5050/"}

    def _send(self, method: str, url: str, kwargs: dict[str, Any]) -> Response:
        assert kwargs.pop("raise_exc") is False
        path = url.removeprefix("http://inspector.test:5050")
        self.sent.append((method, path, kwargs))
        status, body = self.answers.get(
            path, (404, {"error": {"message": f"nothing at {path}"}})
        )
        return Response(status, body)

    def get(self, url: str, **kwargs: Any) -> Response:
        return self._send("GET", url, kwargs)

    def post(self, url: str, **kwargs: Any) -> Response:
        return self._send("POST", url, kwargs)


def app_of(manager: Manager | None = None) -> Any:
    """What the commands use of OpenStackClient's app."""
    return types.SimpleNamespace(client_manager=manager, stderr=io.StringIO())


def run(manager: Manager, command: Any, *args: str) -> Any:
    cmd = command(app_of(manager), None)
    parsed = cmd.get_parser("openstack baremetal introspection").parse_args(list(args))
    return cmd.take_action(parsed)


def version_of(sent: tuple[str, str, dict[str, Any]]) -> str:
    return str(sent[2]["headers"]["X-OpenStack-Ironic-Inspector-API-Version"])


def test_each_command_asks_for_the_version_of_its_feature() -> None:
    def since(name: str) -> str:
        return versions.format_version(versions.since(name))

    assert introspection.VERSION == since("introspection-mode")
    assert rules.VERSION == since("rule-language") == since("rules-test")
    assert conductors.VERSION == since("conductors")
    assert pxe_filters.VERSION == since("pxe-filters")
    assert history.VERSION == since("inventory") == since("introspection-history")


def test_start_without_a_mode_is_the_stock_request() -> None:
    manager = Manager({"/v1/introspection/node-1": (202, {})})
    assert run(manager, introspection.StartCommand, "node-1") == (
        ("UUID", "Error"),
        [],
    )
    [sent] = manager.sent
    assert sent[:2] == ("POST", "/v1/introspection/node-1")
    assert version_of(sent) == "1.0" and sent[2]["params"] == {}


@pytest.mark.parametrize("mode", states.MODES)
def test_start_with_a_mode_asks_for_1_26(mode: str) -> None:
    manager = Manager({f"/v1/introspection/{n}": (202, {}) for n in ("a", "b")})
    run(manager, introspection.StartCommand, "--mode", mode, "a", "b")
    assert [s[1] for s in manager.sent] == [
        "/v1/introspection/a",
        "/v1/introspection/b",
    ]
    assert {version_of(s) for s in manager.sent} == {"1.26"}
    assert all(s[2]["params"] == {"mode": mode} for s in manager.sent)


def test_start_refuses_an_unknown_mode(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(Manager(), introspection.StartCommand, "--mode", "pxe", "node-1")
    assert "invalid choice: 'pxe'" in capsys.readouterr().err


def test_start_shows_the_api_message_and_sends_nothing_more() -> None:
    manager = Manager(
        {"/v1/introspection/a": (400, {"error": {"message": "no redfish_address"}})}
    )
    with pytest.raises(RuntimeError, match="^400: no redfish_address$"):
        run(manager, introspection.StartCommand, "--mode", "out-of-band", "a", "b")
    assert len(manager.sent) == 1
    with pytest.raises(RuntimeError, match="only be used with --wait"):
        run(manager, introspection.StartCommand, "--check-errors", "a")
    assert len(manager.sent) == 1


def test_start_waits_and_checks_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(introspection.time, "sleep", lambda _s: None)
    manager = Manager({f"/v1/introspection/{n}": (202, {}) for n in ("a", "b")})
    statuses = iter(
        [
            {"finished": False, "error": None},  # a, first round
            {"finished": True, "error": "boom"},  # b
            {"finished": True, "error": None},  # a, second round
        ]
    )

    def get(url: str, **kwargs: Any) -> Response:
        manager.sent.append(("GET", url, kwargs))
        return Response(200, next(statuses))

    monkeypatch.setattr(manager, "get", get)
    args = ("--mode", "auto", "--wait", "--check-errors", "a", "b")
    with pytest.raises(RuntimeError, match=r"failed for some nodes: b \(boom\)"):
        run(manager, introspection.StartCommand, *args)
    assert [s[0] for s in manager.sent] == ["POST", "POST", "GET", "GET", "GET"]
    assert {version_of(s) for s in manager.sent} == {"1.26"}


def test_wait_gives_up_after_its_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(introspection.time, "sleep", lambda _s: None)
    manager = Manager({"/v1/introspection/a": (200, {"finished": False})})
    with pytest.raises(RuntimeError, match=r"Timeout .* nodes \['a'\]"):
        introspection.wait(manager, ["a"], "1.0", interval=10, timeout=5)


def test_rule_import_reads_yaml_at_1_24(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(
        "- {description: one, priority: 100, actions: [{action: fail, message: x}]}\n"
        "- {description: two, sensitive: true, actions: [{action: fail, message: y}]}\n"
    )
    created = {"uuid": "u1", "description": "one", "priority": 100, "sensitive": False}
    manager = Manager({"/v1/rules": (201, created)})
    columns, rows = run(manager, rules.RuleImportCommand, str(path))
    assert columns == ("UUID", "Description", "Priority", "Sensitive")
    assert rows == [("u1", "one", 100, False)] * 2
    assert [s[2]["json"]["description"] for s in manager.sent] == ["one", "two"]
    assert {version_of(s) for s in manager.sent} == {"1.24"}


def test_rule_import_names_the_rule_the_api_refused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"actions": [1]}, {"actions": [2]}]))
    manager = Manager()
    answers = iter([(201, {"uuid": "u1"}), (400, {"error": {"message": "bad"}})])
    manager.post = lambda url, **kw: Response(*next(answers))  # type: ignore[method-assign]
    with pytest.raises(RuntimeError) as caught:
        run(manager, rules.RuleImportCommand, str(path))
    assert str(caught.value) == (
        "Rule 2 of 2 not imported: 400: bad (imported before it: u1)"
    )
    with pytest.raises(RuntimeError, match="Cannot read .*missing.json"):
        run(manager, rules.RuleImportCommand, str(tmp_path / "missing.json"))


def test_rule_test_body(tmp_path: pathlib.Path) -> None:
    data = tmp_path / "data.json"
    data.write_text('{"inventory": {"cpu": {"count": 4}}}')
    new = tmp_path / "new.yaml"
    new.write_text("actions: [{action: add-trait, name: CUSTOM_X}]\n")
    command = rules.RuleTestCommand(app_of(), None)
    parser = command.get_parser("test")

    def body(*args: str) -> dict[str, Any]:
        return command.body(parser.parse_args(list(args)))

    assert body("--node", "n1") == {"node_uuid": "n1"}
    assert body("--data", str(data), "--rule", "u1", "--rule-file", str(new)) == {
        "data": {"inventory": {"cpu": {"count": 4}}},
        "rules": ["u1", {"actions": [{"action": "add-trait", "name": "CUSTOM_X"}]}],
    }
    with pytest.raises(RuntimeError, match="Give --node NODE, --data FILE"):
        body("--rule", "u1")


def test_rule_test_answer_and_exit_status() -> None:
    answer = {
        "rules": [
            {"uuid": "u1", "priority": 5, "in_scope": True, "matched": True},
            {"uuid": "u2", "priority": 0, "in_scope": False, "matched": False},
            {"uuid": "u3", "priority": 0, "error": "nope"},
        ],
        "applied": ["u1"],
        "error": "nope",
        "would_write": False,
        "changes": {"node_patches": [{"op": "add", "path": "/extra/x", "value": 1}]},
    }
    manager = Manager({"/v1/rules/test": (200, answer)})
    command = rules.RuleTestCommand(app_of(manager), None)
    parsed = command.get_parser("test").parse_args(["--node", "n1", "-f", "json"])
    names, values = command.take_action(parsed)
    shown = dict(zip(names, values, strict=True))
    assert shown["Would write"] is False and shown["Error"] == "nope"
    assert shown["Rules"].human_readable().splitlines() == [
        "u1 (priority 5): matched",
        "u2 (priority 0): not in scope",
        "u3 (priority 0): error: nope",
    ]
    assert shown["Rules"].machine_readable() == answer["rules"]
    assert shown["Node patches"].human_readable() == (
        '[{"op": "add", "path": "/extra/x", "value": 1}]'
    )
    assert shown["Traits to add"] is None
    assert version_of(manager.sent[0]) == "1.24"


def test_conductor_and_pxe_filter_columns() -> None:
    conductor = {
        "hostname": "c1",
        "alive": True,
        "enabled": False,
        "disabled_reason": "maintenance",
        "introspections": 3,
        "version": "0.1.0",
    }
    report = {"host": "h1", "driver": "dnsmasq", "healthy": False, "problems": ["x"]}
    manager = Manager(
        {
            "/v1/conductors": (200, {"conductors": [conductor]}),
            "/v1/conductors/c1": (200, conductor),
            "/v1/pxe-filters": (200, {"pxe_filters": [report]}),
        }
    )
    columns, rows = run(manager, conductors.ConductorList)
    assert columns == (
        "Hostname",
        "Alive",
        "Enabled",
        "Disabled reason",
        "Introspections",
    )
    assert rows == [("c1", True, False, "maintenance", 3)]
    columns, rows = run(manager, conductors.ConductorList, "--long")
    assert len(columns) == len(conductors.FIELDS) and rows[0][-1] == "0.1.0"
    names, values = run(manager, conductors.ConductorShow, "c1")
    assert dict(zip(names, values, strict=True))["Disabled reason"] == "maintenance"
    with pytest.raises(RuntimeError, match="^404: nothing at /v1/conductors/c2$"):
        run(manager, conductors.ConductorShow, "c2")
    columns, rows = run(manager, pxe_filters.PxeFilterList)
    assert columns[:4] == ("Host", "Driver", "Healthy", "Problems")
    assert rows[0][3].machine_readable() == ["x"]
    assert {version_of(s) for s in manager.sent} == {"1.19", "1.21"}


def test_entry_points() -> None:
    """start and rule import replace the stock ones from the group
    OpenStackClient loads last; the rest join the stock client's group."""

    def ours(group: str) -> dict[str, str]:
        found = importlib.metadata.entry_points(group=group)
        return {e.name: e.value for e in found if e.value.startswith("inspector.")}

    assert ours("openstack.extension") == {
        "baremetal_introspection_start": "inspector.osc.introspection:StartCommand",
        "baremetal_introspection_rule_import": "inspector.osc.rules:RuleImportCommand",
    }
    assert {
        "baremetal_introspection_rule_test": "inspector.osc.rules:RuleTestCommand",
        "baremetal_introspection_conductor_list": "inspector.osc.conductors:ConductorList",
        "baremetal_introspection_conductor_show": "inspector.osc.conductors:ConductorShow",
        "baremetal_introspection_pxe-filter_list": "inspector.osc.pxe_filters:PxeFilterList",
    }.items() <= ours("openstack.baremetal_introspection.v1").items()
