"""Every option of ironic-inspector 12.5 is honoured, refused or named.

The data is inspector/conf/upstream-12.5.csv, made from upstream's package
by ``python -m tools.upstream_options refresh``.
"""

import logging
import pathlib
import subprocess
import sys

import pytest
from oslo_config import cfg, types

from inspector import bootstrap, exceptions
from inspector.conf import opts, upstream
from tools import upstream_options

OPTIONS = upstream.load()


def _conf(tmp_path: pathlib.Path, text: str) -> cfg.ConfigOpts:
    path = tmp_path / "inspector.conf"
    path.write_text(text)
    return bootstrap.parse_config(["--config-file", str(path)], cfg.ConfigOpts())


def _registered(conf: cfg.ConfigOpts, option: upstream.UpstreamOption) -> cfg.Opt:
    group = None if option.group == "DEFAULT" else option.group
    for name in (option.name, option.name.replace("_", "-")):
        try:
            found: cfg.Opt = conf._get_opt_info(name, group)["opt"]  # noqa: SLF001
            return found
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            continue
    raise AssertionError(f"{option.key} is honoured but not registered")


def _check(conf: cfg.ConfigOpts) -> list[str]:
    return upstream.check(conf, [group for group, _ in opts.list_opts()])


def test_every_option_is_reviewed() -> None:
    assert len(OPTIONS) > 300  # the whole list, libraries' options included
    for option in OPTIONS:
        assert option.outcome in upstream.OUTCOMES, option
        if option.outcome in (upstream.REFUSED, upstream.NO_EFFECT):
            assert option.note, f"{option.key} needs a note saying why or what to do"


def _same(kind: str, ours: object, theirs: str) -> bool:
    if kind in ("IntOpt", "FloatOpt") and theirs and ours is not None:
        return float(str(ours)) == float(theirs)
    return upstream_options._default(ours) == theirs


def test_honoured_options_are_registered_with_upstream_defaults() -> None:
    conf = bootstrap.parse_config([], cfg.ConfigOpts())
    for option in OPTIONS:
        if option.outcome != upstream.HONOURED:
            continue
        ours = _registered(conf, option)
        if not _same(option.type, ours.default, option.default):
            # a difference is allowed only when the data says why
            assert option.note.startswith("default differs"), (
                f"{option.key}: upstream {option.default!r}, ours {ours.default!r}"
            )


def _non_default(option: upstream.UpstreamOption) -> str:
    """A value of the option's type that is not upstream's default."""
    if option.type == "BoolOpt":
        return "false" if option.default == "true" else "true"
    if option.type in ("IntOpt", "PortOpt"):
        return str(int(option.default or 0) + 1)
    if option.type == "FloatOpt":
        return str(float(option.default or 0) + 1.5)
    if option.type == "DictOpt":
        return "probe:value"
    return "probe-value"


def _every_option(
    wanted: tuple[str, ...],
) -> tuple[str, set[str]]:
    sections: dict[str, list[str]] = {}
    keys = set()
    for option in OPTIONS:
        if option.outcome in wanted:
            sections.setdefault(option.group, []).append(
                f"{option.name} = {_non_default(option)}"
            )
            keys.add(option.key)
    text = "".join(
        f"[{group}]\n" + "\n".join(lines) + "\n" for group, lines in sections.items()
    )
    return text, keys


def test_every_refused_option_is_named(tmp_path: pathlib.Path) -> None:
    text, refused = _every_option(tuple(upstream.OUTCOMES))
    conf = _conf(tmp_path, text)
    with pytest.raises(exceptions.ConfigError) as caught:
        _check(conf)
    lines = str(caught.value).removeprefix("Invalid configuration: ").splitlines()
    named = {line.split(" (", 1)[0] for line in lines}
    expected = {o.key for o in OPTIONS if o.outcome == upstream.REFUSED}
    assert named == expected
    for line in lines:  # each says what to do
        assert ": " in line.split(") ", 1)[-1] or "remove" in line, line


