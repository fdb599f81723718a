"""CPU seconds of one C++ job, the kernel's count (cpuacct), this checkout against another
(``--before``), alternating in one run, each side in a process of its own.

    .venv/bin/python bench/cpp_compile_cpu.py [--rounds 5] [--before /work/wt/base]

A function-mode job (one call) and a test-program job (the candidate and the test program,
each compiled in its sandbox). Every source is unique (a comment), so no build is shared:
every job compiles. The harness parts are prebuilt before the count starts; the count is
the cgroup this process makes for each side (root and cgroup v1's cpuacct needed): the
side's own process and every sandbox, whose cgroups nest under it. Prints each job's CPU
with the load average, then the medians per side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import uuid

CPUACCT = "/sys/fs/cgroup/cpuacct"
CANDIDATE = "#include <vector>\nusing namespace std;\nlong long total(vector<int> v) {\n    long long s = 0;\n    for (int x : v) s += x;\n    return s;\n}\n"
TEST = "#undef NDEBUG\n#include <assert.h>\nint main() {\n    assert(total({1, 2, 3}) == 6);\n}\n"


def measure(kind: str) -> None:
    """(In the side's process.) One job of ``kind``, after a warm-up job; prints its CPU."""
    import warnings

    from assay.sandbox import Call, SandboxConfig, SandboxIsolationWarning, SandboxPool, get_language

    cpp = get_language("cpp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SandboxIsolationWarning)
        pool = SandboxPool(SandboxConfig(backend="bubblewrap"))

    def job() -> None:
        mark = f"// {uuid.uuid4().hex}\n"
        if kind == "function":
            done = pool.run_function(cpp, CANDIDATE + mark, "total", [Call(([1, 2, 3],))], timeout=120)
            assert done.outcomes[0].value == 6, (done.load_failure, done.outcomes)
        else:
            ran = pool.run_test_program(cpp, CANDIDATE + mark, TEST + mark, "total", timeout=120)
            assert ran.passed, ran.verdict

    try:
        job()  # the pool started, the harness parts prebuilt
        before = _usage()
        job()
        print(json.dumps({"cpu_s": (_usage() - before) / 1e9}))
    finally:
        pool.close()


def _usage() -> int:
    with open(f"/proc/{os.getpid()}/cgroup") as handle:
        path = next(
            line.split(":", 2)[2].strip() for line in handle if ":cpuacct" in line or ",cpuacct" in line
        )
    with open(f"{CPUACCT}{path}/cpuacct.usage") as handle:
        return int(handle.read())


def one_side(checkout: str, kind: str) -> float:
    """A process of ``checkout``'s code in a cgroup of its own: its job's CPU seconds."""
    group = os.path.join(CPUACCT, f"bench-cpp-{uuid.uuid4().hex[:8]}")
    os.mkdir(group)
    try:
        env = {**os.environ, "PYTHONPATH": os.path.join(checkout, "src")}
        script = os.path.abspath(__file__)
        done = subprocess.run(
            [sys.executable, script, "--measure", kind],
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=lambda: _join(group),
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-2000:])
        return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu_s"])
    finally:
        os.rmdir(group)


def _join(group: str) -> None:
    with open(os.path.join(group, "cgroup.procs"), "w") as handle:
        handle.write(str(os.getpid()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", help="another checkout (its src/ is imported)")
    parser.add_argument("--measure", choices=("function", "program"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure(args.measure)
        return
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sides = {"after": here, **({"before": args.before} if args.before else {})}
    found: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        names = list(sides) if round_ % 2 else list(reversed(sides))
        for kind in ("function", "program"):
            for side in names:
                cpu = one_side(sides[side], kind)
                found.setdefault((side, kind), []).append(cpu)
                print(f"  {side:<6} {kind:<8} {cpu:5.2f} CPU s (load {os.getloadavg()[0]:.1f})", flush=True)
    for (side, kind), values in sorted(found.items()):
        print(f"{side:<6} {kind:<8} median {statistics.median(values):.2f} CPU s over {len(values)}")


if __name__ == "__main__":
    main()
