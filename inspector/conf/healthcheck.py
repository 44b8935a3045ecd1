"""Options of the [healthcheck] group: ours plus oslo.middleware's own."""

from oslo_config import cfg
from oslo_middleware.healthcheck import opts as oslo_opts

GROUP = "healthcheck"

CHECKS = ["database", "coordination", "messaging"]
"""The inspector's checks (entry points in ``oslo.middleware.healthcheck``).
They always run; ``[healthcheck]backends`` adds other plugins, such as
oslo.middleware's ``disable_by_file``."""

OPTS = [
    cfg.BoolOpt(
        "enabled",
        default=False,
        help="Answer GET /healthcheck (oslo.middleware) on the API, without "
        "authentication: 200 when every backend check passes, 503 otherwise. "
        "Load balancers and monitoring poll it.",
    ),
    cfg.FloatOpt(
        "check_timeout",
        default=3.0,
        min=0.1,
        help="Seconds one backend check (database, coordination, messaging) "
        "may take before it counts as failed; a hung backend never hangs "
        "the health check.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
    conf.register_opts(oslo_opts.HEALTHCHECK_OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS + oslo_opts.HEALTHCHECK_OPTS
