"""The fleet view (microversion 1.23): GET /v1/inventory, its summary,
outliers and cabling, over the latest hardware record of every node."""

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import flask

from inspector import arguments, exceptions
from inspector.api import fleet_view, params, schemas
from inspector.fleet import expected, queries
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

blueprint = flask.Blueprint("inventory", __name__, url_prefix="/v1/inventory")

RESERVED = frozenset(
    q.name for q in (*schemas.INVENTORY_LIST, *schemas.INVENTORY_SUMMARY)
)
"""Query parameters that are not filters on facts."""


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _filters() -> dict[str, str]:
    return {k: v for k, v in flask.request.args.items() if k not in RESERVED}


def _fields() -> list[str] | None:
    text = flask.request.args.get("fields")
    if text is None:
        return None
    names = arguments.names(text)
    queries.check(names, "fields")
    return names


def _answer(compute: Callable[[], dict[str, Any]], *depends: Any) -> flask.Response:
    """``compute()``'s JSON, serialised once per request path and query
    while the fleet view does not change (a page of 1,000 nodes is a
    large answer)."""
    request = flask.request
    key = ("json", request.path, request.query_string, *depends)
    held = fleet_view.of(_rt())
    body = held.cached(key, lambda: flask.current_app.json.dumps(compute()))
    return flask.Response(body, mimetype="application/json")


@blueprint.get("")
@blueprint.get("/")
def list_inventory() -> flask.Response:
    rt = _rt()
    limit = params.limit(rt.conf.api_max_limit)
    marker = flask.request.args.get("marker")
    if marker is not None:
        marker = marker.strip().lower()
    fields, filters = _fields(), _filters()

    def compute() -> dict[str, Any]:
        found = queries.page(
            all_facts(rt),
            fields=fields,
            filters=filters,
            limit=limit,
            marker=marker,
        )
        return {"nodes": found}

    return _answer(compute)


def all_facts(rt: Runtime) -> list[dict[str, Any]]:
    """Every node's facts, by UUID, as this process holds them (shared:
    do not change them)."""
    return fleet_view.of(rt).view(lambda live: live.facts())


@blueprint.get("/summary")
def get_summary() -> flask.Response:
    group_by = flask.request.args.get(
        schemas.GROUP_BY.name, schemas.GROUP_BY.schema["default"]
    )
    filters = _filters()
    held = fleet_view.of(_rt())

    def compute() -> dict[str, Any]:
        if filters:
            return {"groups": queries.summary(all_facts(_rt()), group_by, filters)}
        # counted by delta as nodes changed
        return {"groups": held.view(lambda live: live.summary(group_by))}

    return _answer(compute)


def find_outliers(rt: Runtime) -> list[dict[str, Any]]:
    """The outliers of the fleet as ``[inventory]`` defines peers (each
    peer group found again only when its members changed)."""
    opts = rt.conf.inventory
    peer_facts = tuple(opts.peer_facts)
    min_peers, share = opts.min_peers, opts.peer_share
    return fleet_view.of(rt).view(
        lambda live: live.peer_groups(peer_facts, min_peers, share).outliers()
    )


@blueprint.get("/outliers")
def get_outliers() -> flask.Response:
    opts = _rt().conf.inventory
    return _answer(
        lambda: {"outliers": find_outliers(_rt())},
        tuple(opts.peer_facts),
        opts.min_peers,
        opts.peer_share,
    )


class ExpectedCabling:
    """The expected-cabling file's rules, read again when it changes.

    Checked at start (:mod:`inspector.server.checks`); a file made malformed later
    keeps the last good rules (and logs why) rather than failing requests.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._path: str | None = None
        self._stamp: tuple[int, int] | None = None
        self._rules: list[expected.CablingRule] = []

    def rules(self, path: str | None) -> list[expected.CablingRule]:
        if not path:
            return []
        try:
            info = os.stat(path)
            stamp = (info.st_mtime_ns, info.st_size)
        except OSError:
            stamp = None
        with self._guard:
            if path == self._path and stamp == self._stamp:
                return self._rules
            try:
                rules = expected.load(path)
            except expected.Malformed as exc:
                if path != self._path:
                    raise exceptions.ConfigError(
                        f"[inventory]expected_cabling: {exc}"
                    ) from None
                LOG.error(
                    "Keeping the expected cabling read before: [inventory]"
                    "expected_cabling: %s",
                    exc,
                )
                rules = self._rules
            self._path, self._stamp, self._rules = path, stamp, rules
            return rules


EXPECTED = ExpectedCabling()


def cabling_rules(rt: Runtime) -> tuple[expected.CablingRule, ...]:
    """The expected-cabling file's rules (read again when it changed)."""
    return tuple(EXPECTED.rules(rt.conf.inventory.expected_cabling))


@blueprint.get("/cabling")
def get_cabling() -> flask.Response:
    rt = _rt()
    # the file's rules are part of the answer: read before the cache
    rules = cabling_rules(rt)
    held = fleet_view.of(rt)
    # written from each link's JSON kept since its node last changed
    body = held.cached(
        ("cabling-json", rules),
        lambda: held.view(lambda live: live.switch_ports(rules).json()),
    )
    return flask.Response(body, mimetype="application/json")