def test_every_other_option_starts_and_no_effect_ones_warn(
    tmp_path: pathlib.Path,
) -> None:
    text, _ = _every_option((upstream.HONOURED, upstream.LIBRARY, upstream.NO_EFFECT))
    warnings = _check(_conf(tmp_path, text))
    warned = {w.split(" (", 1)[0] for w in warnings}
    assert warned == {o.key for o in OPTIONS if o.outcome == upstream.NO_EFFECT}
    assert all("has no effect: " in w for w in warnings)


def test_refused_option_at_upstreams_default_passes_quietly(
    tmp_path: pathlib.Path,
) -> None:
    conf = _conf(
        tmp_path,
        "[DEFAULT]\nrootwrap_config = "
        "/etc/ironic-inspector/rootwrap.conf\n[database]\nslave_connection =\n"
        "connection_trace = False\n",
    )
    assert _check(conf) == []


def test_a_typo_in_our_groups_is_refused(tmp_path: pathlib.Path) -> None:
    conf = _conf(
        tmp_path,
        "[DEFAULT]\nauth_stratgey = noauth\n[processing]\nadd_port = all\n"
        "[capabilities]\nboot_mod = true\n",
    )
    with pytest.raises(exceptions.ConfigError) as caught:
        _check(conf)
    message = str(caught.value)
    for key in (
        "[DEFAULT]auth_stratgey",
        "[processing]add_port",
        "[capabilities]boot_mod",
    ):
        assert f"{key} ({tmp_path / 'inspector.conf'}) is not an option" in message


def test_library_and_alias_names_are_accepted(tmp_path: pathlib.Path) -> None:
    conf = _conf(
        tmp_path,
        "[DEFAULT]\nlogdir = /var/log/x\nrpc_response_timeout = 30\n"
        "executor_thread_pool_size = 8\ndebug = true\n"
        "[ironic]\nauth_type = password\nauth-url = http://k\nusername = u\n"
        "password = p\nuser_domain_name = Default\nproject_name = service\n"
        "[keystone_authtoken]\nwww_authenticate_uri = http://k\n"
        "auth_type = password\nusername = u\n"
        "[oslo_messaging_rabbit]\nheartbeat_timeout_threshold = 30\n",
    )
    assert _check(conf) == []


JUDGED = """
import sys
from oslo_config import cfg
from inspector import bootstrap
from inspector.conf import opts
conf = bootstrap.parse_config(["--config-file", sys.argv[1]], cfg.ConfigOpts())
assert opts.judge(conf) == []
print("kombu" in sys.modules)
"""


