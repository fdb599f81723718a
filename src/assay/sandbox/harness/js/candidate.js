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

async function answer(fn, call) {
  let value;
  try {
    const kwargs = codec.decode(call.kwargs || { $dict: [] });
    if (kwargs && Object.keys(kwargs).length) throw new TypeError('JavaScript functions take positional arguments only');
    value = fn(...codec.decode(call.args));
    if (value && typeof value.then === 'function') value = await value;
  } catch (error) {
    return { ok: false, ...errorReport(error) };
  }
  try {
    return { ok: true, value: codec.encode(value) };
  } catch (error) {
    return { ok: false, error_type: 'UnsupportedReturnValue', message: `the return value cannot leave the sandbox: ${error.message}`, traceback: '' };
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
