"""Upstream options accepted here that change nothing are named at start-up."""

import logging
import pathlib

import pytest
from oslo_config import cfg

from inspector.conf import opts


def _conf(tmp_path: pathlib.Path, text: str) -> cfg.ConfigOpts:
    path = tmp_path / "inspector.conf"
    path.write_text(text)
    conf = cfg.ConfigOpts()
    opts.register_all(conf)
    conf(["--config-file", str(path)], default_config_files=[])
    return conf


def test_sync_period_with_the_noop_driver_is_named(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    conf = _conf(tmp_path, "[pxe_filter]\ndriver = noop\nsync_period = 30\n")
    with caplog.at_level(logging.WARNING, logger="inspector.conf.opts"):
        opts.validate(conf)
    (message,) = [r.getMessage() for r in caplog.records]
    assert "[pxe_filter]sync_period" in message
    assert str(tmp_path / "inspector.conf") in message
    assert "has no effect" in message


def test_defaults_warn_about_nothing(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    conf = _conf(tmp_path, "[pxe_filter]\ndriver = noop\n")
    with caplog.at_level(logging.WARNING, logger="inspector.conf.opts"):
        opts.validate(conf)
    assert caplog.records == []


def test_a_negative_sync_period_is_refused(tmp_path: pathlib.Path) -> None:
    from inspector import exceptions

    conf = _conf(tmp_path, "[pxe_filter]\nsync_period = -1\n")
    with pytest.raises(exceptions.ConfigError, match=r"\[pxe_filter\]sync_period"):
        opts.validate(conf)
