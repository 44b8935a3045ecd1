"""The unit files and the Apache vhost in etc/ are valid as shipped."""

import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from lab.servers.apache import SHIPPED, render_vhost

ETC = pathlib.Path(__file__).resolve().parents[2] / "etc"
BIN = pathlib.Path(sys.executable).parent


@pytest.mark.parametrize(
    "unit,installed_as",
    [
        ("ironic-inspector.service", "ironic-inspector.service"),
        ("ironic-inspector-conductor@.service", "ironic-inspector-conductor@1.service"),
        ("ironic-inspector-pxe-filter.service", "ironic-inspector-pxe-filter.service"),
    ],
)
def test_systemd_units_verify(
    tmp_path: pathlib.Path, unit: str, installed_as: str
) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing (Debian package systemd)"
    text = (ETC / "systemd" / unit).read_text()
    # verify checks that the programs exist: point at this virtualenv's
    assert "/opt/ironic-inspector/bin/" in text  # doc/deploy.md's virtualenv
    text = text.replace("/opt/ironic-inspector/bin/", f"{BIN}/")
    (tmp_path / installed_as).write_text(text)
    result = subprocess.run(
        [analyze, "verify", str(tmp_path / installed_as)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip() == "", result.stderr  # not even a warning


def test_dnsmasq_sample_unit_and_polkit_rule_fit_together(
    tmp_path: pathlib.Path,
) -> None:
    """The inspection network's dnsmasq as shipped: the sample parses, it
    reads the filter's files where the filter writes them by default, the
    unit verifies and the polkit rule names that unit."""
    from inspector.conf import pxe_filter

    sample = ETC / "dnsmasq" / "dnsmasq-inspection.conf"
    result = subprocess.run(
        ["/usr/sbin/dnsmasq", "--test", f"--conf-file={sample}"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0 and "syntax check OK" in result.stderr, result
    settings = dict(
        line.split("=", 1) for line in sample.read_text().splitlines() if "=" in line
    )
    defaults = {o.name: o.default for o in pxe_filter.DNSMASQ_OPTS}
    assert settings["dhcp-hostsdir"] == defaults["dhcp_hostsdir"]
    assert settings["user"] == "ironic-inspector"  # the filter may SIGHUP it
    unit = (ETC / "systemd" / "dnsmasq-inspection.service").read_text()
    assert f"PIDFile={settings['pid-file']}" in unit.splitlines()
    assert "--conf-file=/etc/ironic-inspector/dnsmasq-inspection.conf" in unit
    (tmp_path / "dnsmasq-inspection.service").write_text(unit)
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing (Debian package systemd)"
    verified = subprocess.run(
        [analyze, "verify", str(tmp_path / "dnsmasq-inspection.service")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert verified.returncode == 0 and not verified.stderr.strip(), verified.stderr
    rule = (ETC / "polkit" / "50-ironic-inspector-dnsmasq.rules").read_text()
    assert '"dnsmasq-inspection.service"' in rule and '"ironic-inspector"' in rule


def test_units_stop_gracefully_and_restart() -> None:
    for unit in (
        "ironic-inspector.service",
        "ironic-inspector-conductor@.service",
        "ironic-inspector-pxe-filter.service",
    ):
        text = (ETC / "systemd" / unit).read_text()
        assert "KillSignal=SIGTERM" in text and "TimeoutStopSec=90" in text
        assert "Restart=on-failure" in text
        # a configuration error (exit 2) is not restarted forever
        assert "RestartPreventExitStatus=2" in text.splitlines()
        assert "ExecReload=/bin/kill -HUP $MAINPID" in text
    conductor = (ETC / "systemd" / "ironic-inspector-conductor@.service").read_text()
    for dependency in ("rabbitmq-server.service", "etcd.service", "postgresql.service"):
        assert dependency in conductor


def test_shipped_vhost_renders_and_imports(tmp_path: pathlib.Path) -> None:
    text = render_vhost(
        (SHIPPED / "ironic-inspector-api.conf").read_text(),
        port=8080,
        processes=2,
        threads=4,
        python_home="/venv",
        run_dir=tmp_path,
    )
    assert "WSGIDaemonProcess ironic-inspector-api processes=2 threads=4" in text
    # preloaded when the daemon process starts: config errors show at once
    assert (
        f"WSGIScriptAlias / {tmp_path}/inspector-api.wsgi "
        "process-group=ironic-inspector-api application-group=%{GLOBAL}"
    ) in text
    with pytest.raises(RuntimeError, match="no longer contains"):
        render_vhost("Listen 80\n", 1, 1, 1, "/v", tmp_path)


def test_wsgi_script_preloads(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspector import wsgi

    calls: list[bool] = []

    def preload() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(wsgi, "preload", preload)
    namespace: dict[str, object] = {}
    exec((SHIPPED / "inspector-api.wsgi").read_text(), namespace)  # noqa: S102
    assert namespace["application"] is wsgi.application
    assert calls == [True]


@pytest.mark.parametrize(
    "unit", ["ironic-inspector.service", "ironic-inspector-conductor@.service"]
)
def test_unit_with_missing_config_fails_naming_it(
    tmp_path: pathlib.Path, unit: str
) -> None:
    text = (ETC / "systemd" / unit).read_text()
    (line,) = [x for x in text.splitlines() if x.startswith("ExecStart=")]
    command = line.removeprefix("ExecStart=").replace("%i", "7")
    command = command.replace("/opt/ironic-inspector/bin/", f"{BIN}/")
    command = command.replace("/etc/ironic-inspector", str(tmp_path))
    result = subprocess.run(
        command.split(), capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 2  # a configuration error: never restarted
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(tmp_path / "inspector.conf") in lines[0]
    assert "Failed to find some config files" in lines[0]


def _ipxe_url(sample: str) -> str:
    (line,) = [x for x in sample.splitlines() if x.startswith("dhcp-boot=tag:ipxe,")]
    return line.removeprefix("dhcp-boot=tag:ipxe,")


def test_the_ipxe_script_dnsmasq_names_is_shipped() -> None:
    """dnsmasq's sample hands iPXE the shipped script, which boots the
    ramdisk with every kernel argument doc/pxe-filter.md lists (and the
    guide lists every argument the script passes)."""

    url = _ipxe_url((ETC / "dnsmasq" / "dnsmasq-inspection.conf").read_text())
    script = ETC / "ipxe" / url.rsplit("/", 1)[-1]
    text = script.read_text()
    assert text.startswith("#!ipxe\n")
    settings = dict(
        line.split()[1:3] for line in text.splitlines() if line.startswith("set ")
    )
    assert url == f"{settings['base']}/{script.name}"  # served beside the ramdisk
    assert settings["callback"].endswith(":5050/v1/continue")
    (kernel,) = [x for x in text.splitlines() if x.startswith("kernel ")]
    passed = {
        arg.split("=", 1)[0] for arg in kernel.split("||")[0].split()[2:] if "=" in arg
    }
    guide = (ETC.parent / "doc" / "pxe-filter.md").read_text()
    section = guide.split("### The ramdisk's kernel arguments", 1)[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `([a-zA-Z-]+)=", section, re.M))
    assert passed == listed
    assert {"ipa-inspection-callback-url", "ipa-collect-lldp", "BOOTIF"} <= passed
    assert "ipa-collect-lldp=1" in kernel


def test_the_example_configuration_is_valid_and_says_where_to_listen(
    tmp_path: pathlib.Path,
) -> None:
    from tests.functional.conftest import run_script

    example = (ETC / "ironic-inspector" / "inspector.conf.example").read_text()
    # the option list it points at exists
    for page in re.findall(r"doc/[a-z-]+\.md", example):
        assert (ETC.parent / page).is_file(), page
    assert "doc/config-reference.md" in example
    # listening on loopback, it says that no ramdisk can reach it, and how to
    assert "listen_address = 127.0.0.1" in example.splitlines()
    assert "NO RAMDISK CAN POST ITS DATA" in example
    assert "ipa-inspection-callback-url=" in example
    conf = example.replace(
        "sqlite:////var/lib/ironic-inspector/inspector.sqlite",
        f"sqlite:///{tmp_path}/inspector.sqlite",
    )
    checked = run_script(
        tmp_path,
        "ironic-inspector-status",
        conf,
        "upgrade",
        "check",
        lab_defaults=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "every option set is valid and honoured" in checked.stdout
