"""The expected-cabling file: its format, and the line named when bad."""

import pathlib

import pytest

from inspector.fleet import expected


def test_rules_with_comments_quotes_and_patterns() -> None:
    rules = expected.parse(
        "# node, nic, switch, port\n"
        "\n"
        "rack1-*, eno1, tor-1, Ethernet1/*\n"
        '"odd,name", 52:54:00:AA:BB:CC, 00:1c:73:00:00:01, Ethernet7\n',
        "cabling.csv",
    )
    assert [(r.line, r.node, r.nic, r.switch, r.port) for r in rules] == [
        (3, "rack1-*", "eno1", "tor-1", "Ethernet1/*"),
        (4, "odd,name", "52:54:00:AA:BB:CC", "00:1c:73:00:00:01", "Ethernet7"),
    ]
    first, second = rules
    assert first.matches_node("u", "rack1-07") and not first.matches_node("u", "rack2")
    assert first.matches_nic("52:54:00:00:00:01", "eno1")
    assert second.matches_nic("52:54:00:aa:bb:cc", "eth9")
    assert first.port_ok("Ethernet1/12") and not first.port_ok("Ethernet2/1")
    assert second.switch_ok("00:1C:73:00:00:01", None)
    assert not first.port_ok(None)


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("a, b, c\n", "line 1: expected 4 comma-separated fields"),
        ("# ok\na, b, c, d, e\n", "line 2: expected 4"),
        ("a, b, c, d\n, b, c, d\n", "line 2: the node is empty"),
        ("a, 52:54:00:zz:00:01, c, d\n", "line 1: '52:54:00:zz:00:01' is not a MAC"),
        ('a, "b, c, d\n', "line 1:"),
    ],
)
def test_malformed_lines_are_named(text: str, named: str) -> None:
    with pytest.raises(expected.Malformed, match=named) as caught:
        expected.parse(text, "/etc/cabling.csv")
    assert str(caught.value).startswith("/etc/cabling.csv line")


def test_an_unreadable_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(expected.Malformed, match="cannot be read"):
        expected.load(str(tmp_path / "missing.csv"))
