"""How many threads take casts off the message broker."""

import pathlib
import types

import oslo_messaging as messaging
from oslo_config import cfg

from inspector.conductor import service
from inspector.conf import default, opts


def _built(tmp_path: pathlib.Path, **options: int) -> cfg.ConfigOpts:
    """The configuration after the RPC server was built, ``options`` in
    its file."""
    path = tmp_path / "inspector.conf"
    path.write_text("[DEFAULT]\n" + "".join(f"{k} = {v}\n" for k, v in options.items()))
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf([], project="ironic-inspector", default_config_files=[str(path)])
    transport = messaging.get_rpc_transport(conf, url="fake://")
    manager = types.SimpleNamespace(rt=types.SimpleNamespace(conf=conf))
    service.oslo_server(transport)(manager)  # type: ignore[arg-type]
    transport.cleanup()
    return conf


def test_a_few_threads_take_casts_whatever_max_concurrency(
    tmp_path: pathlib.Path,
) -> None:
    assert _built(tmp_path).executor_thread_pool_size == default.CAST_THREADS == 8
    conf = _built(tmp_path, max_concurrency=3)
    assert conf.executor_thread_pool_size == 3


def test_oslo_messaging_s_own_option_wins(tmp_path: pathlib.Path) -> None:
    conf = _built(tmp_path, executor_thread_pool_size=100)
    assert conf.executor_thread_pool_size == 100
