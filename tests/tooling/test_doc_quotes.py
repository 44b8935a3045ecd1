"""What the guides quote of the code is what the code has: the API's
newest version, the policy rules, the manage command's options."""

import argparse
import pathlib
import re
from typing import Any

from inspector.api import policies, versions

ROOT = pathlib.Path(__file__).resolve().parents[2]
NEWEST = versions.format_version(versions.MAXIMUM)


def _section(path: pathlib.Path, heading: str) -> str:
    """The text under ``heading`` up to the next heading of its level."""
    text = path.read_text()
    level = heading.split(" ", 1)[0]
    start = text.index(f"\n{heading}\n")
    end = text.find(f"\n{level} ", start + len(heading) + 2)
    return text[start : end if end != -1 else len(text)]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_readme_quotes_the_newest_api_version() -> None:
    api = _flat(_section(ROOT / "README.md", "## API"))
    assert f"1.19-{NEWEST} of ours" in api
    assert f"no header means {NEWEST}" in api
    # no other version of ours is given as the newest
    assert re.findall(r"1\.19-(1\.\d+)", api) == [NEWEST]


def test_api_guide_quotes_the_newest_api_version() -> None:
    text = _flat(_section(ROOT / "doc" / "api.md", "## Versions"))
    assert f"No version header: {NEWEST} (the newest)" in text
    assert f"supported range is 1.0 to {NEWEST}" in text
    assert f"Maximum-Version: {NEWEST}" in text


ROLES = {
    "rule:public_api": "public",
    "rule:reader_or_more": "reader, admin, service",
    "rule:admin_or_service": "admin, service",
    "rule:is_admin": "admin",
}
"""How doc/security.md's table says who a default lets in."""


def _policy_table() -> dict[str, str]:
    """doc/security.md's policy table: each rule's default as it says it
    (``:rule:delete`` in a cell continues the cell's first name)."""
    table: dict[str, str] = {}
    for line in _section(ROOT / "doc" / "security.md", "## Policy").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        first = names[0]
        for name in names:
            if name.startswith(":"):
                name = first.split(":", 1)[0] + name
            table[name] = cells[1]
    return table


def test_security_guide_lists_every_policy_with_its_default() -> None:
    table = _policy_table()
    rules = {
        rule.name: rule.check_str
        for rule in policies.list_rules()
        if hasattr(rule, "operations")  # the API's, not the building blocks
    }
    assert set(table) == set(rules), "doc/security.md's policy table differs"
    for name, check in rules.items():
        assert table[name] == ROLES[check], name


def test_rules_guide_names_the_client_option_at_the_versions_that_need_it() -> None:
    text = _flat((ROOT / "doc" / "rules.md").read_text())
    for feature in ("rule-language", "rules-built-in"):
        version = versions.format_version(versions.since(feature))
        assert f"openstack --inspector-api-version {version} baremetal" in text
    assert "answered from 1.24 only" in text and "shown from 1.25 only" in text
    assert versions.since("rule-language") == (1, 24)
    assert versions.since("rules-built-in") == (1, 25)


def _actions(add_parser: Any, command: str) -> dict[str, argparse.ArgumentParser]:
    """The parsers of ``command``'s actions, as the manage command builds them."""
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    (sub,) = [
        a
        for a in parser._subparsers._group_actions  # type: ignore[union-attr]
        if isinstance(a, argparse._SubParsersAction)
    ]
    (actions,) = [
        a
        for a in sub.choices[command]._actions
        if isinstance(a, argparse._SubParsersAction)
    ]
    return dict(actions.choices)


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {
        s
        for a in parser._actions
        for s in a.option_strings
        if s not in ("-h", "--help")
    }


def test_readme_lists_every_option_of_rules_export_and_import() -> None:
    from inspector.cmd import manage_rules

    rows = {
        line.split("rules ", 1)[1].split(" ", 1)[0]: line
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("| `ironic-inspector-manage --config-file F rules ")
    }
    for name, parser in _actions(manage_rules.add_parser, "rules").items():
        usage = rows[name].split("` |", 1)[0]
        for option in _options(parser):
            assert f"[{option}" in usage, (name, option)
        for action in parser._actions:
            if action.choices and action.option_strings:
                assert "\\|".join(action.choices) in usage, (name, action.dest)


def test_the_status_of_outliers_and_cabling_is_told() -> None:
    """The manage command's outliers and cabling exit 1 when they find
    something (for scripts): their --help and README.md say so."""
    from inspector.cmd import manage_fleet

    actions = _actions(manage_fleet.add_parser, "inventory")
    for name in ("outliers", "cabling"):
        assert "exit status 1 when there are any" in (actions[name].description or "")
    readme = (ROOT / "README.md").read_text()
    (row,) = [
        line
        for line in readme.splitlines()
        if "manage --config-file F inventory list" in line
    ]
    assert "`outliers` and `cabling` exit with status 1 when they find any" in row
