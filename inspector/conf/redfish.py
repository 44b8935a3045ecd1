"""Options of the [redfish] group: out-of-band inspection through a node's
Redfish BMC (doc/redfish.md)."""

from oslo_config import cfg

GROUP = "redfish"

FACTS = ("cpus", "memory_mb", "local_gb", "macs")

OPTS: list[cfg.Opt] = [
    cfg.ListOpt(
        "required_facts",
        mutable=True,
        default=list(FACTS),
        item_type=cfg.types.String(choices=FACTS),
        help="The facts a BMC's answer must give, plausibly, for an "
        "introspection in mode 'auto' to finish without the ramdisk: "
        "cpus (at least one), memory_mb (at least 1024), local_gb (a disk "
        "of at least 4 GiB) and macs (at least one NIC MAC). When one is "
        "missing the ramdisk is booted and fills the rest.",
    ),
    cfg.FloatOpt(
        "timeout",
        mutable=True,
        default=30.0,
        min=1,
        help="Seconds one request to a BMC may take before it counts as failed.",
    ),
    cfg.IntOpt(
        "retries",
        mutable=True,
        default=2,
        min=0,
        help="Retries of a request a BMC answered 5xx to, before the "
        "introspection fails naming the BMC (at least 1: sushy reads 0 as "
        "its own default). A request that could not reach the BMC is tried "
        "this many times in all, at least once (sushy counts tries there).",
    ),
    cfg.FloatOpt(
        "retry_delay",
        mutable=True,
        default=1.0,
        min=0,
        help="Seconds between two tries of one request to a BMC.",
    ),
    cfg.IntOpt(
        "max_per_host",
        mutable=True,
        default=4,
        min=1,
        help="Requests a conductor has in flight to one BMC host at most "
        "(an inspection asks one request at a time, so this many "
        "inspections of its systems at once; an address serving several "
        "systems, like a chassis manager, is one host); inspections of "
        "other hosts never wait for these.",
    ),
    cfg.IntOpt(
        "session_cache_size",
        mutable=True,
        default=1000,
        min=1,
        help="Redfish sessions kept for reuse, one per BMC address and "
        "user; the least recently used is dropped beyond this.",
    ),
    cfg.StrOpt(
        "engine",
        mutable=True,
        default="sushy",
        choices=[
            (
                "sushy",
                "the conductor asks the BMC itself through sushy, with "
                "the node's Redfish driver_info (Ironic's show_password policy "
                "must let it read the password)",
            ),
            (
                "ironic",
                "Ironic runs its own redfish inspection (the node's "
                "inspect_interface must be redfish, its provision state "
                "manageable or inspect failed) and the conductor reads the "
                "inventory Ironic stored (API 1.81); the password never leaves "
                "Ironic",
            ),
        ],
        help="Who asks the BMC in modes out-of-band and auto.",
    ),
    cfg.FloatOpt(
        "auto_budget",
        mutable=True,
        default=10.0,
        min=0.5,
        help="Seconds an introspection in mode auto may spend asking the "
        "BMC (engine sushy): a BMC that has not answered within this, or "
        "cannot be asked at all (unreachable, wrong credentials, garbage), "
        "is a reason to boot the ramdisk at once, so auto costs at most "
        "this more than in-band. Out-of-band runs are bounded by timeout "
        "and retries instead.",
    ),
    cfg.FloatOpt(
        "ironic_timeout",
        mutable=True,
        default=300.0,
        min=5,
        help="Seconds to wait for Ironic's own redfish inspection (engine "
        "ironic) to leave 'inspecting' before the introspection fails, in "
        "mode auto too (the node is still Ironic's, so the ramdisk cannot "
        "be booted).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
