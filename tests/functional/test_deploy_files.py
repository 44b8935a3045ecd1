"""The unit files and the Apache vhost in etc/ are valid as shipped."""

import pathlib
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
