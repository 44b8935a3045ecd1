"""mDNS publication, found by ironic-python-agent 13.0.0's own client.

The standalone process runs in the root namespace with ``enable_mdns`` and
``[mdns]interfaces`` set to the root end of a veth pair into a private
network namespace (:mod:`lab.netns`); IPA's ``mdns.get_endpoint
('baremetal-introspection')``, the call its inspection makes for
``ipa-inspection-callback-url=mdns``, runs inside the namespace from IPA's
cached virtualenv (:mod:`lab.real_agent`) and must resolve the service's URL,
whose root then answers. After a clean stop the name is gone. A packet
socket watches the host's other interfaces: no mDNS packet may leave by any
of them. The namespace is removed whatever happens.

No Ironic is needed: publishing and the API root do not call it.
"""

import json
import pathlib
import subprocess
from collections.abc import Iterator

import pytest
import requests

from lab.machines import netns
from lab.machines.real_agent import RealAgent
from lab.servers.inspector import InspectorServer
from lab.venvs import default_cache_dir
from lab.waiting import wait_until

CLIENT = """
import json, sys, urllib.request
from oslo_config import cfg
from ironic_python_agent import errors, mdns  # registers [mdns]
cfg.CONF([], project="ironic-python-agent", default_config_files=[])
cfg.CONF.set_override("lookup_attempts", int(sys.argv[1]), group="mdns")
try:
    url, params = mdns.get_endpoint("baremetal-introspection")
except errors.ServiceLookupFailure as exc:
    print(json.dumps({"error": str(exc)}))
    sys.exit(0)
with urllib.request.urlopen(url + "/", timeout=10) as answer:
    root = {"status": answer.status, "body": json.load(answer)}
print(json.dumps({"url": url, "params": params, "root": root}))
"""
"""Run by IPA's interpreter in the namespace: IPA's lookup, then a GET on
the URL it returns (the API root), reported as JSON on stdout."""


@pytest.fixture
def link() -> Iterator[netns.Link]:
    try:
        made = netns.Link.create()
    except netns.Unavailable as exc:
        pytest.skip(f"no private network link here: {exc}")
    try:
        yield made
    finally:
        made.delete()
        assert not made.exists()


@pytest.fixture(scope="module")
def ipa_python(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    agent = RealAgent(default_cache_dir(), tmp_path_factory.mktemp("ipa"))
    agent.install()  # once per machine: a stamp file in the venv
    return agent.python


def _lookup(link: netns.Link, python: pathlib.Path, attempts: int) -> dict[str, object]:
    try:
        result = link.run(str(python), "-c", CLIENT, str(attempts), timeout=60)
    except subprocess.CalledProcessError as exc:
        raise AssertionError(f"IPA's client failed:\n{exc.stderr}") from exc
    report: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def _wait_for_log(server: InspectorServer, text: str, timeout: float) -> None:
    wait_until(
        lambda: server.log_tail(100000),
        timeout,
        f"{text!r} in the log",
        until=lambda log: text in log,
        interval=0.1,
    )


def test_agent_finds_the_service_by_mdns(
    tmp_path: pathlib.Path, link: netns.Link, ipa_python: pathlib.Path
) -> None:
    # multicast needs the MULTICAST flag: the namespace's lo lacks it
    assert "MULTICAST" not in link.flags("lo")
    assert "MULTICAST" in link.flags(link.peer_interface)
    server = InspectorServer(
        tmp_path,
        "http://127.0.0.1:9",  # never called
        options={
            "DEFAULT": {"listen_address": "0.0.0.0", "enable_mdns": "True"},
            "mdns": {
                "interfaces": link.host_address,
                "params": "ipa_lab_probe:42",
            },
        },
    )
    expected = f"http://{link.host_address}:{server.port}"
    with netns.OutgoingMdnsWatch(allowed=link.host_interface) as watch:
        server.start()
        try:
            _wait_for_log(server, "mDNS: published baremetal-introspection", 20)
            found = _lookup(link, ipa_python, attempts=3)
        finally:
            code = server.stop()
        assert code == 0, server.log_tail()
        # the goodbye: a fresh client no longer finds the name
        gone = _lookup(link, ipa_python, attempts=1)
    log = server.log_tail(100000)
    assert f"as {expected} on {link.host_address} ({link.host_interface})" in log
    assert "mDNS: withdrew baremetal-introspection" in log

    assert found["url"] == expected, (found, log)
    assert found["params"] == {"ipa_lab_probe": "42"}  # protocol taken out by IPA
    root = found["root"]
    assert isinstance(root, dict) and root["status"] == 200
    (version,) = root["body"]["versions"]
    assert version["links"][0]["href"].startswith(expected + "/")

    assert "error" in gone and "baremetal-introspection" in str(gone["error"])
    assert watch.on_allowed > 0  # the watch saw the publication...
    assert watch.seen == []  # ...and nothing on any other interface


def test_interface_not_on_the_host_is_logged_and_the_service_runs(
    tmp_path: pathlib.Path,
) -> None:
    server = InspectorServer(
        tmp_path,
        "http://127.0.0.1:9",
        options={
            "DEFAULT": {"enable_mdns": "True"},
            "mdns": {"interfaces": "203.0.113.77"},  # TEST-NET-3: on no host
        },
    )
    with server:
        _wait_for_log(server, "mDNS: not publishing baremetal-introspection", 20)
        assert requests.get(server.url + "/", timeout=10).status_code == 200
    log = server.log_tail(100000)
    assert "[mdns]interfaces address 203.0.113.77 is on no interface" in log