def test_own_options_are_judged_without_the_broker_driver(
    tmp_path: pathlib.Path,
) -> None:
    """oslo.messaging's option lists (its broker driver, kombu) are read
    only for a name nothing else knows: a standalone or CLI start does not
    pay for loading them."""
    path = tmp_path / "inspector.conf"
    path.write_text(
        "[DEFAULT]\nstandalone = True\nauth_strategy = noauth\n"
        f"[database]\nconnection = sqlite:///{tmp_path}/x.sqlite\n"
        "[pxe_filter]\ndriver = noop\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", JUDGED, str(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=pathlib.Path(upstream.__file__).parents[2],
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False"]


def test_unknown_plugin_option_in_ironic_is_refused(tmp_path: pathlib.Path) -> None:
    conf = _conf(tmp_path, "[ironic]\nauth_type = password\npasword = p\n")
    with pytest.raises(exceptions.ConfigError, match=r"\[ironic\]pasword"):
        _check(conf)


def test_an_unknown_section_is_named_once(tmp_path: pathlib.Path) -> None:
    conf = _conf(tmp_path, "[profiler]\nenabled = true\ntrace_sqlalchemy = true\n")
    (warning,) = _check(conf)
    assert warning.startswith("[profiler] (") and "no effect" in warning


def test_validate_logs_the_warnings(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    conf = _conf(tmp_path, "[DEFAULT]\nrootwrap_config = /etc/other.conf\n")
    with caplog.at_level(logging.WARNING, logger="inspector.conf.opts"):
        opts.validate(conf)
    (message,) = [r.getMessage() for r in caplog.records]
    assert message.startswith("[DEFAULT]rootwrap_config (")
    assert "runs no command through rootwrap" in message


def test_config_dir_files_are_judged_too(tmp_path: pathlib.Path) -> None:
    extra = tmp_path / "inspector.conf.d"
    extra.mkdir()
    (extra / "10-tls.conf").write_text("[database]\nconnection_trace = true\n")
    conf = bootstrap.parse_config(["--config-dir", str(extra)], cfg.ConfigOpts())
    with pytest.raises(exceptions.ConfigError, match="10-tls.conf"):
        _check(conf)


def test_upgrade_doc_table_is_current() -> None:
    path = pathlib.Path(__file__).parents[3] / "doc" / "upgrade.md"
    assert upstream_options.doc(path, check=True) == 0, "run make docs"


def test_parse_types() -> None:
    option = next(o for o in OPTIONS if o.key == "[DEFAULT]ipmi_address_fields")
    assert option.is_default([option.default.replace(",", ", ")])
    assert not option.is_default(["ipmi_address"])
    assert types.Boolean()("False") is False  # the parser the data relies on


def test_library_options_upstream_never_read_are_named(tmp_path: pathlib.Path) -> None:
    conf = _conf(
        tmp_path,
        "[oslo_middleware]\nmax_request_body_size = 1000000\n"
        "enable_proxy_headers_parsing = true\n",
    )
    (warning,) = _check(conf)
    assert warning.startswith("[oslo_middleware]max_request_body_size (")
    assert "[DEFAULT]max_request_body_size" in warning


def test_inert_credentials_of_an_unused_plugin_warn(tmp_path: pathlib.Path) -> None:
    # upstream started with these (oslo.config ignores what nobody reads)
    conf = _conf(tmp_path, "[ironic]\nauth_type = none\nusername = u\npassword = p\n")
    warnings = _check(conf)
    path = tmp_path / "inspector.conf"
    assert warnings == [
        f"[ironic]{name} ({path}) is not used by auth_type none: set "
        "auth_type = password or http_basic, or remove it"
        for name in ("username", "password")
    ]


def test_credentials_without_auth_type_name_the_plugins(tmp_path: pathlib.Path) -> None:
    conf = _conf(tmp_path, "[ironic]\napplication_credential_secret = s\n")
    (warning,) = _check(conf)
    assert "is not used while auth_type is not set" in warning
    assert "set auth_type = v3applicationcredential" in warning


def test_credentials_of_the_chosen_plugin_pass(tmp_path: pathlib.Path) -> None:
    text = (
        "[ironic]\nauth_type = password\nauth_url = http://k\nusername = u\n"
        "[json_rpc]\nauth_type = password\nauth_url = http://k\nusername = u\n"
    )
    assert _check(_conf(tmp_path, text)) == []


@pytest.mark.parametrize("group", ["swift", "service_catalog"])
def test_credentials_of_groups_without_effect_warn(
    tmp_path: pathlib.Path, group: str
) -> None:
    text = f"[{group}]\nauth_type = password\nusername = u\nproject_name = p\n"
    warnings = _check(_conf(tmp_path, text))
    assert [w.split(" (", 1)[0] for w in warnings] == [
        f"[{group}]auth_type",
        f"[{group}]username",
        f"[{group}]project_name",
    ]
    assert all(" has no effect: " in w for w in warnings)


def test_auth_section_is_read_by_keystoneauth(tmp_path: pathlib.Path) -> None:
    text = "[ironic]\nauth_section = service_user\n[service_user]\nusername = u\n"
    assert _check(_conf(tmp_path, text)) == []


def test_a_typo_in_an_auth_group_is_still_refused(tmp_path: pathlib.Path) -> None:
    conf = _conf(tmp_path, "[ironic]\nauth_type = none\nusernam = u\n")
    with pytest.raises(exceptions.ConfigError, match=r"\[ironic\]usernam \(.*not an"):
        _check(conf)
