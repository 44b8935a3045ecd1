"""python -m lab: the virtual lab's command line."""

import argparse
import logging
import pathlib
import signal
import sys
import time

from lab.bench import commands as bench_commands


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m lab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("demo", help="introspect N virtual machines end to end")
    run.add_argument("--machines", type=int, default=20, help="default 20")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument(
        "--keep-running",
        action="store_true",
        help="keep the servers up and print how to use them",
    )
    run.add_argument(
        "--work-dir",
        type=pathlib.Path,
        help="keep logs and databases here (default: a temp dir, "
        "removed after a successful run)",
    )
    run.add_argument(
        "--timeout",
        type=float,
        help="seconds to wait for all machines (default 120 + 2/machine)",
    )
    run.add_argument(
        "--split",
        type=int,
        metavar="N",
        help="split mode: the API and N conductor processes over etcd, "
        "RabbitMQ and PostgreSQL (Debian packages, installed by make demo)",
    )
    bench_commands.split_options(run)
    run.add_argument(
        "--pxe",
        action="store_true",
        help="standalone: machines boot through real DHCP from a dnsmasq "
        "(network namespaces, needs root) guarded by the PXE filter",
    )
    run.add_argument(
        "--oob",
        action="store_true",
        help="standalone: every machine is a Redfish system of the lab's "
        "emulator and is introspected out of band, a couple with mode=auto "
        "falling back to the ramdisk (doc/redfish.md)",
    )
    run.add_argument(
        "--follow",
        action="store_true",
        help="standalone: Ironic inspects every machine by itself (agent) "
        "and the inspector, never called, follows its inspections into the "
        "hardware history and the fleet view (doc/follow-ironic.md)",
    )
    bench_commands.add_commands(sub)
    standin = sub.add_parser(
        "ironic-standin", help="serve the instant Ironic stand-in (benchmarks)"
    )
    standin.add_argument("--port", type=int, required=True)
    standin.add_argument("--log", required=True)
    ironic = sub.add_parser("ironic", help="run a real Ironic on loopback")
    ironic.add_argument("--port", type=int)
    ironic.add_argument("--work-dir", type=pathlib.Path, default=pathlib.Path(".lab"))
    return parser


def oob_refusal(args: argparse.Namespace) -> str | None:
    """Why ``demo --oob`` or ``--follow`` cannot run with the other options
    given, if so."""
    follow = getattr(args, "follow", False)
    if not args.oob and not follow:
        return None
    given = (
        ("--split", args.split is not None),
        ("--pxe", args.pxe),
        ("--oob", args.oob and follow),
    )
    others = [name for name, on in given if on]
    if not others:
        return None
    if follow:
        return (
            "--follow runs the standalone shape, Ironic inspecting by itself: "
            "not with " + " or ".join(others)
        )
    return (
        "--oob runs the standalone shape, its machines over Redfish: not with "
        + " or ".join(others)
    )


def _demo_refusal(args: argparse.Namespace) -> str | None:
    """Why ``demo`` cannot run with the options given, if so."""
    if args.split is not None and args.split < 1:
        return "--split needs at least 1 conductor"
    if args.pxe and args.split is not None:
        return "--pxe runs the standalone shape only"
    if args.machines < 1:
        return "--machines must be at least 1"
    return oob_refusal(args)


def _demo(args: argparse.Namespace) -> int:
    if refusal := _demo_refusal(args):
        print(f"lab: {refusal}", file=sys.stderr)
        return 2
    from lab.demos import following, in_band, out_of_band
    from lab.demos.stage import DemoOptions

    # --split and --pxe are refused with --oob and --follow above
    run = in_band.run
    if args.oob:
        run = out_of_band.run
    elif args.follow:
        run = following.run
    try:
        return run(
            DemoOptions(
                machines=args.machines,
                seed=args.seed,
                keep_running=args.keep_running,
                work_dir=args.work_dir,
                timeout=args.timeout,
                split=args.split,
                split_api=args.split_api,
                rpc_transport=args.rpc,
                pxe=args.pxe,
            )
        )
    except KeyboardInterrupt:
        print("Interrupted; servers stopped.", file=sys.stderr)
        return 130
    except RuntimeError as exc:
        print(f"lab: {exc}", file=sys.stderr)
        return 1


def _ironic(args: argparse.Namespace) -> int:
    from lab.servers.ironic import IronicServer
    from lab.venvs import default_cache_dir

    with IronicServer(default_cache_dir(), args.work_dir, port=args.port) as server:
        print(f"Ironic at {server.url} (noauth, fake-hardware); Ctrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


def _terminated(signo: int, _frame: object) -> None:
    raise SystemExit(128 + signo)


def main(argv: list[str] | None = None) -> int:
    from inspector import bootstrap

    bootstrap.select_threading_backend()  # tooz must not pull eventlet in
    # a plain kill unwinds like Ctrl-C: every server the lab started stops
    signal.signal(signal.SIGTERM, _terminated)
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.command in bench_commands.COMMANDS:
        return bench_commands.run(args)
    if args.command == "demo":
        return _demo(args)
    if args.command == "ironic-standin":
        from lab.servers import ironic_standin

        ironic_standin.serve(args.port, args.log)
        return 0
    return _ironic(args)
