"""The hook's options: the ``[inspector_push]`` group of Ironic's own
configuration, read through the oslo.config Ironic already has (imported
in a function, so the rest of the package needs only the standard
library), and the plain values the delivery works with."""

import dataclasses
from typing import Any

GROUP = "inspector_push"
AUTH_TYPES = ("none", "http_basic", "keystone")
PATH = "/v1/ironic/inspections"
"""The service's push endpoint, below ``url``."""


@dataclasses.dataclass(frozen=True)
class Settings:
    """What one delivery needs, read once from the options."""

    url: str
    """The service's root URL (no path); empty: the hook does nothing."""
    auth_type: str = "none"
    username: str | None = None
    password: str | None = None
    keystone_section: str = "service_catalog"
    timeout: float = 2.0
    spool_dir: str = ""
    spool_max: int = 500
    cafile: str | None = None
    insecure: bool = False

    @property
    def endpoint(self) -> str:
        return self.url.rstrip("/") + PATH


def list_opts() -> list[tuple[str, list[Any]]]:
    """The group and its options, for the entry point ``oslo.config.opts``
    (``oslo-config-generator --namespace inspector_push``)."""
    return [(GROUP, options())]


def options() -> list[Any]:
    """The options (oslo.config ``Opt`` objects)."""
    from oslo_config import cfg

    return [
        cfg.StrOpt(
            "url",
            default="",
            help="The root URL of ironic-inspector-ng's API (for example "
            "http://inspector.example:5050); the hook posts each inspection "
            f"to {PATH} below it. Empty: the hook does nothing.",
        ),
        cfg.StrOpt(
            "auth_type",
            default="none",
            choices=AUTH_TYPES,
            help="How the hook authenticates to the service, whose "
            "[DEFAULT]auth_strategy must match: 'http_basic' sends "
            "username and password; 'keystone' sends a token of Ironic's own "
            "service user, from the keystoneauth options of the section "
            "keystone_section (the service's policy introspection:ironic_push "
            "allows the service role); 'none' sends nothing, and a service "
            "without authentication refuses pushes unless told otherwise.",
        ),
        cfg.StrOpt("username", help="The user of http_basic."),
        cfg.StrOpt("password", secret=True, help="The password of http_basic."),
        cfg.StrOpt(
            "keystone_section",
            default="service_catalog",
            help="With auth_type = keystone: the section of Ironic's "
            "configuration whose keystoneauth options (auth_type, auth_url, "
            "username, ...) give the token: Ironic's [service_catalog] or "
            "[inspector] hold its service user.",
        ),
        cfg.FloatOpt(
            "timeout",
            default=2.0,
            min=0.1,
            max=30.0,
            help="The most, in seconds, the hook adds to one inspection "
            "(the push and any resend of the spool together). Ironic holds "
            "the node's lock meanwhile; a push that is not answered in time "
            "is spooled and sent again later (the service drops a "
            "duplicate).",
        ),
        cfg.StrOpt(
            "spool_dir",
            default="$state_path/inspector_push",
            help="Where pushes the service did not take (away, failing, or "
            "refusing the credentials) wait to be sent again: each later "
            "inspection first sends its own push, then those, oldest first, "
            "in the time timeout leaves. Created if missing. Empty: a push "
            "that fails is lost (the service's polling may still record the "
            "inspection, without the ramdisk's logs).",
        ),
        cfg.IntOpt(
            "spool_max",
            default=500,
            min=0,
            help="The most pushes kept in spool_dir (each the size of one "
            "inventory with its plugin data and logs: tens of KiB to a few "
            "MiB); the oldest are dropped first, with a warning. 0: none.",
        ),
        cfg.StrOpt(
            "cafile",
            help="A CA bundle to verify the service's HTTPS certificate with "
            "(default: the system's).",
        ),
        cfg.BoolOpt(
            "insecure",
            default=False,
            help="Do not verify the service's HTTPS certificate (a lab only: "
            "the credentials could be sent to anyone).",
        ),
    ]


def register(conf: Any) -> None:
    """Register the options on ``conf`` (Ironic's ``CONF``), once."""
    conf.register_opts(options(), group=GROUP)


def from_conf(conf: Any) -> Settings:
    """The settings ``conf`` (with the options registered) holds now."""
    group = getattr(conf, GROUP)
    return Settings(
        url=group.url or "",
        auth_type=group.auth_type,
        username=group.username,
        password=group.password,
        keystone_section=group.keystone_section,
        timeout=float(group.timeout),
        spool_dir=group.spool_dir or "",
        spool_max=int(group.spool_max),
        cafile=group.cafile,
        insecure=bool(group.insecure),
    )
