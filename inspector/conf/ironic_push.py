"""Options of the [ironic_push] group: the pushes of the inspection hook
that runs inside Ironic (``ironic-push-hook/``, POST
/v1/ironic/inspections)."""

from oslo_config import cfg

GROUP = "ironic_push"

OPTS: list[cfg.Opt] = [
    cfg.BoolOpt(
        "allow_unauthenticated",
        default=False,
        mutable=True,
        help="Take pushes of Ironic's inspection hook although "
        "[DEFAULT]auth_strategy is noauth. Off, such a service refuses every "
        "push (403, logged with the caller's address): without "
        "authentication anyone who reaches the API could write a node's "
        "hardware history. Each push is still checked against Ironic (the "
        "node exists and its running inspection started when the push says), "
        "which stops a stale or made-up push but not one that copies a real "
        "node's start time. For a lab or a closed network only; with keystone "
        "or http_basic pushes are authenticated and this option is not read.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
