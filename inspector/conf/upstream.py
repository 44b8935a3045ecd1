"""What this service does with each option of ironic-inspector 12.5.

Users switch from upstream keeping their ``inspector.conf``, and oslo.config
drops options nobody registered without a word. So at start-up every option
set in the configuration files is looked up in ``upstream-12.5.csv`` (made
from upstream's own package by ``python -m tools.upstream_options``):

- ``honoured``: registered here with upstream's meaning;
- ``library``: read by a library this service runs (keystonemiddleware,
  oslo.messaging, keystoneauth), when the feature is in use;
- ``refused``: the process does not start, and the note says what to do;
- ``no_effect``: accepted with one warning, for options that mean nothing
  here (rootwrap, the eventlet WSGI server's tuning).

A refused or no-effect option set to upstream's default asks for exactly
what this service does, so it passes quietly. An option that is neither
upstream's nor registered here, in a group this service reads, is refused
as a typo.
"""

import csv
import dataclasses
import functools
import glob
import os
import pathlib
from collections.abc import Iterable
from typing import Any

from oslo_config import cfg, types

from inspector import exceptions

DATA = pathlib.Path(__file__).with_name("upstream-12.5.csv")
COLUMNS = ("group", "name", "type", "default", "aliases", "outcome", "note")

HONOURED = "honoured"
LIBRARY = "library"
REFUSED = "refused"
NO_EFFECT = "no_effect"
OUTCOMES = (HONOURED, LIBRARY, REFUSED, NO_EFFECT)


@dataclasses.dataclass(frozen=True)
class UpstreamOption:
    group: str
    name: str
    type: str
    default: str
    aliases: str
    outcome: str
    note: str

    @property
    def key(self) -> str:
        return f"[{self.group}]{self.name}"

    def is_default(self, values: list[str]) -> bool:
        """Whether ``values`` (as written in a file) equal upstream's default."""
        try:
            return _parse(self.type, values) == _parse(
                self.type, [self.default] if self.default else []
            )
        except ValueError:
            return False


def normalise(name: str) -> str:
    """keystoneauth spells options with dashes; files may use either."""
    return name.replace("-", "_")


@functools.cache
def load() -> tuple[UpstreamOption, ...]:
    with DATA.open(newline="") as data:
        return tuple(UpstreamOption(**row) for row in csv.DictReader(data))


def _index() -> dict[tuple[str, str], UpstreamOption]:
    index = {}
    for option in load():
        index[option.group, option.name] = option
        for alias in option.aliases.split():
            group, _, name = alias.partition(".")
            index.setdefault((group, name), option)
    return index


NOT_UPSTREAM_NO_EFFECT = {
    ("oslo_middleware", "max_request_body_size"): "this service limits "
    "request bodies with [DEFAULT]max_request_body_size (ironic-inspector "
    "did not read this option either)",
}
"""Library options deployment tools write that neither service reads."""


_TYPES: dict[str, Any] = {
    "BoolOpt": types.Boolean(),
    "IntOpt": types.Integer(),
    "PortOpt": types.Integer(),
    "FloatOpt": types.Float(),
    "ListOpt": types.List(),
    "DictOpt": types.Dict(),
}


def _parse(kind: str, values: list[str]) -> object:
    if kind == "MultiStrOpt":
        return values
    if not values:
        return None
    value = values[-1]
    parser = _TYPES.get(kind)
    if parser is None:
        return value or None
    return parser(value) if value != "" else None


def config_files(conf: cfg.ConfigOpts) -> list[str]:
    """The files oslo.config read, in its order (--config-file, then dirs)."""
    files = list(conf.config_file or [])
    dirs = conf.config_dir or []
    for directory in [dirs] if isinstance(dirs, str) else dirs:
        files += sorted(glob.glob(os.path.join(directory, "*.conf")))
    return files


def _read(path: str) -> dict[str, dict[str, list[str]]]:
    sections: dict[str, dict[str, list[str]]] = {}
    cfg.ConfigParser(path, sections).parse()
    return sections


