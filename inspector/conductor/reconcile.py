"""Bring the inspector and Ironic back in line (``ironic-inspector-manage
sync`` and the leader's periodic reconcile).

- **owed**: writes a finished introspection could not make (Ironic was
  down) are made now;
- **deleted**: introspections of nodes Ironic no longer has are removed;
- **drift**: the scheduling properties and ports Ironic has are compared
  with the last processed data; reported, and re-applied with ``apply``;
- **stale ports**: ports this service created whose MAC the node's last
  data does not report are reported (never deleted automatically).

``rebuild`` first recreates, from a ``directory`` data store, the finished
introspections a lost database no longer has. ``dry_run`` reports what
would be done and writes nothing. Ironic is asked
once first; if it does not answer, nothing else is tried.
"""

import dataclasses
import json
import logging
from typing import Any

from inspector import exceptions, states
from inspector.conductor import filing, owed, processing
from inspector.db import data_store, introspections, listing, stored_data, sweeps
from inspector.hooks import pipeline
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

PROPERTIES = ("cpus", "memory_mb", "local_gb", "cpu_arch")
CREATED_BY = "ironic-inspector"
"""``extra.created_by`` of the ports this service creates."""


class IronicUnreachable(exceptions.InspectorError):
    code = 503
    template = "Ironic cannot be reached, nothing was changed: %(reason)s"


@dataclasses.dataclass
class Finding:
    node: str
    kind: str
    """owed, deleted, drift or stale-port"""
    detail: str
    action: str
    """done, would do, reported, or failed: ..."""


@dataclasses.dataclass
class Report:
    dry_run: bool
    findings: list[Finding] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)

    def add(self, node: str, kind: str, detail: str, action: str) -> None:
        self.findings.append(Finding(node, kind, detail, action))

    def as_json(self) -> str:
        return json.dumps(
            {
                "dry_run": self.dry_run,
                "findings": [dataclasses.asdict(f) for f in self.findings],
                "notes": self.notes,
            },
            indent=2,
        )

    def as_table(self) -> str:
        notes = "".join(f"\n{n}" for n in self.notes)
        if not self.findings:
            return "Nothing to reconcile: the inspector and Ironic agree." + notes
        rows = [("node", "kind", "detail", "action")] + [
            (f.node, f.kind, f.detail, f.action) for f in self.findings
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(4)]
        lines = [
            "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
            for r in rows
        ]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines) + notes


def _nodes(rt: Runtime) -> set[str]:
    try:
        return rt.baremetal.list_node_uuids()
    except exceptions.InspectorError as exc:
        raise IronicUnreachable(reason=exc.message) from exc


def _owed(rt: Runtime, report: Report) -> None:
    for record in sweeps.owing(rt.db):
        writes = record.owed or {}
        detail = owed.describe(writes)
        if report.dry_run:
            report.add(record.uuid, "owed", detail, "would do")
            continue
        try:
            if writes.get("reprocess"):
                _reprocess(rt, record.uuid, writes)
            else:
                owed.make(rt.baremetal, record.uuid, writes)
        except exceptions.InspectorError as exc:
            report.add(record.uuid, "owed", detail, f"failed: {exc.message}")
            continue
        introspections.settle(rt.db, record.uuid, record.version)
        filing.file_settled(rt, record)
        LOG.info("Made the pending Ironic writes of node %s: %s", record.uuid, detail)
        report.add(record.uuid, "owed", detail, "done")


_hooks: dict[int, Any] = {}


def _reprocess(rt: Runtime, uuid: str, writes: dict[str, Any]) -> None:
    """Process the stored ramdisk data again and write the results."""
    hooks = _hooks.get(id(rt.conf))
    if hooks is None:
        hooks = _hooks[id(rt.conf)] = pipeline.load_hooks(rt.conf)
    raw = stored_data.get(rt.db, uuid, processed=False)
    processed = processing.update_node(rt, hooks, uuid, raw)
    stored_data.store(rt.db, uuid, processed, processed=True)  # filed away after
    if writes.get("power_off"):
        rt.baremetal.set_power_state(uuid, "power off")


def _all_records(rt: Runtime) -> list[Any]:
    records, marker = [], None
    while True:
        page = listing.page(rt.db, limit=500, marker=marker)
        records += page
        if len(page) < 500:
            return records
        marker = page[-1].uuid


