"""Options of the [ironic_follow] group: recording Ironic's own
inspections (Ironic 33 and later inspect by themselves) in the hardware
history and the fleet view."""

from oslo_config import cfg

from inspector import exceptions

GROUP = "ironic_follow"

OPTS: list[cfg.Opt] = [
    cfg.BoolOpt(
        "enabled",
        default=False,
        help="Follow Ironic's own inspections (its agent, redfish and other "
        "inspect interfaces): every inspection Ironic finishes becomes one "
        "run in the node's hardware history, compared with the node's "
        "previous run whatever made it, and the node takes its place in the "
        "fleet view. The standalone process, or in split mode the leader "
        "conductor, polls Ironic's node list. Needs Ironic API 1.81 (the "
        "node inventory) and Ironic's [inventory]data_backend other than "
        "'none'. Nodes whose inspect interface is 'inspector' are not "
        "followed: this service inspects them itself. doc/follow-ironic.md.",
    ),
    cfg.IntOpt(
        "poll_interval",
        default=60,
        min=1,
        mutable=True,
        help="Seconds between the starts of two polls of Ironic's node "
        "list (a poll longer than this is followed by the next at once). "
        "A poll with nothing new is the newest recorded node and one page "
        "of the list sorted on inspection_finished_at after it (50-60 ms of "
        "Ironic's CPU at 10,000 nodes, doc/benchmarks.md). Each node's new "
        "inspection costs one inventory read. With "
        "[ironic_follow]notifications on, this is the safety net for lost "
        "notifications and can be longer.",
    ),
    cfg.IntOpt(
        "full_scan_interval",
        default=3600,
        min=0,
        mutable=True,
        help="Seconds between two whole scans of Ironic's node list (the "
        "fields the follower needs only, pages of [ironic_follow]page_size), "
        "which compare every node with what is recorded: the safety net for "
        "what the sorted poll cannot see (a node whose inspection could not "
        "be read then). A scan of 10,000 nodes costs Ironic 5-6 s of CPU "
        "(doc/benchmarks.md). "
        "One is always made at start and on taking the lead. 0: only then.",
    ),
    cfg.IntOpt(
        "page_size",
        default=1000,
        min=1,
        max=1000,
        help="Nodes per page of Ironic's node list (Ironic's [api]max_limit "
        "caps it, 1000 by default).",
    ),
    cfg.IntOpt(
        "max_inventory_size",
        default=10 * 1024 * 1024,
        min=1024,
        help="The largest inventory and plugin data, in bytes of JSON, "
        "recorded from Ironic; a larger one is skipped with a warning "
        "(the ramdisk's own post is bounded alike).",
    ),
    cfg.BoolOpt(
        "notifications",
        default=False,
        help="Also listen to Ironic's notifications (topic "
        "[ironic_follow]notification_topic on the notification transport, "
        "[oslo_messaging_notifications]transport_url or else "
        "[DEFAULT]transport_url): a 'baremetal.node.provision_set.end' "
        "ending an inspection is recorded within seconds. Ironic must "
        "send them: its [DEFAULT]notification_level = info and a "
        "notification driver. Notifications can be lost: polling keeps "
        "running at [ironic_follow]poll_interval.",
    ),
    cfg.StrOpt(
        "notification_exchange",
        default="ironic",
        help="The exchange Ironic sends its notifications to (Ironic's "
        "[DEFAULT]control_exchange, 'ironic' unless changed there).",
    ),
    cfg.StrOpt(
        "notification_topic",
        default="ironic_versioned_notifications",
        help="The topic Ironic sends its versioned notifications to "
        "(Ironic's [DEFAULT]versioned_notifications_topics).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS


def notification_url(conf: cfg.ConfigOpts) -> str:
    """The URL the notification listener opens: oslo.messaging's
    [oslo_messaging_notifications]transport_url, else
    [DEFAULT]transport_url (registering its options if needed)."""
    from oslo_messaging import opts as messaging_opts

    from inspector.conf import shape

    for group, options in messaging_opts.list_opts():
        if group == "oslo_messaging_notifications":
            conf.register_opts(options, group=group)
    url = conf.oslo_messaging_notifications.transport_url
    return str(url or shape.transport_url(conf))


def check(conf: cfg.ConfigOpts) -> None:
    """Refuse [ironic_follow]notifications without a broker to listen to.

    :raises ConfigError: naming the option to set.
    """
    if not (conf.ironic_follow.enabled and conf.ironic_follow.notifications):
        return
    url = notification_url(conf)
    # "rabbit://", oslo.messaging's default, names no broker (a guest on
    # this host): as good as unset
    if not url or url.startswith("fake:") or url == "rabbit://":
        raise exceptions.ConfigError(
            "Invalid configuration: [ironic_follow]notifications listens to "
            "Ironic's notifications on its message broker: set "
            "[oslo_messaging_notifications]transport_url to the broker Ironic "
            "notifies (the URL of Ironic's own [oslo_messaging_notifications]"
            "transport_url, or its [DEFAULT]transport_url), or turn "
            "notifications off (polling alone records every inspection, "
            "within [ironic_follow]poll_interval)"
        )
