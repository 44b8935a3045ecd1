"""The ramdisk's logs: naming, when they are written, bad payloads, the
start-up check."""

import base64
import datetime
import gzip
import io
import logging
import os
import pathlib
import tarfile
from typing import Any
from unittest import mock

import pytest

from inspector import exceptions
from inspector.db import ramdisk_logs

WHEN = datetime.datetime(2024, 3, 5, 7, 8, 9, 123456)
UUID = "1be26c0b-03f2-4d2e-ae87-c02d7f33c123"


def tarball() -> bytes:
    """A gzipped tarball with a journal, as ironic-python-agent sends."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        content = b"Mar 05 07:08:09 ipa ironic-python-agent[1]: hello\n"
        info = tarfile.TarInfo("journal")
        info.size = len(content)
        tar.addfile(info, io.BytesIO(content))
    return buf.getvalue()


def encoded(content: bytes) -> str:
    return base64.b64encode(content).decode()


@pytest.fixture
def logs_dir(conf: Any, tmp_path: pathlib.Path) -> pathlib.Path:
    folder = tmp_path / "ramdisk-logs"
    folder.mkdir()
    conf.set_override("ramdisk_logs_dir", str(folder), group="processing")
    return folder


def files(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# naming


def test_default_name_has_uuid_and_time(conf: Any, data: dict[str, Any]) -> None:
    name = ramdisk_logs.file_name(conf, data, UUID, WHEN)
    assert name == f"{UUID}_20240305-070809.123456.tar.gz"


def test_every_placeholder(conf: Any, data: dict[str, Any]) -> None:
    conf.set_override(
        "ramdisk_logs_filename_format",
        "{uuid}|{bmc}|{mac}|{dt:%Y-%m-%d}|{dt}",
        group="processing",
    )
    data["inventory"]["bmc_address"] = "192.0.2.10"
    data["boot_interface"] = "01-52-54-00-AB-CD-EF"
    name = ramdisk_logs.file_name(conf, data, UUID, WHEN)
    # the MAC without colons, as ironic-inspector writes it; {dt} naive UTC
    assert (
        name == f"{UUID}|192.0.2.10|525400abcdef|2024-03-05|2024-03-05 07:08:09.123456"
    )


@pytest.mark.parametrize(
    ("boot_interface", "pxe_interface", "mac"),
    [
        ("52:54:00:12:34:56", None, "525400123456"),
        ("52-54-00-12-34-56", None, "525400123456"),
        (None, "52:54:00:AB:CD:EF", "525400abcdef"),
        ("01-52-54-00-12", None, "unknown"),
        ("eth0", None, "unknown"),
        (None, None, "unknown"),
    ],
)
def test_mac_forms(
    conf: Any,
    data: dict[str, Any],
    boot_interface: str | None,
    pxe_interface: str | None,
    mac: str,
) -> None:
    conf.set_override("ramdisk_logs_filename_format", "{mac}", group="processing")
    data["boot_interface"] = boot_interface
    data["inventory"]["boot"] = {"pxe_interface": pxe_interface}
    assert ramdisk_logs.file_name(conf, data, UUID, WHEN) == mac


def test_unknown_values(conf: Any) -> None:
    conf.set_override(
        "ramdisk_logs_filename_format", "{uuid}_{bmc}_{mac}", group="processing"
    )
    assert ramdisk_logs.file_name(conf, {}, None, WHEN) == "unknown_unknown_unknown"
    data = {"inventory": {"bmc_address": "0.0.0.0"}, "boot_interface": "garbage"}
    assert ramdisk_logs.file_name(conf, data, None, WHEN) == "unknown_unknown_unknown"


def test_old_ipmi_address_and_ipv6(conf: Any) -> None:
    conf.set_override("ramdisk_logs_filename_format", "{bmc}", group="processing")
    assert ramdisk_logs.file_name(conf, {"ipmi_address": "10.0.0.1"}, None, WHEN) == (
        "10.0.0.1"
    )
    data = {"inventory": {"bmc_address": "2001:db8::1"}}
    assert ramdisk_logs.file_name(conf, data, None, WHEN) == "2001:db8::1"


def test_a_bmc_address_cannot_leave_the_directory(conf: Any) -> None:
    conf.set_override("ramdisk_logs_filename_format", "{bmc}.tgz", group="processing")
    data = {"inventory": {"bmc_address": "../../etc/passwd"}}
    name = ramdisk_logs.file_name(conf, data, None, WHEN)
    assert "/" not in name
    assert ramdisk_logs.file_name(conf, {"ipmi_address": ".."}, None, WHEN) == (
        "unknown.tgz"
    )


# when they are written


@pytest.mark.parametrize(
    ("failed", "error", "always", "due"),
    [
        (False, None, False, False),
        (False, None, True, True),
        (True, None, False, True),
        (False, "disk on fire", False, True),
        (False, "", False, False),
    ],
)
def test_when_logs_are_due(
    conf: Any,
    logs_dir: pathlib.Path,
    failed: bool,
    error: str | None,
    always: bool,
    due: bool,
) -> None:
    conf.set_override("always_store_ramdisk_logs", always, group="processing")
    assert ramdisk_logs.must_write(conf, {"error": error}, failed) is due


def test_never_due_without_a_directory(conf: Any) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    assert not ramdisk_logs.must_write(conf, {"error": "boom"}, True)


def test_error_writes_the_exact_bytes(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    content = tarball()
    data["error"] = "boom"
    held = ramdisk_logs.Held(conf, data, UUID, encoded(content))
    path = held.settle(failed=False)
    assert path is not None and pathlib.Path(path).parent == logs_dir
    assert pathlib.Path(path).read_bytes() == content
    assert files(logs_dir) == [pathlib.Path(path).name]  # no scratch file left
    with tarfile.open(path) as tar:
        assert tar.getnames() == ["journal"]
    # written once: a later failure writes nothing more
    assert held.settle(failed=True) is None
    assert len(files(logs_dir)) == 1


def test_success_writes_only_when_asked(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    held = ramdisk_logs.Held(conf, data, UUID, encoded(tarball()))
    assert held.settle(failed=False) is None
    assert files(logs_dir) == []
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    held = ramdisk_logs.Held(conf, data, UUID, encoded(tarball()))
    assert held.settle(failed=False) is not None
    assert len(files(logs_dir)) == 1


def test_a_failure_after_success_writes(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    held = ramdisk_logs.Held(conf, data, UUID, encoded(tarball()))
    assert held.settle(failed=False) is None
    assert held.settle(failed=True) is not None
    assert len(files(logs_dir)) == 1


def test_not_written_without_a_directory(
    conf: Any, data: dict[str, Any], tmp_path: pathlib.Path
) -> None:
    conf.set_override("always_store_ramdisk_logs", True, group="processing")
    held = ramdisk_logs.Held(conf, data, UUID, encoded(tarball()))
    assert held.settle(failed=True) is None
    assert ramdisk_logs.write(conf, data, UUID, encoded(tarball())) is None
    assert list(tmp_path.iterdir()) == []


def test_log_line_names_the_file(
    conf: Any,
    data: dict[str, Any],
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=ramdisk_logs.__name__)
    path = ramdisk_logs.write(conf, data, UUID, encoded(tarball()), WHEN)
    lines = [r for r in caplog.records if r.levelno == logging.INFO]
    assert len(lines) == 1
    assert str(path) in lines[0].getMessage() and UUID in lines[0].getMessage()


def test_same_name_is_replaced_whole(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    first = ramdisk_logs.write(conf, data, UUID, encoded(gzip.compress(b"one")), WHEN)
    second = ramdisk_logs.write(conf, data, UUID, encoded(gzip.compress(b"two")), WHEN)
    assert first == second and second is not None
    assert gzip.decompress(pathlib.Path(second).read_bytes()) == b"two"
    assert len(files(logs_dir)) == 1


def test_file_mode_follows_the_umask(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    old = os.umask(0o022)
    try:
        path = ramdisk_logs.write(conf, data, UUID, encoded(tarball()), WHEN)
    finally:
        os.umask(old)
    assert path is not None
    assert os.stat(path).st_mode & 0o777 == 0o644


# bad payloads: logged, dropped, never raised


@pytest.mark.parametrize(
    ("logs", "says"),
    [
        ("not base64 at all!", "not valid base64"),
        ("QUJDR", "not valid base64"),  # bad padding
        ("ünïcode", "not valid base64"),
        (encoded(b"plain text, no gzip"), "not a gzip file"),
        (12345, "not a base64 string"),
    ],
)
def test_bad_logs_are_reported_and_dropped(
    conf: Any,
    data: dict[str, Any],
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
    logs: Any,
    says: str,
) -> None:
    caplog.set_level(logging.WARNING, logger=ramdisk_logs.__name__)
    data["error"] = "boom"
    held = ramdisk_logs.Held(conf, data, UUID, logs)
    assert held.settle(failed=True) is None
    assert files(logs_dir) == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert says in warnings[0] and UUID in warnings[0]
    if says == "not valid base64":
        assert warnings[0].startswith(f"The ramdisk's logs of node {UUID} are not")


def test_base64_with_line_breaks_is_accepted(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    content = tarball()
    wrapped = base64.encodebytes(content).decode()
    assert "\n" in wrapped
    path = ramdisk_logs.write(conf, data, UUID, wrapped, WHEN)
    assert path is not None and pathlib.Path(path).read_bytes() == content


def test_no_logs_is_not_an_error(
    conf: Any,
    data: dict[str, Any],
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=ramdisk_logs.__name__)
    assert ramdisk_logs.Held(conf, data, UUID, None).settle(failed=True) is None
    assert files(logs_dir) == []
    assert "sent no logs" in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_directory_gone_at_write_time_is_logged(
    conf: Any,
    data: dict[str, Any],
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    logs_dir.rmdir()
    assert ramdisk_logs.write(conf, data, UUID, encoded(tarball()), WHEN) is None
    assert "Could not write the ramdisk's logs of node " + UUID in caplog.text


def test_a_failed_write_leaves_no_scratch_file(
    conf: Any, data: dict[str, Any], logs_dir: pathlib.Path
) -> None:
    with mock.patch.object(os, "replace", side_effect=OSError(28, "No space")):
        assert ramdisk_logs.write(conf, data, UUID, encoded(tarball()), WHEN) is None
    assert files(logs_dir) == []


def test_an_unusable_format_at_write_time_is_logged(
    conf: Any,
    data: dict[str, Any],
    logs_dir: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    conf.set_override("ramdisk_logs_filename_format", "{node}", group="processing")
    assert ramdisk_logs.write(conf, data, UUID, encoded(tarball()), WHEN) is None
    assert "ramdisk_logs_filename_format" in caplog.text
    assert files(logs_dir) == []


# the field leaves the data


def test_take_strips_the_field() -> None:
    data: dict[str, Any] = {"inventory": {}, "logs": "abc"}
    assert ramdisk_logs.take(data) == "abc"
    assert data == {"inventory": {}}
    assert ramdisk_logs.take(data) is None


# the start-up check


def test_check_passes_unset_and_writable(conf: Any, tmp_path: pathlib.Path) -> None:
    ramdisk_logs.check_conf(conf)
    conf.set_override("ramdisk_logs_dir", str(tmp_path), group="processing")
    ramdisk_logs.check_conf(conf)
    assert list(tmp_path.iterdir()) == []  # the probe is gone


def _refused(conf: Any, path: pathlib.Path | str) -> str:
    conf.set_override("ramdisk_logs_dir", str(path), group="processing")
    with pytest.raises(exceptions.ConfigError) as err:
        ramdisk_logs.check_conf(conf)
    message = str(err.value)
    assert "\n" not in message
    assert "[processing]ramdisk_logs_dir" in message and str(path) in message
    return message


def test_check_refuses_a_missing_directory(conf: Any, tmp_path: pathlib.Path) -> None:
    assert "does not exist" in _refused(conf, tmp_path / "nope")


def test_check_refuses_a_path_under_a_file(conf: Any, tmp_path: pathlib.Path) -> None:
    regular = tmp_path / "file"
    regular.write_text("")
    assert "not a directory" in _refused(conf, regular / "logs")
    assert "not a directory" in _refused(conf, regular)


def test_check_refuses_an_unwritable_directory(
    conf: Any, tmp_path: pathlib.Path
) -> None:
    with mock.patch.object(
        os, "open", side_effect=PermissionError(13, "Permission denied")
    ):
        assert "is not writable: Permission denied" in _refused(conf, tmp_path)


def test_check_refuses_a_read_only_directory(conf: Any, tmp_path: pathlib.Path) -> None:
    """A real one: mode 0500 for a user; as root (who writes anywhere) a
    directory of the read-only sysfs."""
    if os.geteuid() != 0:
        folder = tmp_path / "ro"
        folder.mkdir(mode=0o500)
    else:
        folder = pathlib.Path("/sys/kernel")
        try:
            (folder / ".probe").touch()
        except OSError:
            pass
        else:
            (folder / ".probe").unlink()
            pytest.skip("no read-only directory to try as root here")
    assert "is not writable" in _refused(conf, folder)


def test_check_refuses_an_unusable_format(conf: Any, tmp_path: pathlib.Path) -> None:
    conf.set_override("ramdisk_logs_dir", str(tmp_path), group="processing")
    conf.set_override(
        "ramdisk_logs_filename_format", "{uuid}_{when}.tgz", group="processing"
    )
    with pytest.raises(
        exceptions.ConfigError, match="ramdisk_logs_filename_format"
    ) as err:
        ramdisk_logs.check_conf(conf)
    assert "\n" not in str(err.value)
