"""python -m lab: the virtual lab's command line."""

import argparse
import logging
import pathlib
import re
import signal
import sys
import time

from lab import demo
from lab.ironic_server import IronicServer, default_cache_dir


def _split_api_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rpc",
        choices=("oslo", "json-rpc", "json-rpc-tls"),
        default="oslo",
        help="split mode: hand work to the conductors over RabbitMQ (oslo, "
        "default) or over each conductor's JSON-RPC endpoint (no broker "
        "runs), json-rpc-tls with HTTPS",
    )
    parser.add_argument(
        "--split-api",
        choices=("apache", "local"),
        default="apache",
        help="split mode: serve the API under Apache with mod_wsgi (default) "
        "or on ironic-inspector-api-wsgi's own server",
    )


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
    _split_api_option(run)
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
    bench = sub.add_parser(
        "bench", help="measure N machines at once in one or more shapes"
    )
    bench.add_argument("--machines", type=int, default=50, help="default 50")
    bench.add_argument(
        "--shapes",
        default="standalone,split-2",
        help="comma separated: standalone, upstream, split-N, split-N-oslo, "
        "split-N-json-rpc, split-N-json-rpc-tls (default standalone,split-2; "
        "split-N takes --rpc)",
    )
    bench.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("bench.json")
    )
    _split_api_option(bench)
    bench.add_argument(
        "--ironic",
        choices=("real", "production", "standin"),
        default="real",
        help="real: the lab's Ironic, one process on SQLite (the default); "
        "production: Ironic as production runs it (ironic-api with 2 worker "
        "processes, a separate ironic-conductor over JSON-RPC, PostgreSQL); "
        "standin: an instant stand-in answering the same calls, so the "
        "numbers are the inspector's own cost",
    )
    bench.add_argument(
        "--with-upstream",
        action="store_true",
        help="also run upstream ironic-inspector 12.5 (PyPI, its own venv, "
        "installed once) standalone in the same lab, as the shape 'upstream'",
    )
    bench.add_argument(
        "--no-ironic-profile",
        action="store_true",
        help="skip pricing each kind of Ironic call afterwards (about 20 s)",
    )
    bench.add_argument(
        "--profile",
        type=pathlib.Path,
        help="sample every inspector process with py-spy while the machines "
        "run, one file per process in this directory, and print where the "
        "CPU went (py-spy must be on PATH; it slows the run)",
    )
    pxe = sub.add_parser(
        "bench-pxe",
        help="the PXE filter's write costs and dnsmasq's reload CPU at 1k, "
        "10k and 50k MACs, both dnsmasq backends (needs root)",
    )
    pxe.add_argument(
        "--sizes", default="1000,10000,50000", help="comma separated MAC counts"
    )
    scale = sub.add_parser(
        "bench-scale",
        help="listing pages, the metrics scrape, the periodic sweeps and "
        "memory at 1k and 200k introspection records, SQLite and PostgreSQL",
    )
    scale.add_argument(
        "--sizes", default="1000,200000", help="comma separated record counts"
    )
    scale.add_argument("--backends", default="sqlite,postgresql")
    scale.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("scale.json")
    )
    fleet = sub.add_parser(
        "bench-fleet",
        help="many nodes in Ironic, introspections in bursts, all accounted for",
    )
    fleet.add_argument("--nodes", type=int, default=10_000)
    fleet.add_argument("--introspect", type=int, default=1_000)
    fleet.add_argument("--burst", type=int, default=200)
    fleet.add_argument("--burst-interval", type=float, default=10.0)
    fleet.add_argument("--split", type=int, metavar="N")
    fleet.add_argument("--ironic", choices=("real", "standin"), default="standin")
    fleet.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("fleet.json")
    )
    history = sub.add_parser(
        "bench-history",
        help="the fleet view (inventory endpoints, /fleet) at 10,000 nodes "
        "with 20 hardware runs each, SQLite and PostgreSQL",
    )
    history.add_argument("--nodes", type=int, default=10_000)
    history.add_argument("--runs", type=int, default=20)
    history.add_argument("--backends", default="sqlite,postgresql")
    history.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("history.json")
    )
    redfish = sub.add_parser(
        "bench-redfish",
        help="N emulated machines introspected out of band at once: the "
        "inspector's CPU per machine and the wall time",
    )
    redfish.add_argument("--machines", type=int, default=100)
    redfish.add_argument("--max-per-host", type=int, default=16)
    redfish.add_argument(
        "--max-concurrency",
        type=int,
        default=64,
        help="the inspector's [DEFAULT]max_concurrency (default 64)",
    )
    redfish.add_argument(
        "--database",
        choices=("sqlite", "postgresql"),
        default="sqlite",
        help="the inspector's database (postgresql: a private server)",
    )
    redfish.add_argument("--work-dir", type=pathlib.Path)
    redfish.add_argument(
        "--with-ironic",
        action="store_true",
        help="and Ironic's own redfish inspection of --ironic-machines more",
    )
    redfish.add_argument("--ironic-machines", type=int, default=20)
    redfish.add_argument(
        "--bmcs",
        choices=("emulator", "fleet"),
        default="emulator",
        help="emulator: sushy-tools' emulator (one address for all); fleet: "
        "one static BMC per machine, each on its own port (lab/redfish_fleet.py)",
    )
    redfish.add_argument(
        "--ironic",
        choices=("real", "standin"),
        default="real",
        help="the Ironic of our runs (Ironic's own redfish inspection always "
        "runs in the real one)",
    )
    redfish.add_argument(
        "--compare",
        type=int,
        default=0,
        metavar="N",
        help="and N machines whose BMC suffices plus N whose BMC lacks "
        "drives, each set in-band and then in auto",
    )
    redfish.add_argument(
        "--profile",
        type=pathlib.Path,
        metavar="DIR",
        help="py-spy the inspector during the out-of-band run",
    )
    redfish.add_argument(
        "--split",
        type=int,
        default=0,
        metavar="N",
        help="the split shape: an API and N conductors over JSON-RPC "
        "(needs --database postgresql); default: standalone",
    )
    redfish.add_argument(
        "--output", type=pathlib.Path, default=pathlib.Path("redfish.json")
    )
    standin = sub.add_parser(
        "ironic-standin", help="serve the instant Ironic stand-in (benchmarks)"
    )
    standin.add_argument("--port", type=int, required=True)
    standin.add_argument("--log", required=True)
    ironic = sub.add_parser("ironic", help="run a real Ironic on loopback")
    ironic.add_argument("--port", type=int)
    ironic.add_argument("--work-dir", type=pathlib.Path, default=pathlib.Path(".lab"))
    return parser


