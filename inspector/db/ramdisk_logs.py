"""The ramdisk's logs: the ``logs`` field of its post, kept as a file.

ironic-python-agent sends its logs (journal, dmesg, ...) as base64 of a
gzipped tarball in ``logs``. The field never enters the introspection
data: the API takes it out on arrival (:func:`take`) and keeps it apart
beside the data (:mod:`inspector.db.stored_data`); the conductor that
processes the post writes it (:func:`write`, through :class:`Held`) to
``[processing]ramdisk_logs_dir`` under ``ramdisk_logs_filename_format``,
as ironic-inspector does: always when processing failed or the ramdisk
reported an error, on success only with ``always_store_ramdisk_logs``.
The logs of a post that matches no node are written by the API at once.
Logs that cannot be decoded are reported and dropped; they never fail an
introspection. :func:`check_conf` refuses a directory that cannot be
written at start-up, in the processes that process data (not the API,
which writes only the logs of data that matches no node).
"""

import base64
import binascii
import datetime
import logging
import os
import re
import uuid as uuid_lib
from typing import Any

from oslo_config import cfg

from inspector import exceptions

LOG = logging.getLogger(__name__)

Data = dict[str, Any]
"""A ramdisk's post (as JSON)."""

FIELD = "logs"
"""The key of the ramdisk's post that holds its logs."""

UNKNOWN = "unknown"

FORMAT_ERRORS = (KeyError, ValueError, IndexError, AttributeError, TypeError)
"""What ``str.format`` raises for a format it cannot fill in."""

GZIP_MAGIC = b"\x1f\x8b"

_UNSAFE = re.compile(r"[^A-Za-z0-9._:@%+=\[\]-]")
"""What a placeholder's value may not bring into a file name (the BMC
address comes from the ramdisk: no ``/``, no ``..`` tricks)."""


def take(data: Data) -> Any:
    """Remove ``logs`` from ``data`` (in place); what it held, or None."""
    return data.pop(FIELD, None)


def must_write(conf: cfg.ConfigOpts, data: Data, failed: bool) -> bool:
    """Whether the logs of this post are due: processing failed or the
    ramdisk reported an error, or ``always_store_ramdisk_logs``."""
    if not conf.processing.ramdisk_logs_dir:
        return False
    always = bool(conf.processing.always_store_ramdisk_logs)
    return failed or bool(data.get("error")) or always


def _safe(value: str | None) -> str:
    if not value:
        return UNKNOWN
    cleaned = _UNSAFE.sub("_", value)
    return UNKNOWN if cleaned.strip(".") == "" else cleaned


def _bmc(data: Data) -> str | None:
    """The BMC address as the ramdisk reported it (ironic-inspector reads
    ``inventory.bmc_address``, then the old top-level ``ipmi_address``)."""
    inventory = data.get("inventory")
    value = inventory.get("bmc_address") if isinstance(inventory, dict) else None
    if value is None:
        value = data.get("ipmi_address")
    if not isinstance(value, str) or value.strip() in ("", "0.0.0.0"):
        return None
    return value.strip()


def _pxe_mac(data: Data) -> str | None:
    """The MAC the node booted from, 12 lower-case hex digits: the
    ``boot_interface`` the ramdisk sends (a MAC, or pxelinux's
    ``01-aa-bb-cc-dd-ee-ff``), else ``inventory.boot.pxe_interface``.

    (Not :func:`inspector.hooks.interfaces.boot_mac`: this accepts
    12 hex digits alone too, and the API, which writes the logs of unknown
    posts, loads no processing hook.)
    """
    value = data.get("boot_interface")
    if not isinstance(value, str):
        inventory = data.get("inventory")
        boot = inventory.get("boot") if isinstance(inventory, dict) else None
        value = boot.get("pxe_interface") if isinstance(boot, dict) else None
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    if text.count("-") == 6:  # pxelinux: the ARP type, then the MAC
        text = text.split("-", 1)[1]
    digits = text.replace("-", "").replace(":", "")
    if len(digits) != 12 or any(c not in "0123456789abcdef" for c in digits):
        return None
    return digits


def file_name(
    conf: cfg.ConfigOpts, data: Data, uuid: str | None, when: datetime.datetime
) -> str:
    """``ramdisk_logs_filename_format`` filled in: ``{uuid}``, ``{bmc}``,
    ``{mac}`` (the PXE MAC without colons, as ironic-inspector writes it)
    and ``{dt}`` (``when``, naive UTC, so ``{dt:%Y%m%d}`` works as in
    ``str.format``); each unknown value is ``unknown``.

    :raises KeyError, ValueError, IndexError, AttributeError, TypeError:
        the format is not valid.
    """
    return str(conf.processing.ramdisk_logs_filename_format).format(
        uuid=_safe(uuid),
        bmc=_safe(_bmc(data)),
        mac=_pxe_mac(data) or UNKNOWN,
        dt=when,
    )


