"""Options of the [inventory] group: the fleet view's outliers and the
expected cabling."""

from oslo_config import cfg, types

from inspector import hardware_facts

GROUP = "inventory"

PEER_FACT_CHOICES = tuple(
    f for f in hardware_facts.COLUMNS if f not in hardware_facts.OWN
)
"""The facts peers may be chosen by (the fleet view's facts, less those
every node has its own value of)."""

OPTS = [
    cfg.ListOpt(
        "peer_facts",
        default=["vendor", "product"],
        item_type=types.String(choices=PEER_FACT_CHOICES),
        help="The facts that make nodes peers for GET /v1/inventory/outliers: "
        "nodes with the same values of all of them are compared. The "
        "default, vendor and product, compares machines of one model; add "
        "cpu_model to compare one model's CPU options apart (fewer peers "
        "each, so fewer outliers found).",
    ),
    cfg.IntOpt(
        "min_peers",
        default=5,
        min=1,
        help="How many peers (other nodes, the node itself not counted) a "
        "node needs before it can be an outlier. Lower finds outliers in "
        "small groups, at the price of more noise.",
    ),
    cfg.FloatOpt(
        "peer_share",
        default=0.8,
        min=0.5,
        max=1.0,
        help="The share of a node's peers (0.5 to 1) that must have one same "
        "value of a fact the node does not have for the node to be an "
        "outlier on that fact. 1 flags a node only when all its peers "
        "agree; lower flags more.",
    ),
    cfg.StrOpt(
        "expected_cabling",
        help="A file of the expected cabling: one line per rule, "
        "'node, nic, switch, port' (node name, name pattern or UUID; NIC "
        "name or MAC; switch LLDP system name or chassis id; port id or "
        "pattern). GET /v1/inventory/cabling reports each NIC a rule names "
        "that is seen elsewhere as an 'unexpected' problem. Read at start "
        "(a malformed file stops the service, naming the line) and again "
        "when it changes. Unset: no such check.",
    ),
    cfg.IntOpt(
        "full_read_interval",
        default=300,
        min=1,
        mutable=True,
        help="Seconds between two whole reads of the fleet view by each API "
        "process, in the background. Requests read only the nodes whose "
        "runs are new; the whole read is the safety net for a change they "
        "cannot see (a run committed more than an hour after it ended). "
        "It reads and applies 200 nodes at a time and, between two, waits "
        "for the requests in flight to end (1 s at most), so requests are "
        "not held up while it runs.",
    ),
    cfg.IntOpt(
        "page_changes",
        default=50,
        min=1,
        max=1000,
        help="How many of the newest runs with hardware changes the /fleet "
        "page shows (and the changes of one node on its page).",
    ),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)


def list_opts() -> list[cfg.Opt]:
    return OPTS
