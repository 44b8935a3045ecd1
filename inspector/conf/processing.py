"""Options of the [processing] group."""

from oslo_config import cfg

GROUP = "processing"

DEFAULT_HOOKS = (
    "ramdisk_error,root_disk_selection,scheduler,validate_interfaces,"
    "capabilities,pci_devices"
)

OPTS = [
    cfg.StrOpt(
        "default_processing_hooks",
        default=DEFAULT_HOOKS,
        help="Hooks every deployment runs; change only if you know why.",
    ),
    cfg.StrOpt(
        "processing_hooks",
        default="$default_processing_hooks",
        help="Comma-separated hooks to run, in order (entry points of "
        "ironic_inspector.hooks.processing). Append to "
        "$default_processing_hooks rather than replacing it.",
    ),
    cfg.StrOpt(
        "store_data",
        mutable=True,
        default="none",
        choices=[
            ("none", "keep no data after processing"),
            ("database", "keep raw and processed data in the database"),
            (
                "directory",
                "keep them as JSON files in store_data_dir, outside "
                "the database (readable by other tools; a lost database can be "
                "rebuilt from them with ironic-inspector-manage sync --rebuild)",
            ),
            ("swift", "ironic-inspector's object store: not available, refused"),
        ],
        help="Where to keep introspection data once processing ends. With "
        "none, GET .../data answers 404 and reapply has nothing to use.",
    ),
    cfg.StrOpt(
        "store_data_dir",
        default="/var/lib/ironic-inspector/data",
        help="Directory of store_data = directory: <node uuid>/introspection"
        ".json, unprocessed.json and processed.json.",
    ),
    cfg.StrOpt(
        "ramdisk_logs_dir",
        help="Directory where the ramdisk's logs (the tar.gz it sends in the "
        "'logs' field) are written, one file per introspection: always when "
        "the ramdisk reports an error or processing fails, on success only "
        "with always_store_ramdisk_logs. Unset: the logs are dropped. The "
        "standalone process and conductors refuse to start when it is not a "
        "writable directory. The logs of data that matches no node are "
        "written by the API process that answers it 404, named 'unknown', "
        "when its own configuration sets this directory.",
    ),
    cfg.BoolOpt(
        "always_store_ramdisk_logs",
        default=False,
        help="Also write the ramdisk's logs when it reported no error "
        "(needs ramdisk_logs_dir).",
    ),
    cfg.StrOpt(
        "ramdisk_logs_filename_format",
        default="{uuid}_{dt:%Y%m%d-%H%M%S.%f}.tar.gz",
        help="File name of the ramdisk's logs in ramdisk_logs_dir: {uuid} "
        "the node's UUID, {bmc} its BMC address, {mac} the MAC it booted "
        "from without colons (each 'unknown' when not known), {dt} the UTC "
        "date and time processing took the logs.",
    ),
    cfg.StrOpt(
        "add_ports",
        mutable=True,
        default="pxe",
        choices=[
            ("all", "every NIC with a MAC address"),
            ("active", "NICs with an IP address"),
            ("pxe", "only the NIC the node booted from"),
            ("disabled", "no ports"),
        ],
        help="Which NICs become Ironic ports.",
    ),
    cfg.StrOpt(
        "keep_ports",
        mutable=True,
        default="all",
        choices=[
            ("all", "keep every existing port"),
            ("present", "delete ports whose MAC the ramdisk did not report"),
            ("added", "delete ports not matching the NICs chosen by add_ports"),
        ],
        help="Which existing Ironic ports to keep.",
    ),
    cfg.BoolOpt(
        "overwrite_existing",
        mutable=True,
        default=True,
        help="Overwrite node properties that are already set in Ironic.",
    ),
    cfg.BoolOpt(
        "power_off",
        mutable=True,
        default=True,
        help="Power the node off after processing (when boot is managed).",
    ),
    cfg.BoolOpt(
        "update_pxe_enabled",
        mutable=True,
        default=True,
        help="Set pxe_enabled on existing ports: true only on the boot NIC.",
    ),
    cfg.BoolOpt(
        "disk_partitioning_spacing",
        mutable=True,
        default=True,
        help="Leave 1 GiB for partitioning when computing local_gb.",
    ),
    cfg.StrOpt(
        "node_not_found_hook",
        mutable=True,
        default=None,
        choices=[("enroll", "create the node in Ironic (discovery)")],
        help="What to do with ramdisk data that matches no node under "
        "introspection. Unset: answer 404. enroll: create the node in Ironic "
        "with [discovery] options and process the data (discovery).",
    ),
    cfg.IntOpt(
        "sync_interval",
        default=60,
        min=0,
        help="Seconds between reconcile passes of the leading conductor: "
        "make the Ironic writes finished introspections still owe (Ironic "
        "was down) and remove introspections of nodes deleted from Ironic. "
        "0 disables it; ironic-inspector-manage sync does the same by hand.",
    ),
    cfg.BoolOpt(
        "permit_active_introspection",
        mutable=True,
        default=False,
        help="Allow introspection of nodes in the active and rescue states.",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS


def refusals(conf: cfg.ConfigOpts) -> list[str]:
    """Values of ironic-inspector's that this release does not implement."""
    if conf.processing.store_data == "swift":
        return [
            f"[{GROUP}]store_data = swift is not available in this release: "
            "use database (kept in the introspection database) or directory "
            "(JSON files under [processing]store_data_dir, which any object "
            "store's sync tool can copy); doc/upgrade.md"
        ]
    return []
