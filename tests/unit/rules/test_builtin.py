"""[rules]built_in_rules: loading, refusing, reloading, ordering."""

import logging
import pathlib
from typing import Any

import pytest

from inspector import exceptions
from inspector.rules import builtin

TRAIT = {"op": "add-trait", "args": {"name": "CUSTOM_X"}}


class _Conf:
    """The two options the module reads."""

    def __init__(self, path: str) -> None:
        self.rules = type(
            "Rules", (), {"built_in_rules": path, "api_call_allowed_hosts": []}
        )()


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: Any) -> None:
    monkeypatch.setattr(builtin, "_CURRENT", None)


def _write(tmp_path: pathlib.Path, text: str) -> str:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    return str(path)


def test_ironic_file_loads_with_ironic_uuids(tmp_path: pathlib.Path) -> None:
    path = _write(
        tmp_path,
        """
- description: one
  priority: -5
  phase: main
  conditions:
    - {op: eq, args: {values: ["{inventory[cpu][count]}", "4"]}}
  actions:
    - {op: add-trait, args: [CUSTOM_A]}
- uuid: 8c4f2a59-3c7a-4b8f-9a57-5d1b0d7a9e11
  actions: [{op: log, args: {msg: hello}}]
- description: three
  sensitive: true
  actions: [{op: fail, args: [refused]}]
""",
    )
    rules = builtin.load(path)
    assert [r["uuid"] for r in rules] == [
        builtin.synthetic_uuid(0),
        "8c4f2a59-3c7a-4b8f-9a57-5d1b0d7a9e11",
        builtin.synthetic_uuid(1),
    ]
    assert builtin.synthetic_uuid(1) == "00000000-0000-0000-0000-000000000001"
    assert rules[0]["priority"] == -5  # any integer, as Ironic's built-in rules
    assert rules[0]["conditions"][0]["field"] == "inventory.cpu.count"
    assert rules[2]["sensitive"] and rules[2]["actions"] == [
        {"action": "fail", "message": "refused"}
    ]
    assert all(r["built_in"] for r in rules)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "- description: gpu\n  actions: [{op: frobnicate, args: {}}]\n",
            "rule 0 (gpu): actions[0].op: 'frobnicate' is not one of Ironic's",
        ),
        (
            "- {actions: [{action: add-trait, name: CUSTOM_A}]}\n"
            "- {uuid: 8c4f2a59-3c7a-4b8f-9a57-5d1b0d7a9e11, actions: "
            "[{action: set-attribute, path: /extra/x}]}\n",
            "rule 1 (8c4f2a59-3c7a-4b8f-9a57-5d1b0d7a9e11): actions[0]: "
            "'value' is a required property",
        ),
        (
            "- {description: two phases, phase: cleaning, actions: [{op: "
            "add-trait, args: [CUSTOM_A]}]}\n",
            "rule 0 (two phases): phase: 'cleaning'",
        ),
        ("rules: {}\n", "must hold a YAML list of rules"),
        ("- [unclosed\n", "not YAML"),
    ],
)
def test_invalid_file_names_file_rule_and_field(
    tmp_path: pathlib.Path, text: str, expected: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(exceptions.ConfigError) as caught:
        builtin.install(_Conf(path))
    assert path in str(caught.value)
    assert expected in str(caught.value)


def test_missing_file_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(exceptions.ConfigError, match="cannot read .*nowhere.yaml"):
        builtin.install(_Conf(str(tmp_path / "nowhere.yaml")))


def test_duplicate_uuid_refused(tmp_path: pathlib.Path) -> None:
    rule = "- {uuid: 8c4f2a59-3c7a-4b8f-9a57-5d1b0d7a9e11, actions: [{op: add-trait, args: [CUSTOM_A]}]}\n"
    with pytest.raises(exceptions.ConfigError, match="rule 1 .*used by an earlier"):
        builtin.install(_Conf(_write(tmp_path, rule * 2)))


def test_reload_keeps_the_previous_set_when_invalid(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = _write(tmp_path, "- {actions: [{op: add-trait, args: [CUSTOM_A]}]}\n")
    conf = _Conf(good)
    first = builtin.install(conf)
    assert builtin.current(conf) is first
    bad = tmp_path / "bad.yaml"
    bad.write_text("- {description: broken, actions: [{op: nope, args: []}]}\n")
    conf.rules.built_in_rules = str(bad)
    with caplog.at_level(logging.ERROR):
        assert builtin.reload(conf) is False
    assert "rule 0 (broken): actions[0].op" in caplog.text
    assert str(bad) in caplog.text
    kept = builtin.current(conf)  # not loaded again for every node
    assert kept.rules == first.rules and kept.generation == first.generation
    bad.write_text("- {actions: [{op: add-trait, args: [CUSTOM_B]}]}\n")
    assert builtin.reload(conf) is True
    after = builtin.current(conf)
    assert after.generation > first.generation
    assert after.rules[0]["actions"][0]["name"] == "CUSTOM_B"


def test_reload_does_nothing_where_never_loaded() -> None:
    assert builtin.reload(_Conf("/nowhere")) is False


def test_merged_ties_stored_first() -> None:
    stored = [{"uuid": "s1", "priority": 5}, {"uuid": "s2", "priority": 0}]
    built_in = [{"uuid": "b1", "priority": 0}, {"uuid": "b2", "priority": 9}]
    order = [r["uuid"] for r in builtin.merged(stored, built_in)]
    assert order == ["b2", "s1", "s2", "b1"]