def _bench(args: argparse.Namespace) -> int:
    import json

    from lab import bench, cpu_profile

    if args.profile is not None and (why := cpu_profile.Profiler.missing()):
        print(f"--profile: {why}")
        return 2
    runs = []
    shapes = args.shapes.split(",") + (["upstream"] if args.with_upstream else [])
    for shape in shapes:
        shape = shape.strip()
        common = {
            "machines": args.machines,
            "split_api": args.split_api,
            "rpc_transport": args.rpc,
            "profile_ironic": not args.no_ironic_profile and args.ironic != "standin",
            "standin": args.ironic == "standin",
            "ironic_production": args.ironic == "production",
            "profile_dir": args.profile,
        }
        if shape == "standalone":
            runs.append(bench.BenchOptions(**common))
        elif shape == "upstream":
            runs.append(bench.BenchOptions(upstream=True, **common))
        elif match := re.fullmatch(
            r"split-([1-9][0-9]*)(-json-rpc-tls|-json-rpc|-oslo)?", shape
        ):
            if match.group(2):
                common["rpc_transport"] = match.group(2)[1:]
            runs.append(bench.BenchOptions(split=int(match.group(1)), **common))
        else:
            print(f"lab: unknown shape {shape!r}", file=sys.stderr)
            return 2
    results, failures = [], []
    for options in runs:
        print(f"Benchmarking {args.machines} machines ...", flush=True)
        try:
            results.append(bench.run(options))
        except Exception as exc:  # one shape failing must not lose the others
            name = "standalone"
            if options.upstream:
                name = "upstream"
            elif options.split:
                name = f"split-{options.split}"
            failures.append(f"{name}: {exc}")
            print(f"lab: {failures[-1]}", file=sys.stderr, flush=True)
            continue
        print(bench.report(results[-1:]), flush=True)
    print()
    print(bench.report(results))
    for failure in failures:
        print(f"FAILED {failure}")
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nJSON: {args.output}")
    failed = [r for r in results if r["finished"] < r["machines"]]
    return 1 if failed or failures else 0


