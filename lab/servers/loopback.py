"""Loopback helpers for the lab's servers: free ports and readiness."""

import pathlib
import socket
import subprocess
import urllib.error
import urllib.request

from lab import waiting


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_http(
    url: str,
    timeout: float,
    log_file: pathlib.Path | None = None,
    alive: "subprocess.Popen[bytes] | None" = None,
) -> None:
    """Poll ``url`` until it answers any HTTP status.

    ``alive`` may be a subprocess whose early exit ends the wait at once.

    :raises TimeoutError: no answer within ``timeout`` seconds, or ``alive``
        exited; naming ``log_file``.
    """
    where = f"; see {log_file}" if log_file else ""

    class Exited(Exception):
        pass

    def answers() -> bool:
        if alive is not None and alive.poll() is not None:
            raise Exited(f"{url} did not answer: its process exited")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except urllib.error.HTTPError:
            return True

    try:
        waiting.wait_until(
            answers, timeout, f"{url} to answer", interval=0.1, ignoring=OSError
        )
    except (Exited, waiting.NotInTime) as exc:
        raise TimeoutError(f"{exc}{where}") from None


def terminate(proc: "subprocess.Popen[bytes]", timeout: float = 10) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds; reaps the child."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def tail(path: pathlib.Path, chars: int = 2000) -> str:
    """The end of a server's log file, for error messages."""
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"
