"""The switch-over guide quotes the import command as it is: every option
doc/upgrade.md and README.md give ``import upstream`` exists, and the
hook names of the exit ramp's table are Ironic's (the names its entry
points had on Ironic 39, written here because no Ironic is installed in
the service's virtualenv)."""

import argparse
import pathlib
import re

from inspector.cmd import manage_import

ROOT = pathlib.Path(__file__).resolve().parents[2]
IRONIC_39_HOOKS = {
    "accelerators",
    "architecture",
    "boot-mode",
    "cpu-capabilities",
    "cpus",
    "extra-hardware",
    "local-link-connection",
    "memory",
    "parse-lldp",
    "pci-devices",
    "physical-network",
    "ports",
    "raid-device",
    "ramdisk-error",
    "root-device",
    "validate-interfaces",
}
"""Ironic 39's ``ironic.inspection.hooks`` entry points."""


def _upstream_options() -> set[str]:
    parser = argparse.ArgumentParser()
    manage_import.add_parser(parser.add_subparsers(dest="command"))
    found: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            imports = action.choices["import"]
            for sub in imports._actions:
                if isinstance(sub, argparse._SubParsersAction):
                    upstream = sub.choices["upstream"]
                    for option in upstream._actions:
                        found.update(option.option_strings)
    return found


def _quoted(text: str) -> set[str]:
    lines = [line for line in text.splitlines() if "import upstream" in line]
    lines += [
        line for line in text.splitlines() if line.strip().startswith("import upstream")
    ]
    return set(re.findall(r"(--[a-z][a-z-]*)", " ".join(lines)))


def test_every_quoted_option_of_import_upstream_exists() -> None:
    options = _upstream_options()
    assert {"--connection", "--url", "--dry-run", "--json", "--token"} <= options
    for doc in (ROOT / "README.md", ROOT / "doc" / "upgrade.md"):
        quoted = _quoted(doc.read_text()) - {"--config-file"}
        assert quoted, doc
        assert quoted <= options, (doc, quoted - options)


def test_the_exit_ramp_names_ironics_hooks() -> None:
    text = (ROOT / "doc" / "upgrade.md").read_text()
    row = next(line for line in text.splitlines() if "`[inspector]hooks`" in line)
    listed = row.split("agent inspection: ", 1)[1].split("; ports:", 1)[0]
    mappings = [part.split(" -> ") for part in listed.split("; ")]
    named = {name for _ours, to in mappings for name in re.findall(r"`([^`]+)`", to)}
    assert len(mappings) >= 10, mappings
    assert named <= IRONIC_39_HOOKS, named - IRONIC_39_HOOKS
