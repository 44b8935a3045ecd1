"""Preparing the API's Unix socket path, its mode and its removal; the
list of own-server options a WSGI server such as Apache ignores."""

import logging
import os
import pathlib
import socket
import stat
from collections.abc import Iterator
from unittest import mock

import pytest
from oslo_config import cfg

from inspector import exceptions, wsgi
from inspector.conf import default
from inspector.conf import ssl as ssl_opts
from inspector.net import listen


@pytest.fixture
def short_dir() -> Iterator[pathlib.Path]:
    # a Unix socket path must fit in 108 bytes; pytest's tmp_path may not
    import tempfile

    with tempfile.TemporaryDirectory(prefix="sock-") as name:
        yield pathlib.Path(name)


def _stale_socket(path: pathlib.Path) -> None:
    """A socket file nobody listens on, as a crashed server leaves it."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.close()


def test_nothing_there_is_fine(short_dir: pathlib.Path) -> None:
    listen.check_socket_path(str(short_dir / "api.sock"))


def test_stale_socket_is_removed(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    _stale_socket(path)
    assert stat.S_ISSOCK(path.lstat().st_mode)
    listen.check_socket_path(str(path))
    assert not path.exists()


def test_live_socket_is_refused(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as live:
        live.bind(str(path))
        live.listen()
        with pytest.raises(exceptions.ConfigError) as caught:
            listen.check_socket_path(str(path))
    assert str(caught.value).startswith("[DEFAULT]listen_unix_socket ")
    assert "another process is listening" in str(caught.value)
    assert path.exists()


@pytest.mark.parametrize("kind", ["file", "directory", "symlink"])
def test_non_socket_is_refused_and_kept(short_dir: pathlib.Path, kind: str) -> None:
    path = short_dir / "api.sock"
    if kind == "file":
        path.write_text("precious")
    elif kind == "directory":
        path.mkdir()
    else:
        _stale_socket(short_dir / "real.sock")
        path.symlink_to(short_dir / "real.sock")
    with pytest.raises(exceptions.ConfigError) as caught:
        listen.check_socket_path(str(path))
    assert str(caught.value) == (
        f"[DEFAULT]listen_unix_socket {path} exists and is not a socket: "
        "remove it or choose another path"
    )
    assert os.path.lexists(path)
    if kind == "file":
        assert path.read_text() == "precious"


def test_missing_directory_is_refused(short_dir: pathlib.Path) -> None:
    path = short_dir / "no-such-dir" / "api.sock"
    with pytest.raises(exceptions.ConfigError) as caught:
        listen.check_socket_path(str(path))
    assert str(caught.value) == (
        f"[DEFAULT]listen_unix_socket {path}: the directory "
        f"{short_dir / 'no-such-dir'} does not exist"
    )


def test_mode_applied_and_identity_returned(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    _stale_socket(path)
    identity = listen.apply_mode(str(path), 0o660)
    info = path.stat()
    assert stat.S_IMODE(info.st_mode) == 0o660
    assert identity == (info.st_dev, info.st_ino)


def test_mode_left_alone_when_unset(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    _stale_socket(path)
    path.chmod(0o604)
    listen.apply_mode(str(path), None)
    assert stat.S_IMODE(path.stat().st_mode) == 0o604


def test_remove_only_our_socket(short_dir: pathlib.Path) -> None:
    path = short_dir / "api.sock"
    _stale_socket(path)
    ours = listen.apply_mode(str(path), None)
    # another process replaced it meanwhile: not ours to remove
    _stale_socket(short_dir / "new.sock")
    os.replace(short_dir / "new.sock", path)
    listen.remove_socket(str(path), ours)
    assert path.exists()
    listen.remove_socket(str(path), listen.apply_mode(str(path), None))
    assert not path.exists()
    listen.remove_socket(str(path), ours)  # gone already: nothing to do


def _conf() -> cfg.ConfigOpts:
    conf = cfg.ConfigOpts()
    default.register_opts(conf)
    ssl_opts.register_opts(conf)
    conf([])
    return conf


def test_own_server_options_set() -> None:
    conf = _conf()
    assert listen.own_server_options_set(conf) == []
    conf.set_override("use_ssl", True)
    conf.set_override("cert_file", "/etc/c.pem", group="ssl")
    conf.set_override("listen_unix_socket", "/run/api.sock")
    conf.set_override("listen_unix_socket_mode", 0o660)
    assert listen.own_server_options_set(conf) == [
        "[DEFAULT]use_ssl",
        "[ssl]cert_file",
        "[DEFAULT]listen_unix_socket",
        "[DEFAULT]listen_unix_socket_mode",
    ]


def test_wsgi_application_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    conf = _conf()
    conf.set_override("use_ssl", True)
    conf.set_override("listen_unix_socket", "/run/api.sock")
    caplog.set_level(logging.WARNING, logger="inspector.wsgi")
    with mock.patch.object(wsgi, "_warned_own_server", False):
        wsgi._warn_own_server_options(conf)
        wsgi._warn_own_server_options(conf)
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [
        "[DEFAULT]use_ssl, [DEFAULT]listen_unix_socket: ignored under a WSGI "
        "server such as Apache, which does TLS and listens itself; configure "
        "those there"
    ]


def test_wsgi_application_silent_without_them(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="inspector.wsgi")
    with mock.patch.object(wsgi, "_warned_own_server", False):
        wsgi._warn_own_server_options(_conf())
    assert caplog.records == []