def utcnow() -> datetime.datetime:
    """Now in UTC without a time zone, as ironic-inspector formats ``{dt}``."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def decode(logs: Any, uuid: str | None) -> bytes | None:
    """The tarball ``logs`` holds, or None (with a warning naming the node)
    when it is not base64 of a gzip file."""
    if not isinstance(logs, str):
        LOG.warning(
            "The ramdisk's logs of node %s are not a base64 string (%s): dropped",
            uuid or UNKNOWN,
            type(logs).__name__,
        )
        return None
    try:
        raw = base64.b64decode("".join(logs.split()).encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        LOG.warning(
            "The ramdisk's logs of node %s are not valid base64 (%s): dropped",
            uuid or UNKNOWN,
            exc,
        )
        return None
    if not raw.startswith(GZIP_MAGIC):
        LOG.warning(
            "The ramdisk's logs of node %s are not a gzip file (%d bytes "
            "starting %r): dropped",
            uuid or UNKNOWN,
            len(raw),
            raw[:8],
        )
        return None
    return raw


def _write_atomically(path: str, content: bytes) -> None:
    """``content`` at ``path``, whole or not at all: written to a hidden
    file beside it, then renamed over it."""
    folder, name = os.path.split(path)
    scratch = os.path.join(folder, f".{name}.{uuid_lib.uuid4().hex}.tmp")
    # the umask decides the mode, as for a plain open()
    handle = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
            out.flush()
            os.fsync(out.fileno())
        os.replace(scratch, path)
    except BaseException:
        try:
            os.unlink(scratch)
        except OSError:
            pass
        raise


def write(
    conf: cfg.ConfigOpts,
    data: Data,
    uuid: str | None,
    logs: Any,
    when: datetime.datetime | None = None,
) -> str | None:
    """Write ``logs`` (the field as posted) for the node ``uuid`` into
    ``ramdisk_logs_dir``; the path written, or None. Never raises: a
    problem is logged and the logs are dropped."""
    folder = conf.processing.ramdisk_logs_dir
    if not folder:
        LOG.debug("ramdisk_logs_dir is not set: logs of node %s dropped", uuid)
        return None
    if logs is None or logs == "":
        LOG.info("The ramdisk of node %s sent no logs to keep", uuid or UNKNOWN)
        return None
    content = decode(logs, uuid)
    if content is None:
        return None
    try:
        name = file_name(conf, data, uuid, when or utcnow())
    except FORMAT_ERRORS as exc:
        LOG.warning(
            "Could not name the ramdisk's logs of node %s with "
            "[processing]ramdisk_logs_filename_format %r (%s): dropped",
            uuid or UNKNOWN,
            conf.processing.ramdisk_logs_filename_format,
            exc,
        )
        return None
    path = os.path.join(folder, name)
    try:
        _write_atomically(path, content)
    except OSError as exc:
        LOG.warning(
            "Could not write the ramdisk's logs of node %s to %s: %s",
            uuid or UNKNOWN,
            path,
            exc,
        )
        return None
    LOG.info("The ramdisk's logs of node %s were written to %s", uuid or UNKNOWN, path)
    return path


OPTION = "[processing]ramdisk_logs_dir"


def check_conf(conf: cfg.ConfigOpts) -> None:
    """Refuse, at start-up of a process that writes the logs (standalone,
    conductor), a ``ramdisk_logs_dir`` that is missing or not writable, and
    a ``ramdisk_logs_filename_format`` that cannot be filled in.

    :raises ConfigError: one line naming the option and the value.
    """
    folder = conf.processing.ramdisk_logs_dir
    if not folder:
        return
    if not os.path.isdir(folder):
        raise exceptions.ConfigError(
            f"Invalid configuration: {OPTION} {folder} does not exist or is "
            "not a directory"
        )
    probe = os.path.join(folder, f".probe-{uuid_lib.uuid4().hex}")
    try:
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        os.unlink(probe)
    except OSError as exc:
        raise exceptions.ConfigError(
            f"Invalid configuration: {OPTION} {folder} is not writable: "
            f"{exc.strerror or exc}"
        ) from exc
    template = conf.processing.ramdisk_logs_filename_format
    try:
        file_name(conf, {}, None, utcnow())
    except FORMAT_ERRORS as exc:
        raise exceptions.ConfigError(
            "Invalid configuration: [processing]ramdisk_logs_filename_format "
            f"{template!r} cannot be filled in ({type(exc).__name__}: {exc}); "
            "it may use {uuid}, {bmc}, {mac} and {dt}"
        ) from exc


def _naming_facts(data: Data) -> Data:
    """The fields of ``data`` :func:`must_write` and :func:`file_name` read."""
    facts: Data = {
        key: data[key]
        for key in ("error", "ipmi_address", "boot_interface")
        if key in data
    }
    inventory = data.get("inventory")
    if isinstance(inventory, dict):
        boot = inventory.get("boot")
        facts["inventory"] = {
            "bmc_address": inventory.get("bmc_address"),
            "boot": dict(boot) if isinstance(boot, dict) else boot,
        }
    return facts


class Held:
    """The logs taken out of one post, written at most once."""

    def __init__(
        self, conf: cfg.ConfigOpts, data: Data, uuid: str | None, logs: Any
    ) -> None:
        self.conf = conf
        self.data = _naming_facts(data)
        """What deciding and naming the file reads of the post, copied:
        the hooks change the post in place while it is processed."""
        self.uuid = uuid
        self.logs = logs
        self.taken_at = utcnow()
        """When processing took the logs: the ``{dt}`` of the file."""
        self.settled = False

    def settle(self, failed: bool) -> str | None:
        """Write the logs if they are due (see :func:`must_write`); once
        due they are let go. The path written, or None."""
        if self.settled or not must_write(self.conf, self.data, failed):
            return None
        self.settled = True
        logs, self.logs = self.logs, None
        return write(self.conf, self.data, self.uuid, logs, self.taken_at)
