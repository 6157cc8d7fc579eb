"""Scaling of the cut-finding walk (``gradcheck.trace.diagnose.cuts.find_cuts``) on synthetic graphs.

The graphs stand for one broken train step: variables read into a float network (a chain,
or layers of ``width`` ops with fan-in 2 and fan-out about 2, with integer side inputs
like real reshapes), then an ``AddN`` -> ``ArgMax`` -> ``Cast`` bottleneck that starves
everything above it, a float head after it with its own (live) variables, a variable cut
off by ``StopGradient`` (a second, nested cut: the walk recurses), and a few variables read
into a head that never reaches the loss (unreached). One starved variable per
``source_every`` ops, so a 100k-op graph asks about 1000 starved variables at once.

Liveness is emulated like TensorFlow's gradient machinery would answer it (a backward walk
through differentiable ops and float tensors); its time is measured apart, so the figure
for the walk is gradcheck's own work. No TensorFlow is imported.

    python benchmarks/bench_scaling.py [--smoke] [--sizes 1000,10000,100000] [--reps 5] [--json]

``--unet SIZE`` (``small`` or ``large``): a real model instead, the diffusion U-Net with
attention blocks of ``benchmarks/programs/unet_attention.py`` (Keras 3, ``fit`` with a custom
``train_step``), checked clean and with one cut inside the attention block at each depth
(``--depths``), each in a fresh process with TensorFlow imported before the clock starts
(``run_file`` in-process, as the CLI's child runs it). The figure per depth is the checked
run of the cut model (its first step and the diagnosis) over the checked clean run, both
from this run; the diagnosis alone (``analyze._diagnose``) is reported beside it.

    python benchmarks/bench_scaling.py --unet large [--depths 0,1,2,3] [--reps 1] [--eager] [--json]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._common import Figure, fmt_seconds, median
from gradcheck.trace.diagnose.cuts import BLOCK, BOUNDARY, find_cuts
from gradcheck.trace.record.dataflow import Flow, cyclic_gc_paused

FLOAT_OPS = ("MatMul", "AddV2", "Mul", "Relu", "BiasAdd", "Tanh", "Sub", "Sigmoid")
NOT_DIFFERENTIABLE = frozenset({"ArgMax", "Cast", "StopGradient", "Shape"})


class Spec:
    """The ops of a synthetic graph, as ``Flow.add`` arguments, and what the walk must find."""

    def __init__(self) -> None:
        self.ops: list[tuple[str, tuple, tuple, str]] = []  # (type, inputs, outputs, tag)
        self.next_key = 0
        self.ints: set[int] = set()
        self.resources: set[int] = set()
        self.starved: list[int] = []  # handles of the variables above the bottleneck
        self.live_sources: list[int] = []
        self.stopped: int | None = None  # the variable behind StopGradient
        self.unused: list[int] = []
        self.argmax_op = -1
        self.stop_op = -1
        self.target: int | None = None

    def key(self, integer: bool = False) -> int:
        self.next_key += 1
        if integer:
            self.ints.add(self.next_key)
        return self.next_key

    def op(self, type_: str, inputs, integer: bool = False, tag: str = "") -> int:
        out = self.key(integer)
        self.ops.append((type_, tuple(inputs), (out,), tag))
        return out

    def read(self) -> tuple[int, int]:
        handle = self.key()
        self.resources.add(handle)
        return handle, self.op("ReadVariableOp", [handle], tag="read")

    def build(self) -> tuple[Flow, float, float]:
        """A Flow of these ops, and the wall and CPU seconds its construction took."""
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        with cyclic_gc_paused():  # as the engine builds it (gradcheck.trace.diagnose.analyze)
            flow = Flow()
            for k in self.resources:
                flow.resources.add(k)
                flow.differentiable[k] = False
            for k in self.ints:
                flow.differentiable[k] = False
            add = flow.add
            for type_, inputs, outputs, tag in self.ops:
                add(type_, inputs, outputs, tag=tag, name=type_)
        return flow, time.perf_counter() - start, time.process_time() - cpu


def make_graph(n_ops: int, width: int, source_every: int = 100, seed: int = 0) -> Spec:
    """About ``n_ops`` ops; ``width`` 1 makes a chain."""
    rng = random.Random(seed)
    spec = Spec()
    x = spec.op("Placeholder", [])
    budget_before = int(n_ops * 0.9)

    def layers(first: list[int], budget: int, sources: list[int]) -> list[int]:
        layer, made = first, 0
        next_source = source_every
        while made < budget:
            new = []
            for j in range(width):
                a = layer[j % len(layer)]  # every op of the layer above is used: no dead ends
                b = rng.choice(layer)
                inputs = [a] if width == 1 else [a, b]
                if made >= next_source:
                    handle, value = spec.read()
                    sources.append(handle)
                    inputs.append(value)
                    made += 1
                    next_source += source_every
                if made % 50 == 7:  # an integer side input (a shape), as reshapes have
                    shape = spec.op("Shape", [a], integer=True)
                    new.append(spec.op("Reshape", [a, shape]))
                    made += 2
                else:
                    new.append(spec.op(rng.choice(FLOAT_OPS), inputs))
                    made += 1
            layer = new
        return layer

    handle, value = spec.read()
    spec.starved.append(handle)
    first = [spec.op("MatMul", [x, value]) for _ in range(width)]
    top = layers(first, budget_before, spec.starved)
    # A head that never reaches the loss: its variables are unreached.
    for _ in range(3):
        handle, value = spec.read()
        spec.unused.append(handle)
        spec.op("MatMul", [rng.choice(top), value])
    # The bottleneck: every path from the variables above goes through an integer.
    total = spec.op("AddN", top)
    spec.argmax_op = len(spec.ops)
    index = spec.op("ArgMax", [total], integer=True)
    restart = spec.op("Cast", [index])
    head = layers([restart] * width, n_ops - len(spec.ops) - 8, spec.live_sources)
    # A variable cut off by StopGradient, added into the head.
    handle, value = spec.read()
    spec.stopped = handle
    scaled = spec.op("Mul", [value, value])
    spec.stop_op = len(spec.ops)
    stopped = spec.op("StopGradient", [scaled])
    mixed = spec.op("AddV2", [rng.choice(head), stopped])
    spec.target = spec.op("Mean", [spec.op("AddN", [*head, mixed])])
    return spec


def emulated_live_fn(flow: Flow, spent: list[tuple[float, float]]):
    """What TensorFlow answers: keys the targets have a gradient for (a backward walk
    through differentiable ops, float and resource tensors). Its (wall, CPU) time goes to
    ``spent``."""

    def live(targets, keys):
        start, cpu = time.perf_counter(), time.process_time()
        alive: set = set()
        stack = [t for t in targets if flow.is_differentiable(t)]
        while stack:
            k = stack.pop()
            if k in alive:
                continue
            alive.add(k)
            i = flow.producer.get(k)
            if i is None:
                continue
            op = flow.ops[i]
            if op.type in NOT_DIFFERENTIABLE:
                continue
            for t in op.inputs:
                if t not in alive and (flow.is_differentiable(t) or t in flow.resources):
                    stack.append(t)
        result = {k for k in keys if k in alive}
        spent.append((time.perf_counter() - start, time.process_time() - cpu))
        return result

    return live


def check_result(spec: Spec, result) -> None:
    """The walk must find the ArgMax for the starved variables, StopGradient for the stopped
    one, and no path for the unused ones: a fast wrong answer is no benchmark."""
    by_op = {(c.kind, c.op): c.sources for c in result.cuts}
    argmax = by_op.get((BOUNDARY, spec.argmax_op))
    assert argmax == set(spec.starved), f"ArgMax cut: {len(argmax or ())} of {len(spec.starved)} sources"
    assert by_op.get((BLOCK, spec.stop_op)) == {spec.stopped}, "StopGradient cut not found"
    assert result.unreached == set(spec.unused), "unreached sources wrong"


def measure(n_ops: int, width: int, reps: int) -> dict:
    spec = make_graph(n_ops, width)
    sources = [*spec.starved, spec.stopped, *spec.unused]
    builds, build_cpus, walks, walk_cpus, lives, traversals = [], [], [], [], [], []
    inner = max(1, 20_000 // n_ops)  # small graphs: time several walks, report the mean
    for _ in range(reps):
        flow, build_s, build_cpu = spec.build()
        build_cpus.append(build_cpu)
        spent: list[tuple[float, float]] = []
        gc.collect()
        start, cpu = time.perf_counter(), time.process_time()
        with cyclic_gc_paused():
            for _ in range(inner):
                result = find_cuts(flow, [spec.target], sources, emulated_live_fn(flow, spent))
        total, total_cpu = time.perf_counter() - start, time.process_time() - cpu
        check_result(spec, result)
        builds.append(build_s)
        lives.append(sum(w for w, _ in spent) / inner)
        walks.append((total - sum(w for w, _ in spent)) / inner)
        walk_cpus.append((total_cpu - sum(c for _, c in spent)) / inner)
        # The yardstick for "linear": one plain walk over every op and edge of the graph.
        gc.collect()
        cpu = time.process_time()
        with cyclic_gc_paused():
            for _ in range(inner):
                flow.backward_cone([spec.target])
        traversals.append((time.process_time() - cpu) / inner)
    return {
        "ops": len(flow.ops),
        "edges": sum(len(op.inputs) for op in flow.ops),
        "width": width,
        "sources": len(sources),
        "starved": len(spec.starved) + 1,
        "build_s": median(builds),
        "build_cpu_s": median(build_cpus),
        "walk_s": median(walks),
        "walk_cpu_s": median(walk_cpus),
        "live_s": median(lives),
        "traversal_cpu_s": median(traversals),
        "walk_all": walks,
    }


def run(sizes: list[int], reps: int, shapes: dict[str, int] | None = None) -> dict:
    shapes = shapes or {"layered": 16, "chain": 1}
    rows = []
    figures: list[Figure] = []
    for shape, width in shapes.items():
        shape_rows = [dict(measure(n, width, reps), shape=shape) for n in sizes]
        rows += shape_rows
        small, large = shape_rows[0], shape_rows[-1]
        scale = large["ops"] / small["ops"]

        def per_op(row: dict, key: str) -> float:
            return row[key] / row["ops"]

        growth = per_op(large, "walk_s") / per_op(small, "walk_s")
        growth_cpu = per_op(large, "walk_cpu_s") / per_op(small, "walk_cpu_s")
        traversal_growth = per_op(large, "traversal_cpu_s") / per_op(small, "traversal_cpu_s")
        exponent = math.log(large["walk_cpu_s"] / small["walk_cpu_s"]) / math.log(scale)
        per_size = ", ".join(
            f"{r['ops']:,} ops {fmt_seconds(r['walk_cpu_s'])} = {r['walk_cpu_s'] / r['traversal_cpu_s']:.1f} traversals"
            for r in shape_rows
        )
        figures.append(
            Figure(
                name=f"cut walk (find_cuts), {shape}, {large['ops']:,} ops, {large['starved']} starved variables",
                value=large["walk_s"],
                unit="s",
                baseline_name="one plain traversal of the same graph (Flow.backward_cone)",
                baseline=large["traversal_cpu_s"],
                ratio=large["walk_s"] / large["traversal_cpu_s"],
                target="< 1 s",
                met=large["walk_cpu_s"] < 1.0,
                reps=reps,
                spread=large["walk_all"],
                cpu_value=large["walk_cpu_s"],
                cpu_baseline=large["traversal_cpu_s"],
                cpu_ratio=large["walk_cpu_s"] / large["traversal_cpu_s"],
                notes=f"CPU time per size: {per_size}",
            )
        )
        figures.append(
            Figure(
                name=f"cut walk growth, {shape}, time per op at {large['ops']:,} ops",
                value=per_op(large, "walk_s"),
                unit="s",
                baseline_name=f"time per op at {small['ops']:,} ops",
                baseline=per_op(small, "walk_s"),
                ratio=growth,
                target="linear: per-op time grows no more than 1.5x as much as a plain traversal's",
                met=growth_cpu <= 1.5 * traversal_growth,
                reps=reps,
                cpu_value=per_op(large, "walk_cpu_s"),
                cpu_baseline=per_op(small, "walk_cpu_s"),
                cpu_ratio=growth_cpu,
                notes=(
                    f"growth exponent {exponent:.2f} over {scale:,.0f}x the ops (1.00 = linear); a plain traversal's "
                    f"per-op time grows {traversal_growth:.2f}x over the same sizes (caches), the walk's {growth_cpu:.2f}x"
                ),
            )
        )
        figures.append(
            Figure(
                name=f"Flow construction, {shape}, {large['ops']:,} ops",
                value=large["build_s"],
                unit="s",
                baseline_name=f"construction at {small['ops']:,} ops x {scale:,.0f} (linear growth)",
                baseline=small["build_s"] * scale,
                ratio=per_op(large, "build_s") / per_op(small, "build_s"),
                target="report",
                met=None,
                reps=reps,
                cpu_value=large["build_cpu_s"],
                cpu_baseline=small["build_cpu_s"] * scale,
                cpu_ratio=per_op(large, "build_cpu_s") / per_op(small, "build_cpu_s"),
            )
        )
    return {"benchmark": "scaling", "rows": rows, "figures": [f.to_json() for f in figures]}


UNET = Path(__file__).resolve().parent / "programs" / "unet_attention.py"


def unet_worker(argv: list[str]) -> None:
    """In a fresh process: import TensorFlow, then time ``run_file`` on the U-Net with
    ``argv`` and the time spent in the diagnosis; print one JSON line."""
    import os

    import keras  # noqa: F401  (imported before the clock: both sides pay it alike)
    import tensorflow  # noqa: F401

    from gradcheck.trace.diagnose import analyze
    from gradcheck.trace.run.runner import run_file

    spent: list[float] = []
    diagnose = analyze._diagnose

    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return diagnose(*args, **kwargs)
        finally:
            spent.append(time.process_time() - start)

    analyze._diagnose = timed
    os.chdir(UNET.parent)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_file(str(UNET), argv=argv)
    if result.error:
        raise SystemExit(f"{UNET.name} {argv}: {result.error}")
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    findings = [{"code": f.code, "line": f.line, "variables": list(f.variables)} for f in result.findings]
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "diagnose_cpu_s": sum(spent), "findings": findings}))


def run_unet(size: str, depths: list[int], reps: int, eager: bool) -> dict:
    import subprocess

    from benchmarks._common import CHILD_ENV, PYTHON, ROOT

    env = {**CHILD_ENV, "PYTHONPATH": str(ROOT), "CUDA_VISIBLE_DEVICES": ""}
    extra = ["--eager"] if eager else []
    variants = {"clean": ["--size", size, *extra]}
    variants.update({f"cut at depth {d}": ["--size", size, "--cut", str(d), *extra] for d in depths})
    rows: dict[str, list[dict]] = {name: [] for name in variants}
    for _ in range(reps):
        for name, args in variants.items():
            out = subprocess.run(
                [PYTHON, __file__, "--unet-worker", *args], env=env, capture_output=True, text=True, check=True
            )
            rows[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
            print(f"{name}: {rows[name][-1]}", file=sys.stderr, flush=True)
    clean = median([r["wall_s"] for r in rows["clean"]])
    clean_cpu = median([r["cpu_s"] for r in rows["clean"]])
    mode = "eager (run_eagerly)" if eager else "graph (fit)"
    figures = []
    for name in variants:
        if name == "clean":
            continue
        runs = rows[name]
        value, cpu = median([r["wall_s"] for r in runs]), median([r["cpu_s"] for r in runs])
        diagnosis = median([r["diagnose_cpu_s"] for r in runs])
        codes = sorted({f"{f['code']}:{f['line']}" for r in runs for f in r["findings"]})
        figures.append(
            Figure(
                name=f"U-Net with attention ({size}, {mode}), {name}: first checked step + diagnosis",
                value=value,
                unit="s",
                baseline_name="the clean U-Net's first checked step, same run",
                baseline=clean,
                ratio=value / clean,
                target="<= 2x the clean first step",
                met=value / clean <= 2.0,
                reps=reps,
                spread=[r["wall_s"] for r in runs],
                baseline_spread=[r["wall_s"] for r in rows["clean"]],
                cpu_value=cpu,
                cpu_baseline=clean_cpu,
                cpu_ratio=cpu / clean_cpu,
                notes=f"diagnosis alone {fmt_seconds(diagnosis)} CPU ({diagnosis / clean_cpu:.2f}x the clean step); findings {', '.join(codes)}",
            )
        )
    return {"benchmark": "scaling-unet", "rows": rows, "figures": [f.to_json() for f in figures]}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--unet-worker"]:
        unet_worker(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="sizes 300, 1000, 3000, one run")
    parser.add_argument("--sizes", default=None, help="comma-separated op counts (default 1000,10000,100000)")
    parser.add_argument("--reps", type=int, default=None, help="runs per size (default 5)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON line")
    parser.add_argument("--unet", choices=["small", "large"], help="the attention U-Net instead (see above)")
    parser.add_argument("--depths", default="0,1,2,3", help="--unet: the attention blocks to cut, by depth")
    parser.add_argument("--eager", action="store_true", help="--unet: fit with run_eagerly=True")
    args = parser.parse_args(argv)
    if args.unet:
        out = run_unet(args.unet, [int(d) for d in args.depths.split(",")], args.reps or 1, args.eager)
        if args.json:
            print(json.dumps(out))
        else:
            for fig in out["figures"]:
                print(
                    f"{fig['name']}: {fmt_seconds(fig['value'])} vs {fmt_seconds(fig['baseline'])} = {fig['ratio']:.2f}x; {fig['notes']}"
                )
        return
    sizes = args.sizes or ("300,1000,3000" if args.smoke else "1000,10000,100000")
    out = run([int(s) for s in sizes.split(",")], args.reps or (1 if args.smoke else 5))
    if args.json:
        print(json.dumps(out))
        return
    for row in out["rows"]:
        print(
            f"{row['shape']:8s} {row['ops']:>7,} ops {row['edges']:>7,} edges {row['starved']:>5} starved  "
            f"build {fmt_seconds(row['build_s']):>9}  walk {fmt_seconds(row['walk_s']):>9} "
            f"(CPU {fmt_seconds(row['walk_cpu_s'])}; + emulated liveness {fmt_seconds(row['live_s'])})"
        )


if __name__ == "__main__":
    main()
