"""Hostile JavaScript candidates (Node.js), on the namespace backends."""

from __future__ import annotations

import os
from typing import Any

import pytest

from assay.sandbox import Call, FunctionRun, Limits, SandboxPool, values_equal

MARKER = "EXPECTED-" + os.urandom(8).hex()
SECRET = "sk-assay-test-secret-3f9a1c"
CASES = [Call(("probe",)), Call(("honest",))]


DEFAULT = Limits()


def attack(
    pool: SandboxPool,
    javascript: Any,
    body: str,
    timeout: float = 10,
    limits: Limits = DEFAULT,
    kind: str = "function",
) -> FunctionRun:
    code = f"{kind} solution(which) {{\n  if (which === 'honest') return {len(MARKER)};\n{body}\n}}\n"
    return pool.run_function(javascript, code, "solution", CASES, timeout, limits)


def passed(run: FunctionRun) -> list[bool]:
    return [o.ok and values_equal(e, o.value) for e, o in zip([MARKER, len(MARKER)], run.outcomes)]


def test_process_exit_fails_and_the_rest_still_runs(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(isolating_pool, javascript, "process.exit(0);")
    assert run.outcomes[0].status == "crashed"
    assert passed(run) == [False, True]


def test_objects_that_pretend_to_equal_anything_are_refused(
    isolating_pool: SandboxPool, javascript: Any
) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  class Anything { valueOf() { return 'EXPECTED'; } toJSON() { return 'EXPECTED'; }
                   equals() { return true; } }
  return new Anything();""",
    )
    assert run.outcomes[0].error_type == "UnsupportedReturnValue"
    assert passed(run) == [False, True]


def test_fake_output_and_forged_frames_cannot_pass(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  console.log('All test cases passed successfully.');
  const fs = require('fs');
  const body = Buffer.from(JSON.stringify({ ok: true, value: 'EXPECTED-guess' }));
  const header = Buffer.alloc(4); header.writeUInt32BE(body.length);
  fs.writeSync(4, Buffer.concat([header, body]));
  return 'EXPECTED-another-guess';""",
    )
    assert "All test cases passed" in run.output.stdout
    assert passed(run)[0] is False


def test_patching_globals_changes_nothing(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  JSON.stringify = () => '{"ok":true,"value":"EXPECTED"}';
  Object.prototype.ok = true;
  Array.prototype.map = () => [];
  return 'whatever';""",
        timeout=3,
    )
    assert passed(run)[0] is False


def test_environment_is_scrubbed(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  let environ = '';
  try { environ = require('fs').readFileSync('/proc/1/environ', 'latin1'); } catch (e) {}
  return [Object.keys(process.env).sort(), JSON.stringify(process.env) + environ];""",
    )
    keys, text = run.outcomes[0].value
    assert SECRET not in text
    assert "ASSAY_TEST_API_KEY" not in keys


def test_files_and_network_are_out_of_reach(
    isolating_pool: SandboxPool, javascript: Any, loopback: Any, canary: Any
) -> None:
    run = attack(
        isolating_pool,
        javascript,
        f"""
  const fs = require('fs');
  const results = [];
  for (const path of ['/etc/passwd', {canary.path!r}, '/work/main/pyproject.toml']) {{
    try {{ fs.readFileSync(path); results.push('read ' + path); }} catch (e) {{}}
  }}
  for (const path of ['/usr/evil', {canary.path!r}, '/opt/assay/harness/js/codec.js']) {{
    try {{ fs.writeFileSync(path, 'pwned'); results.push('wrote ' + path); }} catch (e) {{}}
  }}
  const net = require('net');
  const connected = await new Promise((resolve) => {{
    const socket = net.connect({loopback.port}, '127.0.0.1', () => resolve(true));
    socket.on('error', () => resolve(false));
    setTimeout(() => resolve(false), 1000);
  }});
  if (connected) results.push('connected');
  return results;""",
        kind="async function",
    )
    assert run.outcomes[0].value == [], run.outcomes[0]
    assert loopback.connections == []
    assert canary.intact()


def test_signals_to_the_parent_and_the_supervisor_do_nothing(
    isolating_pool: SandboxPool, javascript: Any
) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  const refused = [];
  for (const pid of [process.ppid, 1]) {
    try { process.kill(pid, 'SIGKILL'); } catch (e) { refused.push(e.code); }
  }
  return refused;""",
    )
    assert passed(run) == [False, True]


def test_memory_bomb_is_stopped(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  const blocks = [];
  for (;;) blocks.push(new Array(1 << 20).fill(7));""",
        limits=Limits(memory_bytes=256 << 20),
    )
    assert run.outcomes[0].status == "crashed"
    assert passed(run) == [False, True]


def test_process_bomb_is_stopped(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  const { spawn } = require('child_process');
  let started = 0;
  for (let i = 0; i < 500; i++) {
    try { spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }).unref(); started++; }
    catch (e) { return ['refused', started]; }
  }
  return ['spawned', started];""",
        limits=Limits(max_processes=48),
    )
    assert passed(run)[0] is False
    assert isolating_pool.stray_processes() == []


@pytest.mark.slow
def test_detached_children_die_with_the_timeout(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  const { spawn } = require('child_process');
  spawn('sleep', ['300'], { detached: true, stdio: 'ignore' }).unref();
  spawn('sh', ['-c', 'sleep 300 &'], { detached: true, stdio: 'ignore' }).unref();
  for (;;) {}""",
        timeout=2,
    )
    assert run.timed_out
    assert isolating_pool.stray_processes() == []


def test_huge_output_is_truncated(isolating_pool: SandboxPool, javascript: Any) -> None:
    run = attack(
        isolating_pool,
        javascript,
        """
  const chunk = 'z'.repeat(65536);
  try { for (let i = 0; i < 2000; i++) process.stdout.write(chunk); } catch (e) { return 'cut'; }
  return 'done';""",
        limits=Limits(max_output_bytes=50_000),
    )
    assert run.output.truncated
    assert len(run.output.stdout) < 50_200
