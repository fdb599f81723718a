'use strict';
// The test program's process: runs check(candidate) where each candidate call crosses
// to the candidate's process as plain data.
const { readFrame, writeFrame } = require('./frames.js');
const codec = require('./codec.js');
const { errorReport, loadModule, isIdentifier } = require('./common.js');

const FRAMES_IN = 3;
const FRAMES_OUT = 4;
const CANDIDATE_IN = 5;
const CANDIDATE_OUT = 6;

// Not an Error subclass, so `catch (e) { if (e instanceof Error) ... }` in a test does
// not mistake it for an expected failure; the verdict is fail either way.
class CandidateEnded {
  constructor(message) { this.name = 'CandidateEnded'; this.message = message; }
}

function makeProxy(name, valueLimit) {
  // time: the sum of the replies' `time` fields
  const state = { calls: 0, valueLimit, time: { wall_ms: 0, cpu_ms: 0 } };
  const proxy = function (...args) {
    state.calls += 1;
    let reply;
    try {
      writeFrame(CANDIDATE_IN, { args: codec.encode(args), kwargs: { $dict: [] } });
      reply = readFrame(CANDIDATE_OUT, state.valueLimit);
    } catch (error) {
      throw new CandidateEnded(`the candidate's process ended (${error.message})`);
    }
    if (reply === null) throw new CandidateEnded("the candidate's process ended during a call");
    addTime(state.time, reply.time);
    if (reply.ok === true) {
      try { return codec.decode(reply.value); } catch (error) {
        throw new CandidateEnded(`the candidate sent malformed data: ${error.message}`);
      }
    }
    const Known = { TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError }[reply.error_type];
    const error = Known ? new Known(String(reply.message)) : new Error(`${reply.error_type}: ${reply.message}`);
    throw error;
  };
  Object.defineProperty(proxy, 'name', { value: name });
  return { proxy, state };
}

function addTime(total, spent) {
  for (const key of Object.keys(total)) {
    const value = spent && typeof spent === 'object' ? spent[key] : undefined;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) total[key] += value;
  }
}

function testLine(error) {
  const stack = (error && typeof error.stack === 'string') ? error.stack : '';
  const match = /test\.js:(\d+)/.exec(stack);
  return match ? Number(match[1]) : null;
}

async function check(setup) {
  let first;
  try {
    first = readFrame(CANDIDATE_OUT);
    if (first && first.event === 'compiled') { // a compiled candidate waits for the go-ahead
      writeFrame(CANDIDATE_IN, { event: 'run' });
      first = readFrame(CANDIDATE_OUT);
    }
  } catch (error) { first = null; }
  if (first === null) return { passed: false, stage: 'load', kind: 'ended', message: "the candidate's process ended before it was ready" };
  if (first.event !== 'ready') {
    return { passed: false, stage: 'load', kind: first.kind, error_type: first.error_type, message: first.message, traceback: first.traceback };
  }
  // the candidate is loaded: the parent starts counting its sandbox's CPU time, then gives
  // the go-ahead (so that the verdict never arrives together with this frame)
  writeFrame(FRAMES_OUT, { event: 'started' });
  if (readFrame(FRAMES_IN) === null) return { passed: false, stage: 'test', kind: 'ended', message: 'no go-ahead came' };
  const name = setup.entry_point;
  const { proxy, state } = makeProxy(name, setup.max_value_bytes);
  global.__assay_candidate__ = proxy;
  const bind = isIdentifier(name) ? `const ${name} = global.__assay_candidate__;\n` : '';
  try {
    // the binding sits on the same line as the test's first line, so line numbers stay true
    const exported = loadModule(bind.trimEnd() + ' ' + setup.test, 'test.js', ['check']);
    if (typeof exported.check === 'function') {
      // an async check (or one returning a promise) fails only when awaited
      const result = exported.check(proxy);
      if (result && typeof result.then === 'function') await result;
    }
  } catch (error) {
    const report = error instanceof CandidateEnded
      ? { kind: 'candidate_ended', error_type: 'CandidateEnded', message: error.message, traceback: '' }
      : { kind: (error && error.name === 'AssertionError') ? 'assertion' : 'exception', ...errorReport(error) };
    const line = testLine(error);
    if (line !== null) {
      report.line = line;
      report.source = (setup.test.split('\n')[line - 1] || '').trim();
    }
    return { passed: false, stage: 'test', calls: state.calls, time: state.time, ...report };
  }
  return { passed: true, calls: state.calls, time: state.time };
}

// transform: a compile step (TypeScript) turning the test into JavaScript, or null
async function main(transform) {
  const setup = readFrame(FRAMES_IN);
  if (setup === null) return;
  if (transform) {
    const built = transform(setup.test, 'test.ts');
    if (built.error) {
      writeFrame(FRAMES_OUT, { passed: false, stage: 'test', kind: 'test_compile', ...built.error });
      return;
    }
    setup.test = built.code;
  }
  writeFrame(FRAMES_OUT, await check(setup));
}

function start(transform) {
  main(transform).then(() => process.exit(0), (error) => {
    process.stderr.write(`assay harness: ${error && error.stack}\n`);
    process.exit(70);
  });
}

if (require.main === module) start(null);
module.exports = { start };
