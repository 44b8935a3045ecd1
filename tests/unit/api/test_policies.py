"""Every route of the API has a policy rule, and the defaults are sane."""

import re

from inspector.api import policies


def _operations() -> set[tuple[str, str]]:
    found = set()
    for rule in policies.list_rules():
        for op in getattr(rule, "operations", []):
            found.add((op["path"], op["method"]))
    return found


def test_every_route_has_a_rule() -> None:
    import flask

    from inspector.api import introspection, ramdisk, root

    app = flask.Flask("t")
    for module in (root, introspection, ramdisk):
        app.register_blueprint(module.blueprint)
    covered = _operations()
    for url_rule in app.url_map.iter_rules():
        if url_rule.endpoint == "static":
            continue
        assert url_rule.methods is not None, url_rule  # Flask always sets them
        path = re.sub(r"<([a-z_]+)>", r"{\1}", url_rule.rule).rstrip("/") or "/"
        for method in url_rule.methods - {"HEAD", "OPTIONS"}:
            assert (path, method) in covered, f"{method} {path} has no policy rule"


def test_names_are_unique_and_only_the_ramdisk_path_is_public() -> None:
    rules = policies.list_rules()
    names = [r.name for r in rules]
    assert len(names) == len(set(names))
    public = {r.name for r in rules if r.check_str == "rule:public_api"}
    assert public == {"introspection", "introspection:continue"}
