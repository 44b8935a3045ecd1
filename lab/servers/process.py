"""The one start-up and stop of the lab's servers that are child
processes: spawned with their output in a log file, waited for until they
answer (or exit, or the time is up), stopped by their PID."""

import abc
import os
import pathlib
import signal
import subprocess
from collections.abc import Callable, Mapping
from typing import Self

from lab import waiting
from lab.servers import loopback


class _Exited(Exception):
    """The server's process ended while it was being waited for."""


def terminate(proc: "subprocess.Popen[bytes]", timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; reaps the child."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def kill_group(proc: "subprocess.Popen[bytes]") -> None:
    """SIGKILL what is left of the process group ``proc`` leads (a server
    started in a session of its own, whose children may outlive it)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class ServerProcess(abc.ABC):
    """A server that is a child process of the lab, listening on 127.0.0.1.

    ``work_dir`` holds its files; its output goes to ``output_file``
    (``log_file`` unless the server writes a log of its own there);
    ``port`` is free unless given. A subclass's ``start`` prepares its
    files, then :meth:`_spawn` and :meth:`_await`; ``stop`` ends it by its
    PID and returns its exit code. It implements
    :class:`lab.servers.server.Server` with ``url`` on ``port``.
    """

    name = "The server"
    """What the messages call it."""

    def __init__(
        self,
        work_dir: pathlib.Path,
        log_name: str,
        port: int | None = None,
        output_name: str | None = None,
    ) -> None:
        self.work_dir = pathlib.Path(work_dir)
        self.port = port or loopback.free_port()
        self.log_file = self.work_dir / log_name
        self.output_file = self.work_dir / (output_name or log_name)
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    @property
    def exited(self) -> bool:
        """Whether the process was started and has ended by itself."""
        return self._proc is not None and self._proc.poll() is not None

    def _spawn(
        self,
        command: list[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: pathlib.Path | None = None,
        session: bool = False,
    ) -> None:
        """Start ``command``, its output appended to :attr:`output_file`;
        ``session``: in a session (and process group) of its own."""
        self.output_file.parent.mkdir(parents=True, exist_ok=True)
        output = open(self.output_file, "ab")  # noqa: SIM115 - the child's
        try:
            self._proc = subprocess.Popen(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=cwd,
                start_new_session=session,
            )
        finally:
            output.close()

    def _await(
        self,
        ready: Callable[[], object],
        timeout: float,
        what: str,
        interval: float = 0.1,
    ) -> None:
        """Call ``ready`` every ``interval`` seconds until it is true (an
        ``OSError`` counts as not yet: nothing listens yet).

        :raises RuntimeError: the process exited, or ``timeout`` passed;
            the server is stopped first, the message ends with its log.
        """
        proc = self._proc
        assert proc is not None, "_spawn first"

        def answers() -> object:
            if proc.poll() is not None:
                raise _Exited(f"its process exited with {proc.returncode}")
            return ready()

        try:
            waiting.wait_until(
                answers, timeout, what, interval=interval, ignoring=OSError
            )
        except (_Exited, waiting.NotInTime, RuntimeError) as exc:
            self.stop()
            raise RuntimeError(
                f"{self.name} did not start: {exc}; see {self.log_file}\n"
                f"{self.log_tail()}"
            ) from None

    def log_tail(self, chars: int = 3000) -> str:
        """The end of its log (and of its output, when that is apart)."""
        paths = [self.log_file]
        if self.output_file != self.log_file:
            paths.append(self.output_file)
        return "\n".join(loopback.tail(path, chars) for path in paths)

    def stop(self, timeout: float = 10) -> int | None:
        """SIGTERM, then SIGKILL after ``timeout``; the exit code (None
        when it was not running)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        terminate(proc, timeout)
        return proc.returncode

    @abc.abstractmethod
    def start(self, timeout: float = 30.0) -> None:
        """Prepare, :meth:`_spawn` and :meth:`_await`."""

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop()