def _deleted(rt: Runtime, known: set[str], report: Report) -> None:
    for record in _all_records(rt):
        if record.uuid in known:
            continue
        if report.dry_run:
            report.add(record.uuid, "deleted", "node gone from Ironic", "would do")
            continue
        introspections.delete(rt.db, record.uuid)
        LOG.info(
            "Removed the introspection of node %s: Ironic no longer has it", record.uuid
        )
        report.add(record.uuid, "deleted", "node gone from Ironic", "done")


def _expected(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in PROPERTIES if data.get(k) not in (None, "")}


def _drift(rt: Runtime, known: set[str], apply: bool, report: Report) -> None:
    store = rt.stores.current()
    for record in _all_records(rt):
        if (
            record.uuid not in known
            or record.state != states.FINISHED
            or record.owed_writes is not None
        ):
            continue
        try:
            data = store.get(record.uuid, processed=True)
        except exceptions.NotFound:
            continue  # nothing kept to compare with
        node = rt.baremetal.get_node(record.uuid)
        props = node.get("properties") or {}
        patches = [
            {"op": "add", "path": f"/properties/{k}", "value": v}
            for k, v in _expected(data).items()
            if props.get(k) != v
        ]
        ports = rt.baremetal.list_ports(record.uuid)
        have = {str(p.get("address")).lower() for p in ports}
        missing = [m for m in data.get("macs") or [] if m not in have]
        seen = {i.get("mac") for i in (data.get("all_interfaces") or {}).values()}
        for port in ports:
            if (port.get("extra") or {}).get("created_by") == CREATED_BY and port.get(
                "address"
            ) not in seen:
                report.add(
                    record.uuid,
                    "stale-port",
                    f"port {port['address']} matches no NIC",
                    "reported",
                )
        if not patches and not missing:
            continue
        detail = ", ".join(
            [
                f"{p['path'].rsplit('/', 1)[-1]}: ironic "
                f"{props.get(p['path'].rsplit('/', 1)[-1])!r} != "
                f"{p['value']!r}"
                for p in patches
            ]
            + [f"port {m} missing" for m in missing]
        )
        if not apply or report.dry_run:
            report.add(
                record.uuid, "drift", detail, "would do" if apply else "reported"
            )
            continue
        writes = {
            "node_patches": patches,
            "ports_to_create": [
                {
                    "address": m,
                    "pxe_enabled": m == data.get("boot_interface"),
                    "extra": {"created_by": CREATED_BY},
                }
                for m in missing
            ],
        }
        try:
            owed.make(rt.baremetal, record.uuid, writes)
        except exceptions.InspectorError as exc:
            report.add(record.uuid, "drift", detail, f"failed: {exc.message}")
            continue
        report.add(record.uuid, "drift", detail, "done")


NOT_REBUILT = (
    "introspections that were running (start them again), lookup attributes "
    "(only needed while waiting), introspection rules (ironic-inspector-manage "
    "rules export/import), conductor states, owed Ironic writes"
)


def _rebuild(rt: Runtime, known: set[str], report: Report) -> None:
    store = rt.stores.current()
    if not isinstance(store, data_store.DirectoryStore):
        raise exceptions.InvalidInput(
            "A rebuild reads [processing]store_data = directory; this "
            f"configuration keeps data in {rt.conf.processing.store_data!r}"
        )
    for saved in store.records():
        uuid = str(saved.get("uuid"))
        try:
            introspections.get(rt.db, uuid)
            continue  # the database has it
        except exceptions.NotFound:
            pass
        if uuid not in known:
            report.add(uuid, "rebuild", "node gone from Ironic", "skipped")
        elif saved.get("state") not in states.FINAL:
            report.add(uuid, "rebuild", f"was {saved.get('state')}", "skipped")
        elif report.dry_run:
            report.add(uuid, "rebuild", f"{saved['state']} introspection", "would do")
        else:
            introspections.restore(rt.db, saved)
            report.add(uuid, "rebuild", f"{saved['state']} introspection", "done")
    report.notes.append(f"Not rebuilt from the store: {NOT_REBUILT}.")


def sync(
    rt: Runtime,
    *,
    dry_run: bool = False,
    apply: bool = False,
    drift: bool = True,
    rebuild: bool = False,
) -> Report:
    """One reconcile pass; see the module documentation."""
    report = Report(dry_run=dry_run)
    known = _nodes(rt)
    if rebuild:
        _rebuild(rt, known, report)
    _owed(rt, report)
    _deleted(rt, known, report)
    if drift:
        _drift(rt, known, apply, report)
    return report
