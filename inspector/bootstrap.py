"""The OS-process bootstrap shared by the entry points (the console scripts
and the WSGI module): threads, options, logging, signals, a fatal exit."""

import functools
import os
import sys
from collections.abc import Callable, Generator, Iterable, Mapping
from typing import TYPE_CHECKING, NoReturn, ParamSpec

from oslo_config import cfg

if TYPE_CHECKING:
    import signal

DEFAULT_CONFIG_FILE = "/etc/ironic-inspector/inspector.conf"

# ironic-inspector's: libraries speak at WARNING unless a file says otherwise
DEFAULT_LOG_LEVELS = [
    "sqlalchemy=WARNING",
    "iso8601=WARNING",
    "requests=WARNING",
    "urllib3.connectionpool=WARNING",
    "keystonemiddleware=WARNING",
    "keystoneauth=WARNING",
    "ironicclient=WARNING",
    "amqp=WARNING",
    "amqplib=WARNING",
    "stevedore=WARNING",
    "oslo.messaging=WARNING",
    "oslo_messaging=WARNING",
]


QUIET_AT_START = ("alembic",)
"""Libraries whose INFO lines are start-up noise (alembic's "setup plugin",
"Context impl", "Will assume transactional DDL" on every process start):
kept at WARNING unless [DEFAULT]default_log_levels names them."""

_logging_ready: dict[str, bool] = {}
"""Set by :func:`setup_logging`: whether :func:`die` can log, and whether
oslo.log already writes to stderr (so the message is not printed twice)."""


def setup_logging(conf: cfg.ConfigOpts, product: str) -> None:
    """oslo.log's set-up, plus: start-up noise silenced, third-party
    reconnection loops quieted (:mod:`inspector.outages`), and :func:`die`
    told that fatal errors can reach the log file from now on."""
    import logging

    from oslo_log import log

    from inspector import outages

    log.setup(conf, product)
    named = {entry.split("=", 1)[0].strip() for entry in conf.default_log_levels}
    for name in QUIET_AT_START:
        if not any(n == name or n.startswith(f"{name}.") for n in named):
            logging.getLogger(name).setLevel(logging.WARNING)
    if list(conf.default_log_levels) == DEFAULT_LOG_LEVELS:
        # the broker driver's "Reconnected" line ends an outage its first
        # ERROR line began; its reconnection loop in between is held back
        for name in outages.QUIETED_LOGGERS:
            logging.getLogger(name).setLevel(logging.INFO)
    outages.quiet_third_party()
    to_stderr = bool(conf.use_stderr) and not (
        conf.log_file or conf.use_syslog or conf.use_journal
    )
    _logging_ready.update(ready=True, to_stderr=to_stderr)


def select_threading_backend() -> None:
    """Make oslo.service use OS threads; must run before it is imported.

    eventlet is installed as a dependency of oslo.service, and futurist
    imports it whenever it can; marking it absent keeps it out of the
    process entirely, so nothing can monkey-patch or rely on it.
    """
    sys.modules.setdefault("eventlet", None)  # type: ignore[arg-type]
    from oslo_service import backend

    try:
        backend.init_backend(backend.BackendType.THREADING)
    except backend.exceptions.BackendAlreadySelected:
        pass


def parse_config(argv: list[str], conf: cfg.ConfigOpts | None = None) -> cfg.ConfigOpts:
    """Register every option on ``conf`` (the global CONF by default) and parse.

    oslo.messaging registers some of its options on the global object only,
    so the service passes ``cfg.CONF`` down rather than a private ConfigOpts.
    """
    import oslo_messaging as messaging
    from oslo_log import log

    from inspector.conf import opts

    conf = cfg.CONF if conf is None else conf
    opts.register_all(conf)
    log.register_options(conf)
    log.set_defaults(default_log_levels=DEFAULT_LOG_LEVELS)
    messaging.set_transport_defaults("ironic_inspector")
    defaults = [DEFAULT_CONFIG_FILE] if os.path.exists(DEFAULT_CONFIG_FILE) else []
    conf(argv, project="ironic-inspector", default_config_files=defaults)
    return conf


def reload_config(conf: cfg.ConfigOpts, argv: list[str]) -> bool:
    """Apply changed mutable options from the config files (SIGHUP).

    The files are parsed and validated on a scratch ConfigOpts first: oslo
    would otherwise accept an invalid value (a typo in a choice) and every
    later read of that option would fail mid-request. A rejected reload
    keeps the running values and logs what was wrong.
    """
    import logging

    from inspector import exceptions
    from inspector.conf import opts

    log = logging.getLogger(__name__)
    candidate = cfg.ConfigOpts()
    try:
        parse_config(argv, candidate)
        opts.validate(candidate)
    except (cfg.Error, exceptions.ConfigError) as exc:
        log.error("Configuration reload rejected, running values kept: %s", exc)
        return False
    conf.mutate_config_files()
    log.info("Configuration reloaded; immutable options need a restart")
    return True