@dataclasses.dataclass(frozen=True)
class Setting:
    """One option as the configuration files set it: the last value wins."""

    value: str
    path: str
    name: str
    """The option's name as the file spells it."""


def file_settings(conf: cfg.ConfigOpts) -> dict[tuple[str, str], Setting]:
    """Every option the files set, by (group, name), upstream's deprecated
    names (``auth_plugin``, ``memcache_servers``) under their current ones
    and dashes as underscores. Library options are read here before their
    library registers them, with the file that set each."""
    index = _index()
    settings = {}
    for path in config_files(conf):
        for group, values in _read(path).items():
            for raw_name, value in values.items():
                name = normalise(raw_name)
                option = index.get((group, name))
                if option is not None and (option.group, option.name) != (group, name):
                    group_name = (option.group, option.name)
                else:
                    group_name = (group, name)
                settings[group_name] = Setting(
                    value[-1] if value else "", path, raw_name
                )
    return settings


def _registered(conf: cfg.ConfigOpts, group: str) -> set[str]:
    try:
        names = conf if group == "DEFAULT" else conf[group]
        return {normalise(name) for name in names}
    except cfg.NoSuchOptError:
        return set()


@functools.cache
def _messaging_names() -> dict[str, set[str]]:
    """oslo.messaging's options by group, which it registers only once it
    builds a transport. Read only for a name nothing else knows: importing
    its option lists loads the broker's driver and kombu (about 0.1 s of
    CPU at every start of a process that never uses them)."""
    from oslo_messaging import opts as messaging_opts

    names: dict[str, set[str]] = {}
    for lib_group, options in messaging_opts.list_opts():
        names.setdefault(lib_group or "DEFAULT", set()).update(
            normalise(o.name) for o in options
        )
    return names


def _option_names(options: Iterable[Any]) -> set[str]:
    names = set()
    for option in options:
        names.add(normalise(option.name))
        names |= {normalise(d.name) for d in option.deprecated_opts if d.name}
    return names


@functools.cache
def _plugin_option_names(plugin: str) -> frozenset[str] | None:
    """The options of keystoneauth plugin ``plugin``; None if unknown."""
    from keystoneauth1 import exceptions as ks_exceptions
    from keystoneauth1 import loading

    try:
        return frozenset(_option_names(loading.get_auth_plugin_conf_options(plugin)))
    except ks_exceptions.NoMatchingPlugin:
        return None  # keystoneauth names the bad auth_type itself


@functools.cache
def available_plugins() -> tuple[str, ...]:
    """keystoneauth's plugins that load here, quietly (stevedore logs an
    error for each plugin whose optional package is missing)."""
    from importlib import metadata

    names = []
    for entry in metadata.entry_points(group="keystoneauth1.plugin"):
        try:
            if entry.load()().available:
                names.append(entry.name)
        except Exception:  # noqa: BLE001 - a plugin that cannot load is not offered
            continue
    return tuple(sorted(set(names)))


@functools.cache
def _plugins_by_option() -> dict[str, tuple[str, ...]]:
    """Every keystoneauth plugin option, and the plugins that read it."""
    users: dict[str, list[str]] = {}
    for plugin in available_plugins():
        for name in _plugin_option_names(plugin) or ():
            users.setdefault(name, []).append(plugin)
    return {name: tuple(plugins) for name, plugins in users.items()}


SUGGESTED_PLUGINS = (
    "password",
    "http_basic",
    "v3applicationcredential",
    "token",
    "admin_token",
)
"""The plugins a refusal or warning suggests first, when they fit."""


def _suggest(name: str) -> str:
    plugins = _plugins_by_option().get(name, ())
    ordered = [p for p in SUGGESTED_PLUGINS if p in plugins]
    ordered += [p for p in plugins if p not in ordered]
    return " or ".join(ordered[:2])


