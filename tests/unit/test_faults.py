"""The fault injection point: off unless armed, fires once, in one process."""

import pathlib

import pytest

from inspector import faults


def test_off_without_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(faults.ENV, raising=False)
    monkeypatch.setattr(faults.os, "kill", pytest.fail)
    faults.at("locked", "processing", "u1")


def test_fires_once_at_the_armed_boundary(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    armed = tmp_path / "fault"
    armed.write_text("locked:processing exit\n")
    monkeypatch.setenv(faults.ENV, str(armed))
    exits: list[int] = []
    monkeypatch.setattr(faults.os, "kill", lambda _pid, sig: exits.append(sig))
    faults.at("locked", "starting", "u1")
    faults.at("claimed", "processing", "u1")
    assert exits == [] and armed.exists()
    faults.at("locked", "processing", "u1")
    assert exits == [faults.signal.SIGKILL]
    assert not armed.exists() and (tmp_path / "fault.fired").exists()
    faults.at("locked", "processing", "u2")  # fired: the next process goes on
    assert exits == [faults.signal.SIGKILL]


def test_stop_freezes_the_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    armed = tmp_path / "fault"
    armed.write_text("ended:starting stop")
    monkeypatch.setenv(faults.ENV, str(armed))
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(faults.os, "kill", lambda pid, sig: sent.append((pid, sig)))
    faults.at("ended", "starting", "u1")
    assert sent == [(faults.os.getpid(), faults.signal.SIGSTOP)]