def wait_for_stop(
    conf: cfg.ConfigOpts,
    argv: list[str],
    on_reload: Callable[[], object] | None = None,
) -> str:
    """Block until SIGTERM or SIGINT; SIGHUP reloads mutable options meanwhile
    (then calls ``on_reload``: what the daemon reloads besides its options).

    Returns the name of the signal that asked the process to stop. Once
    stopping, further stop signals are ignored: the graceful stop runs to
    its end, SIGKILL cuts it short.
    """
    import contextlib
    import logging
    import signal

    log = logging.getLogger(__name__)
    handled = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    with contextlib.closing(receive_signals(handled)) as received:
        for signo in received:
            if signo == signal.SIGHUP:
                log.info("Received SIGHUP, reloading mutable options")
                reload_config(conf, argv)
                if on_reload is not None:
                    on_reload()
            else:
                log.info("Received %s, stopping", signo.name)
                return signo.name
    raise AssertionError("receive_signals never ends")


def exit_without(unfinished: Mapping[str, str]) -> None:
    """Steps cut short by ``[DEFAULT]graceful_shutdown_timeout`` still run
    in worker threads that the interpreter would wait for at exit: end the
    process now, its logs flushed. Their owner is out of the conductor
    group (or, standalone, resumes them when it starts again)."""
    import logging

    if unfinished:
        logging.getLogger(__name__).info(
            "Ending the process without its %d unfinished step(s)", len(unfinished)
        )
        logging.shutdown()
        os._exit(0)


def receive_signals(
    handled: "Iterable[signal.Signals]",
) -> "Generator[signal.Signals, None, None]":
    """Yield each of the ``handled`` signals the process receives, forever.

    The kernel hands a signal sent to the process to any of its threads.
    Python runs handlers in the main thread only, and only once that thread
    wakes up: one blocked on a lock would not notice a SIGTERM that landed
    on an API or worker thread (seen once in CI: the process ignored it
    until SIGKILL). So the caller's main thread sleeps reading a socket the
    interpreter's C-level handler writes each signal number to, from
    whichever thread received it, and the caller acts on the signal in
    plain code rather than in a handler (a reload that logs cannot deadlock
    on a lock the interrupted code holds). Close the generator to stop
    listening; the signals stay ignored.
    """
    import signal
    import socket

    wanted = set(handled)
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    for signo in wanted:
        signal.signal(signo, _ignore)
    try:
        while True:
            for number in reader.recv(64):
                if number in wanted:
                    yield signal.Signals(number)
    finally:
        signal.set_wakeup_fd(previous_fd)
        reader.close()
        writer.close()


def _ignore(_signo: int, _frame: object) -> None:
    """Python-level handler: the work happens in :func:`receive_signals`."""


def die(prog: str, message: str, code: int = 2) -> NoReturn:
    """Exit with ``code`` (2: configuration, 1: a backend or other failure),
    saying why on stderr and, once logging is set up, in the log too: a
    service's stderr may go nowhere an operator looks."""
    if _logging_ready.get("ready"):
        import logging

        logging.getLogger(prog).critical("Cannot run: %s", message)
        if _logging_ready.get("to_stderr"):
            raise SystemExit(code)
    sys.stderr.write(f"{prog}: {message}\n")
    raise SystemExit(code)


PIPE_CLOSED = 141
"""Exit status of a command whose reader went away before it finished
writing (``... --json | head``): what a shell reports for a process that
SIGPIPE ended (128 + 13), so ``set -o pipefail`` still sees it."""


_Args = ParamSpec("_Args")


def quiet_when_reader_leaves(main: Callable[_Args, int]) -> Callable[_Args, int]:
    """``main`` of a command that prints, exiting with :data:`PIPE_CLOSED`
    and no traceback when its standard output is a pipe whose reader has
    gone. Python ignores SIGPIPE, so the write fails with BrokenPipeError
    instead, here or when the interpreter flushes at exit."""

    @functools.wraps(main)
    def run(*args: _Args.args, **kwargs: _Args.kwargs) -> int:
        try:
            try:
                return main(*args, **kwargs)
            finally:
                sys.stdout.flush()  # the last of the output: may fail too
        except BrokenPipeError:
            _drop_stdout()
            return PIPE_CLOSED

    return run


def _drop_stdout() -> None:
    """Send what is left of standard output nowhere: the interpreter
    flushes it at exit and would report the broken pipe again."""
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a file (replaced, as by a test)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, descriptor)
    finally:
        os.close(null)