def oob_refusal(args: argparse.Namespace) -> str | None:
    """Why ``demo --oob`` cannot run with the other options given, if so."""
    if not args.oob:
        return None
    others = [
        name
        for name, given in (("--split", args.split is not None), ("--pxe", args.pxe))
        if given
    ]
    if not others:
        return None
    return (
        "--oob runs the standalone shape, its machines over Redfish: not with "
        + " or ".join(others)
    )


def _terminated(signo: int, _frame: object) -> None:
    raise SystemExit(128 + signo)


def main(argv: list[str] | None = None) -> int:
    from inspector import bootstrap

    bootstrap.select_threading_backend()  # tooz must not pull eventlet in
    # a plain kill unwinds like Ctrl-C: every server the lab started stops
    signal.signal(signal.SIGTERM, _terminated)
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.command == "bench":
        return _bench(args)
    if args.command == "bench-fleet":
        import json

        from lab import fleet_bench

        result = fleet_bench.run(
            fleet_bench.FleetOptions(
                nodes=args.nodes,
                introspect=args.introspect,
                burst=args.burst,
                burst_interval=args.burst_interval,
                split=args.split,
                ironic=args.ironic,
            )
        )
        print(fleet_bench.report(result))
        args.output.write_text(json.dumps(result, indent=2) + "\n")
        print(f"\nJSON: {args.output}")
        return 0 if result["lost"] == 0 and result["errors"] == 0 else 1
    if args.command == "bench-history":
        import json

        from lab import history_bench

        entries = history_bench.run(args.backends.split(","), args.nodes, args.runs)
        args.output.write_text(json.dumps(entries, indent=2) + "\n")
        print(f"\nJSON: {args.output}")
        return 0
    if args.command == "bench-redfish":
        import json

        from lab import redfish_bench

        if args.split and args.database != "postgresql":
            print("--split: the split shape runs on PostgreSQL (--database postgresql)")
            return 2
        result = redfish_bench.run(
            redfish_bench.RedfishBenchOptions(
                machines=args.machines,
                max_per_host=args.max_per_host,
                max_concurrency=args.max_concurrency,
                database=args.database,
                work_dir=args.work_dir,
                with_ironic=args.with_ironic,
                ironic_machines=args.ironic_machines,
                bmcs=args.bmcs,
                ironic=args.ironic,
                compare=args.compare,
                profile_dir=args.profile,
                split=args.split,
            )
        )
        print(redfish_bench.report(result))
        args.output.write_text(json.dumps(result, indent=2) + "\n")
        print(f"\nJSON: {args.output}")
        return 0
    if args.command == "ironic-standin":
        from lab import ironic_standin

        ironic_standin.serve(args.port, args.log)
        return 0
    if args.command == "bench-scale":
        import json

        from lab import scale_bench

        results = scale_bench.run(
            sorted(int(n) for n in args.sizes.split(",")), args.backends.split(",")
        )
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        print(f"\nJSON: {args.output}")
        return 0
    if args.command == "bench-pxe":
        from lab import pxe_bench

        pxe_bench.run(tuple(int(n) for n in args.sizes.split(",")))
        return 0
    if args.command == "demo":
        if args.split is not None and args.split < 1:
            print(
                "lab: --split needs at least 1 conductor",
                file=sys.stderr,
            )
            return 2
        if args.pxe and args.split is not None:
            print("lab: --pxe runs the standalone shape only", file=sys.stderr)
            return 2
        if args.machines < 1:
            print("lab: --machines must be at least 1", file=sys.stderr)
            return 2
        if refusal := oob_refusal(args):
            print(f"lab: {refusal}", file=sys.stderr)
            return 2
        run = demo.run
        if args.oob:  # --split and --pxe are refused with it above
            from lab import oob_demo

            run = oob_demo.run
        try:
            return run(
                demo.DemoOptions(
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
    with IronicServer(default_cache_dir(), args.work_dir, port=args.port) as server:
        print(f"Ironic at {server.url} (noauth, fake-hardware); Ctrl-C stops it")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0
