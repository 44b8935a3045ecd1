"""Loopback helpers for the lab's servers: free ports and readiness."""

import pathlib
import socket
import subprocess
import time
import urllib.error
import urllib.request


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
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None and alive.poll() is not None:
            break
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.1)
    where = f"; see {log_file}" if log_file else ""
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s{where}")


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
