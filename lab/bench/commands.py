"""The benchmarks' commands of ``python -m lab``: each one's options and
its run. A benchmark's module is imported only when its command runs."""

import argparse
import json
import pathlib
import re
import sys

COMMANDS = (
    "bench",
    "bench-pxe",
    "bench-scale",
    "bench-fleet",
    "bench-history",
    "bench-follow",
    "bench-redfish",
    "bench-rules",
    "bench-swaps",
    "bench-status",
)


def split_options(parser: argparse.ArgumentParser) -> None:
    """How the split shape's API runs and reaches its conductors."""
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


def _output(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument("--output", type=pathlib.Path, default=pathlib.Path(default))


def add_commands(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
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
    _output(bench, "bench.json")
    split_options(bench)
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
    _output(scale, "scale.json")
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
    _output(fleet, "fleet.json")
    history = sub.add_parser(
        "bench-history",
        help="the fleet view (inventory endpoints, /fleet) at 10,000 nodes "
        "with 20 hardware runs each, SQLite and PostgreSQL",
    )
    history.add_argument("--nodes", type=int, default=10_000)
    history.add_argument("--runs", type=int, default=20)
    history.add_argument("--backends", default="sqlite,postgresql")
    _output(history, "history.json")
    _follow_command(sub)
    _redfish_command(sub)
    rules = sub.add_parser(
        "bench-rules",
        help="the CPU of N introspection rules for one machine, compiled "
        "once and per call (no server, a few seconds)",
    )
    rules.add_argument("--rules", type=int, default=200, help="default 200")
    rules.add_argument("--iterations", type=int, default=300, help="default 300")
    swaps = sub.add_parser(
        "bench-swaps",
        help="the CPU of one Ironic call on a kept-alive connection and of "
        "one ramdisk payload's validation",
    )
    swaps.add_argument("--iterations", type=int, default=3000)
    swaps.add_argument(
        "--only", choices=("ironic", "payload"), action="append", default=[]
    )
    status = sub.add_parser(
        "bench-status",
        help="the CPU of one status GET inside the application, part by part",
    )
    status.add_argument("--debug", action="store_true", help="[DEFAULT]debug on")
    status.add_argument("--json", action="store_true", help="print JSON only")


def _follow_command(
    sub: "argparse._SubParsersAction[argparse.ArgumentParser]",
) -> None:
    follow = sub.add_parser(
        "bench-follow",
        help="following Ironic's own inspections: the real Ironic holding N "
        "inspected nodes (written into its database), the catch-up, Ironic's "
        "CPU per poll, bursts of inspections, the fleet endpoints",
    )
    follow.add_argument("--nodes", type=int, default=10_000)
    follow.add_argument(
        "--burst", type=int, default=500, help="inspections per burst (two bursts)"
    )
    follow.add_argument(
        "--burst-over", type=float, default=60.0, help="seconds a burst's ends span"
    )
    follow.add_argument(
        "--burst-poll",
        type=int,
        default=10,
        help="[ironic_follow]poll_interval during the bursts",
    )
    follow.add_argument(
        "--window", type=float, default=60.0, help="seconds of each CPU window"
    )
    follow.add_argument(
        "--rounds", type=int, default=100, help="requests per fleet endpoint"
    )
    follow.add_argument("--work-dir", type=pathlib.Path, help="keep files here")
    follow.add_argument(
        "--profile",
        type=pathlib.Path,
        metavar="DIR",
        help="py-spy the inspector during the second burst (its numbers suffer)",
    )
    _output(follow, "follow.json")


def _redfish_command(
    sub: "argparse._SubParsersAction[argparse.ArgumentParser]",
) -> None:
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
        "one static BMC per machine, each on its own port "
        "(lab/machines/redfish_fleet.py)",
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
    _output(redfish, "redfish.json")


def _write(output: pathlib.Path, result: object) -> None:
    output.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nJSON: {output}")


def _throughput(args: argparse.Namespace) -> int:
    from lab.bench import cpu_profile, throughput

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
            runs.append(throughput.BenchOptions(**common))
        elif shape == "upstream":
            runs.append(throughput.BenchOptions(upstream=True, **common))
        elif match := re.fullmatch(
            r"split-([1-9][0-9]*)(-json-rpc-tls|-json-rpc|-oslo)?", shape
        ):
            if match.group(2):
                common["rpc_transport"] = match.group(2)[1:]
            runs.append(throughput.BenchOptions(split=int(match.group(1)), **common))
        else:
            print(f"lab: unknown shape {shape!r}", file=sys.stderr)
            return 2
    results, failures = [], []
    for options in runs:
        print(f"Benchmarking {args.machines} machines ...", flush=True)
        try:
            results.append(throughput.run(options))
        except Exception as exc:  # one shape failing must not lose the others
            name = "standalone"
            if options.upstream:
                name = "upstream"
            elif options.split:
                name = f"split-{options.split}"
            failures.append(f"{name}: {exc}")
            print(f"lab: {failures[-1]}", file=sys.stderr, flush=True)
            continue
        print(throughput.report(results[-1:]), flush=True)
    print()
    print(throughput.report(results))
    for failure in failures:
        print(f"FAILED {failure}")
    _write(args.output, results)
    failed = [r for r in results if r["finished"] < r["machines"]]
    return 1 if failed or failures else 0


def _fleet(args: argparse.Namespace) -> int:
    from lab.bench import fleet

    result = fleet.run(
        fleet.FleetOptions(
            nodes=args.nodes,
            introspect=args.introspect,
            burst=args.burst,
            burst_interval=args.burst_interval,
            split=args.split,
            ironic=args.ironic,
        )
    )
    print(fleet.report(result))
    _write(args.output, result)
    return 0 if result["lost"] == 0 and result["errors"] == 0 else 1


def _follow(args: argparse.Namespace) -> int:
    from lab.bench import cpu_profile, follow, follow_report

    if args.burst < 1 or args.nodes < 2 * args.burst:
        print("--nodes must hold two bursts (--nodes >= 2 x --burst >= 2)")
        return 2
    if args.profile is not None and (why := cpu_profile.Profiler.missing()):
        print(f"--profile: {why}")
        return 2
    result = follow.run(
        follow.FollowOptions(
            nodes=args.nodes,
            burst=args.burst,
            burst_over=args.burst_over,
            burst_poll=args.burst_poll,
            window=args.window,
            rounds=args.rounds,
            work_dir=args.work_dir,
            profile_dir=args.profile,
        )
    )
    print()
    print(follow_report.report(result))
    _write(args.output, result)
    return 0 if result["ok"] else 1


def _redfish(args: argparse.Namespace) -> int:
    from lab.bench import redfish

    if args.split and args.database != "postgresql":
        print("--split: the split shape runs on PostgreSQL (--database postgresql)")
        return 2
    result = redfish.run(
        redfish.RedfishBenchOptions(
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
    print(redfish.report(result))
    _write(args.output, result)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run the benchmark ``args.command`` names (one of :data:`COMMANDS`)."""
    if args.command == "bench":
        return _throughput(args)
    if args.command == "bench-fleet":
        return _fleet(args)
    if args.command == "bench-redfish":
        return _redfish(args)
    if args.command == "bench-follow":
        return _follow(args)
    if args.command == "bench-history":
        from lab.bench import history

        _write(
            args.output, history.run(args.backends.split(","), args.nodes, args.runs)
        )
        return 0
    if args.command == "bench-scale":
        from lab.bench import scale

        sizes = sorted(int(n) for n in args.sizes.split(","))
        _write(args.output, scale.run(sizes, args.backends.split(",")))
        return 0
    if args.command == "bench-pxe":
        from lab.bench import pxe

        pxe.run(tuple(int(n) for n in args.sizes.split(",")))
        return 0
    if args.command == "bench-rules":
        from lab.bench import rules

        return rules.run(args)
    if args.command == "bench-swaps":
        from lab.bench import swaps

        return swaps.run(args)
    from lab.bench import status_cost

    return status_cost.run(args)