class _AuthGroups:
    """The keystoneauth groups (``auth_type`` with a plugin's options) and
    the plugin each uses, from the registered options or the files."""

    def __init__(
        self,
        conf: cfg.ConfigOpts,
        settings: dict[tuple[str, str], "Setting"],
        own: Iterable[str],
    ) -> None:
        self.conf = conf
        self.settings = settings
        self.groups = {o.group for o in load() if o.name == "auth_type"}
        self.groups |= {g for g in own if "auth_type" in _registered(conf, g)}

    def sections(self) -> set[str]:
        """Groups an ``auth_section`` option points keystoneauth to."""
        return {
            setting.value
            for (group, name), setting in self.settings.items()
            if name == "auth_section" and setting.value
        }

    def plugin(self, group: str) -> str | None:
        try:
            return str(self.conf[group].auth_type or "") or None
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError, KeyError):
            found = self.settings.get((group, "auth_type"))
            return found.value if found is not None and found.value else None

    def names(self, group: str) -> set[str]:
        """Options of ``group``'s plugin (none when it has none or is unknown)."""
        plugin = self.plugin(group)
        return set(_plugin_option_names(plugin) or ()) if plugin else set()

    def inert(self, group: str, name: str) -> str | None:
        """Why ``name``, another plugin's option, does nothing in ``group``;
        None when no keystoneauth plugin has it (a typo)."""
        if group not in self.groups or name not in _plugins_by_option():
            return None
        plugin = self.plugin(group)
        used = f"by auth_type {plugin}" if plugin else "while auth_type is not set"
        return f"is not used {used}: set auth_type = {_suggest(name)}, or remove it"


def check(conf: cfg.ConfigOpts, groups: Iterable[str]) -> list[str]:
    """Judge every option the configuration files set.

    ``groups`` are the service's own groups: in them, and in upstream's that
    are not a library's, a name nobody knows is refused as a typo. Returns
    the warnings to log once; raises ConfigError naming every refused or
    unknown option, with what to do about each.
    """
    index = _index()
    owned = {"DEFAULT", *groups} | {o.group for o in load() if o.outcome != LIBRARY}
    library_groups = {o.group for o in load()} - owned
    refusals: list[str] = []
    warnings: list[str] = []
    unread: dict[str, str] = {}
    auth = _AuthGroups(conf, file_settings(conf), groups)
    for path in config_files(conf):
        for group, values in _read(path).items():
            if group not in owned:
                if group in auth.sections():
                    continue  # an auth_section: keystoneauth reads it
                if group not in library_groups and not _registered(conf, group):
                    unread.setdefault(group, path)
                continue
            known = _registered(conf, group)
            auth_type = index.get((group, "auth_type"))
            inert_group = auth_type is not None and auth_type.outcome == NO_EFFECT
            if group in auth.groups and not inert_group:
                known |= auth.names(group)
            for raw_name, value in values.items():
                name = normalise(raw_name)
                option = index.get((group, name))
                where = f"[{group}]{raw_name} ({path})"
                if option is not None and option.outcome == REFUSED:
                    if not option.is_default(value):
                        refusals.append(f"{where}: {option.note}")
                elif option is not None and option.outcome == NO_EFFECT:
                    if not option.is_default(value):
                        warnings.append(f"{where} has no effect: {option.note}")
                elif (group, name) in NOT_UPSTREAM_NO_EFFECT:
                    note = NOT_UPSTREAM_NO_EFFECT[group, name]
                    warnings.append(f"{where} has no effect: {note}")
                elif (
                    option is None
                    and name not in known
                    and name not in _messaging_names().get(group, ())
                ):
                    inert = auth.inert(group, name)
                    if inert and inert_group:
                        assert auth_type is not None
                        warnings.append(f"{where} has no effect: {auth_type.note}")
                    elif inert:
                        warnings.append(f"{where} {inert}")
                    else:
                        refusals.append(
                            f"{where} is not an option of ironic-inspector 12.5 "
                            "or of this service: remove it or correct its name"
                        )
    for group, path in sorted(unread.items()):
        warnings.append(
            f"[{group}] ({path}) is not read by this service or by "
            "ironic-inspector; its options have no effect"
        )
    if refusals:
        raise exceptions.ConfigError("Invalid configuration: " + "\n".join(refusals))
    return warnings
