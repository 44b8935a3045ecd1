"""The fleet view (microversion 1.23): GET /v1/inventory, its summary,
outliers and cabling, over the latest hardware record of every node."""

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

import flask
from oslo_config import cfg

from inspector import exceptions
from inspector.api import params
from inspector.db import fleet
from inspector.fleet import cabling, expected, facts, outliers
from inspector.runtime import Runtime

LOG = logging.getLogger(__name__)

blueprint = flask.Blueprint("inventory", __name__, url_prefix="/v1/inventory")

RESERVED = ("fields", "limit", "marker", "group_by")
"""Query parameters that are not filters on facts."""


def _rt() -> Runtime:
    rt: Runtime = flask.current_app.config["RUNTIME"]
    return rt


def _filters() -> dict[str, str]:
    return {k: v for k, v in flask.request.args.items() if k not in RESERVED}


def _limit(max_limit: int) -> int:
    limit = params.integer("limit")
    if limit is None or limit == 0:
        return max_limit
    if limit < 0:
        raise exceptions.InvalidInput(
            f"Invalid value for limit: {limit}, it must not be negative"
        )
    if limit > max_limit:
        raise exceptions.InvalidInput(
            f"Invalid value for limit: {limit}, the maximum is {max_limit}"
        )
    return limit


def _fields() -> list[str] | None:
    text = flask.request.args.get("fields")
    if text is None:
        return None
    names = [f.strip() for f in text.split(",") if f.strip()]
    facts.check(names, "fields")
    return names


def _answer(compute: Callable[[], dict[str, Any]], *depends: Any) -> flask.Response:
    """``compute()``'s JSON, serialised once per request path and query
    while the fleet view does not change (a page of 1,000 nodes or the
    cabling of 10,000 is a megabyte of JSON)."""
    request = flask.request
    key = ("json", request.path, request.query_string, *depends)
    body = fleet.cached(_rt().db, key, lambda: flask.current_app.json.dumps(compute()))
    return flask.Response(body, mimetype="application/json")


@blueprint.get("")
@blueprint.get("/")
def list_inventory() -> flask.Response:
    rt = _rt()
    limit = _limit(rt.conf.api_max_limit)
    marker = flask.request.args.get("marker")
    if marker is not None:
        marker = marker.strip().lower()
    fields, filters = _fields(), _filters()

    def compute() -> dict[str, Any]:
        found = facts.page(
            snapshot(rt).facts,
            fields=fields,
            filters=filters,
            limit=limit,
            marker=marker,
        )
        return {"nodes": found}

    return _answer(compute)


@blueprint.get("/summary")
def get_summary() -> flask.Response:
    group_by = flask.request.args.get("group_by", "product")
    filters = _filters()
    return _answer(
        lambda: {"groups": facts.summary(snapshot(_rt()).facts, group_by, filters)}
    )


def find_outliers(rt: Runtime) -> list[dict[str, Any]]:
    """The outliers of the fleet as ``[inventory]`` defines peers (kept
    while the fleet view does not change: :func:`fleet.cached`)."""
    opts = rt.conf.inventory
    peer_facts = tuple(opts.peer_facts)
    min_peers, share = opts.min_peers, opts.peer_share

    def compute() -> list[dict[str, Any]]:
        return outliers.find(
            snapshot(rt).facts,
            peer_facts=peer_facts,
            min_peers=min_peers,
            share=share,
        )

    return fleet.cached(rt.db, ("outliers", peer_facts, min_peers, share), compute)


def snapshot(rt: Runtime) -> fleet.Snapshot:
    """The fleet view, read again only when it changed (:func:`fleet.cached`):
    every endpoint answers from it, so a request costs one cheap statement
    between two finished runs."""
    return fleet.current(rt.db)


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

    Checked at start (:func:`check_conf`); a file made malformed later
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


def check_conf(conf: cfg.ConfigOpts) -> None:
    """Refuse to start with an unreadable or malformed expected-cabling file.

    :raises ConfigError: naming the file and the line.
    """
    path = conf.inventory.expected_cabling
    if path:
        try:
            expected.load(path)
        except expected.Malformed as exc:
            raise exceptions.ConfigError(
                f"Invalid configuration: [inventory]expected_cabling: {exc}"
            ) from None


def cabling_view(rt: Runtime) -> dict[str, Any]:
    """Links and problems of the fleet's latest runs."""
    rules = tuple(EXPECTED.rules(rt.conf.inventory.expected_cabling))
    return fleet.cached(
        rt.db,
        ("cabling", rules),
        lambda: cabling.view(snapshot(rt).links, rules),
    )


@blueprint.get("/cabling")
def get_cabling() -> flask.Response:
    rt = _rt()
    # the file's rules are part of the answer: read before the cache
    rules = tuple(EXPECTED.rules(rt.conf.inventory.expected_cabling))
    body = fleet.cached(
        rt.db,
        ("cabling-json", rules),
        lambda: flask.current_app.json.dumps(cabling_view(rt)),
    )
    return flask.Response(body, mimetype="application/json")
