"""The API's Unix socket: ``[DEFAULT]listen_unix_socket`` and its mode.

Before the server binds, :func:`check_socket_path` refuses a path the
service must not take (no such directory, something other than a socket
there, a live server on it) and removes a stale socket left by a crash.
After it binds, :func:`apply_mode` sets ``listen_unix_socket_mode``; at a
clean stop :func:`remove_socket` removes the file, if it is still ours.
"""

import errno
import logging
import os
import socket
import stat
from typing import TYPE_CHECKING

from inspector import exceptions

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

OPTION = "[DEFAULT]listen_unix_socket"

OWN_SERVER_OPTIONS = (
    ("DEFAULT", "use_ssl"),
    ("ssl", "cert_file"),
    ("ssl", "key_file"),
    ("ssl", "ca_file"),
    ("ssl", "version"),
    ("ssl", "ciphers"),
    ("DEFAULT", "listen_unix_socket"),
    ("DEFAULT", "listen_unix_socket_mode"),
)
"""Options only the API's own server reads, not a WSGI server such as Apache."""


def own_server_options_set(conf: "cfg.ConfigOpts") -> list[str]:
    """``[group]name`` of each :data:`OWN_SERVER_OPTIONS` set in ``conf``."""
    found = []
    for group, name in OWN_SERVER_OPTIONS:
        value = conf[name] if group == "DEFAULT" else conf[group][name]
        if value not in (None, False, ""):
            found.append(f"[{group}]{name}")
    return found


def _in_use(path: str) -> bool:
    """Whether a server accepts connections on the socket at ``path``."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2)
        try:
            probe.connect(path)
        except OSError as exc:
            if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
                return False
            raise
    return True


def check_socket_path(path: str) -> None:
    """Make ``path`` ready to bind: remove a stale socket, refuse the rest.

    :raises ConfigError: naming the option when the directory is missing,
        something other than a socket is at ``path`` (never removed), or a
        running server listens on it.
    """
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise exceptions.ConfigError(
            f"{OPTION} {path}: the directory {directory} does not exist"
        )
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise exceptions.ConfigError(f"{OPTION} {path}: {exc.strerror or exc}") from exc
    if not stat.S_ISSOCK(mode):
        raise exceptions.ConfigError(
            f"{OPTION} {path} exists and is not a socket: remove it or "
            "choose another path"
        )
    try:
        busy = _in_use(path)
    except OSError as exc:
        raise exceptions.ConfigError(
            f"{OPTION} {path}: cannot probe the existing socket: {exc.strerror or exc}"
        ) from exc
    if busy:
        raise exceptions.ConfigError(
            f"{OPTION} {path}: another process is listening on it"
        )
    LOG.info("Replacing the stale socket %s", path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise exceptions.ConfigError(
            f"{OPTION} {path}: cannot remove the stale socket: {exc.strerror or exc}"
        ) from exc


def apply_mode(path: str, mode: int | None) -> tuple[int, int]:
    """Give the bound socket ``mode`` (None: leave the umask's); its identity.

    Returns ``(st_dev, st_ino)`` for :func:`remove_socket`.

    :raises ConfigError: naming ``listen_unix_socket_mode`` if chmod fails.
    """
    if mode is not None:
        try:
            os.chmod(path, mode)
        except OSError as exc:
            raise exceptions.ConfigError(
                f"[DEFAULT]listen_unix_socket_mode {mode:04o} on {path}: "
                f"{exc.strerror or exc}"
            ) from exc
    info = os.stat(path)
    return info.st_dev, info.st_ino


def remove_socket(path: str, identity: tuple[int, int] | None) -> None:
    """Remove the socket file at ``path`` if it is still the one we bound."""
    try:
        info = os.lstat(path)
    except OSError:
        return
    if identity is not None and (info.st_dev, info.st_ino) != identity:
        LOG.warning("%s is no longer this process's socket: left in place", path)
        return
    if not stat.S_ISSOCK(info.st_mode):
        return
    try:
        os.unlink(path)
    except OSError as exc:
        LOG.warning("Cannot remove the socket %s: %s", path, exc.strerror or exc)
