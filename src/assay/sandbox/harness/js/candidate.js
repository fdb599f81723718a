'use strict';
// The candidate's process: load the code, then answer calls with plain data.
const { readFrame, writeFrame } = require('./frames.js');
const codec = require('./codec.js');
const { errorReport, loadModule, isIdentifier } = require('./common.js');

const FRAMES_IN = 3;
const FRAMES_OUT = 4;

function load(setup) {
  const name = setup.func_name;
  if (!isIdentifier(name)) {
    return { event: 'load_error', kind: 'missing_function', error_type: 'NameError', message: `${JSON.stringify(name)} is not a JavaScript identifier`, traceback: '' };
  }
  let exported;
  try {
    exported = loadModule(setup.code, 'solution.js', [name]);
  } catch (error) {
    const kind = error instanceof SyntaxError ? 'syntax' : 'exception';
    return { event: 'load_error', kind, ...errorReport(error) };
  }
  const fn = exported[name];
  if (typeof fn !== 'function') {
    const message = fn === undefined ? `the code defines no function named '${name}'` : `'${name}' is not a function (it is of type ${typeof fn})`;
    return { event: 'load_error', kind: 'missing_function', error_type: 'NameError', message, traceback: '' };
  }
  return fn;
}

// Bound once: code that patches process later does not change how the harness measures.
const hrtime = process.hrtime.bigint;
const cpuUsage = process.cpuUsage;

// The reply's `time` field, the same in every language: the call alone, in milliseconds.
function elapsed(wall, cpu) {
  const used = cpuUsage(cpu);
  return { wall_ms: Number(hrtime() - wall) / 1e6, cpu_ms: (used.user + used.system) / 1000 };
}

async function answer(fn, call) {
  let value;
  let args;
  try {
    const kwargs = codec.decode(call.kwargs || { $dict: [] });
    if (kwargs && Object.keys(kwargs).length) throw new TypeError('JavaScript functions take positional arguments only');
    args = codec.decode(call.args);
  } catch (error) {
    return { ok: false, ...errorReport(error) };
  }
  const wall = hrtime();
  const cpu = cpuUsage();
  try {
    value = fn(...args);
    if (value && typeof value.then === 'function') value = await value;
  } catch (error) {
    return { ok: false, ...errorReport(error), time: elapsed(wall, cpu) };
  }
  const time = elapsed(wall, cpu);
  try {
    return { ok: true, value: codec.encode(value), time };
  } catch (error) {
    return { ok: false, error_type: 'UnsupportedReturnValue', message: `the return value cannot leave the sandbox: ${error.message}`, traceback: '', time };
  }
}

// transform: a compile step (TypeScript) turning the code into JavaScript, or null
async function main(transform) {
  const setup = readFrame(FRAMES_IN);
  if (setup === null) return;
  if (transform) {
    const built = transform(setup.code, 'solution.ts');
    if (built.error) { writeFrame(FRAMES_OUT, { event: 'load_error', ...built.error }); return; }
    writeFrame(FRAMES_OUT, { event: 'compiled' });
    if (readFrame(FRAMES_IN) === null) return; // the go-ahead: the run's clock starts
    setup.code = built.code;
  }
  const fn = load(setup);
  if (typeof fn !== 'function') { writeFrame(FRAMES_OUT, fn); return; }
  writeFrame(FRAMES_OUT, { event: 'ready' });
  for (;;) {
    const call = readFrame(FRAMES_IN);
    if (call === null) return;
    writeFrame(FRAMES_OUT, await answer(fn, call));
  }
}

function start(transform) {
  main(transform).then(() => process.exit(0), (error) => {
    process.stderr.write(`assay harness: ${error && error.stack}\n`);
    process.exit(70);
  });
}

if (require.main === module) start(null);
module.exports = { start };
