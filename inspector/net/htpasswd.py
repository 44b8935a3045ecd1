"""Users of an htpasswd file (bcrypt hashes), for HTTP basic authentication.

Shared by the API (``[DEFAULT]auth_strategy = http_basic``) and the
conductors' JSON-RPC servers (``[json_rpc]auth_strategy = http_basic``).
"""

import base64
import binascii
import logging
import os
import threading
from typing import Any

from inspector import exceptions

LOG = logging.getLogger(__name__)


def authenticated_user(environ: dict[str, Any], users: "Htpasswd") -> str | None:
    """The user of a request's valid HTTP basic credentials, or None
    (missing, malformed, unknown user or wrong password)."""
    scheme, _, encoded = environ.get("HTTP_AUTHORIZATION", "").partition(" ")
    if scheme.lower() != "basic" or not encoded:
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    if not sep or not users.check(user, password):
        return None
    return user


class Htpasswd:
    """user -> bcrypt hash, re-read whenever the file changes."""

    def __init__(self, path: str, option: str, strict: bool = False) -> None:
        self.path = path
        self.option = option
        """The option naming the file, for messages."""
        self.strict = strict
        """A line that is not ``user:bcrypt-hash`` fails the load (instead of
        being skipped with a warning), and so does a file without users."""
        self._guard = threading.Lock()
        self._stamp: tuple[float, int] | None = None
        self._users: dict[str, bytes] = {}
        self._load()  # a missing or unreadable file fails the start

    def _load(self) -> None:
        try:
            stat = os.stat(self.path)
            with open(self.path, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except OSError as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: {self.option} {self.path}: "
                f"{exc.strerror or exc}"
            ) from exc
        users = {}
        for number, line in enumerate(lines, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            user, _, hashed = line.partition(":")
            if not hashed.startswith(("$2y$", "$2b$", "$2a$")):
                if self.strict:
                    raise exceptions.ConfigError(
                        f"Invalid configuration: {self.option} {self.path} line "
                        f"{number} is not user:bcrypt-hash (make it with htpasswd -B)"
                    )
                LOG.warning(
                    "%s line %d: user %r has no bcrypt hash (htpasswd -B); ignored",
                    self.path,
                    number,
                    user,
                )
                continue
            users[user] = hashed.encode()
        if self.strict and not users:
            raise exceptions.ConfigError(
                f"Invalid configuration: {self.option} {self.path} has no users "
                "(add one with htpasswd -B)"
            )
        self._users, self._stamp = users, (stat.st_mtime, stat.st_size)
        LOG.info("Loaded %d users from %s", len(users), self.path)

    def _refresh(self) -> None:
        try:
            stat = os.stat(self.path)
        except OSError as exc:
            LOG.error(
                "Cannot read %s, keeping the users loaded before: %s", self.path, exc
            )
            return
        if (stat.st_mtime, stat.st_size) != self._stamp:
            with self._guard:
                try:
                    self._load()
                except exceptions.ConfigError as exc:
                    LOG.error("%s; keeping the users loaded before", exc)

    def check(self, user: str, password: str) -> bool:
        import bcrypt

        self._refresh()
        hashed = self._users.get(user)
        if hashed is None:
            return False
        try:
            return bcrypt.checkpw(password.encode(), hashed)
        except ValueError:
            return False
