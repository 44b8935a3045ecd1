"""How a service process waits for its stop signal.

Each case runs in a child interpreter: only a main thread may install
signal handlers, and a signal must not reach the test runner itself.
"""

import pathlib
import subprocess
import sys
import textwrap

import pytest

from inspector import bootstrap

# The child starts a worker thread, then waits in wait_for_stop; once the
# main thread handles the signals, the worker sends itself those named on
# the command line, as the kernel does when it picks a thread other than
# the main one for a process signal.
CHILD = textwrap.dedent(
    """
    import logging, signal, sys, threading, time
    from inspector import bootstrap
    bootstrap.select_threading_backend()
    from oslo_config import cfg
    from lab.waiting import wait_until
    logging.basicConfig(level=logging.INFO)
    HANDLED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

    def worker():
        wait_until(
            lambda: all(signal.getsignal(s) is bootstrap._ignore for s in HANDLED),
            10,
            "the main thread to handle the signals",
            interval=0.01,
        )
        for name in sys.argv[2:]:
            signal.pthread_kill(threading.get_ident(), getattr(signal, name))

    conf = cfg.ConfigOpts()
    bootstrap.parse_config(["--config-file", sys.argv[1]], conf)
    threading.Thread(target=worker, daemon=True).start()
    started = time.monotonic()
    print(bootstrap.wait_for_stop(conf, ["--config-file", sys.argv[1]]),
          round(time.monotonic() - started, 1), flush=True)
    """
)


def _run(tmp_path: pathlib.Path, *signals: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "inspector.conf"
    config.write_text("[DEFAULT]\ntimeout = 600\n[pxe_filter]\ndriver = noop\n")
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(config), *signals],
        cwd=pathlib.Path(__file__).parents[2],  # where lab/ is
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_stop_signal_caught_by_another_thread_stops_main(
    tmp_path: pathlib.Path,
) -> None:
    # before the fix the main thread slept on a lock for an hour and never
    # saw a SIGTERM the kernel had delivered to an API thread
    result = _run(tmp_path, "SIGTERM")
    assert result.returncode == 0, result.stderr
    name, seconds = result.stdout.split()
    assert name == "SIGTERM"
    assert float(seconds) < 5


def test_sigint_also_stops(tmp_path: pathlib.Path) -> None:
    result = _run(tmp_path, "SIGINT")
    assert result.stdout.split()[0] == "SIGINT", result.stderr


def test_sighup_reloads_then_keeps_waiting(tmp_path: pathlib.Path) -> None:
    result = _run(tmp_path, "SIGHUP", "SIGTERM")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "SIGTERM"
    assert "Configuration reloaded" in result.stderr


def test_rejected_reload_names_the_file_not_a_repr(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    from oslo_config import cfg

    path = tmp_path / "inspector.conf"
    path.write_text("[DEFAULT]\nauth_strategy = noauth\n[pxe_filter]\ndriver = noop\n")
    argv = ["--config-file", str(path)]
    conf = bootstrap.parse_config(argv, cfg.ConfigOpts())
    path.write_text(path.read_text() + "[DEFAULT]\ntimeout = notanumber\n")
    with caplog.at_level("ERROR"):
        assert bootstrap.reload_config(conf, argv) is False
    (line,) = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert "LocationInfo" not in line
    assert f"[DEFAULT]timeout: Value for option timeout in {path} is not valid" in line


class _ClosedPipe:
    """A standard output whose reader went away after ``accepted`` writes."""

    def __init__(self, accepted: int) -> None:
        self.accepted = accepted

    def write(self, text: str) -> int:
        if self.accepted <= 0:
            raise BrokenPipeError(32, "Broken pipe")
        self.accepted -= 1
        return len(text)

    def flush(self) -> None:
        if self.accepted <= 0:
            raise BrokenPipeError(32, "Broken pipe")

    def fileno(self) -> int:
        raise OSError("not a file")


@pytest.mark.parametrize("accepted", [0, 2])
def test_a_reader_that_leaves_ends_the_command_quietly(
    monkeypatch: pytest.MonkeyPatch, accepted: int
) -> None:
    """The write that fails may be one of the command's (0) or the flush
    after its last (2: the row and its newline got through): either way
    the status is PIPE_CLOSED."""
    pipe = _ClosedPipe(accepted)
    monkeypatch.setattr(sys, "stdout", pipe)

    @bootstrap.quiet_when_reader_leaves
    def main(argv: list[str] | None = None) -> int:
        print("a row")
        pipe.accepted = 0  # the reader leaves
        return 0

    assert main([]) == bootstrap.PIPE_CLOSED


def test_a_command_whose_output_is_read_keeps_its_status() -> None:
    @bootstrap.quiet_when_reader_leaves
    def main(code: int) -> int:
        return code

    assert main(1) == 1
