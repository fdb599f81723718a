'use strict';
// A plain program: the code runs as the main module; its exit code is the result.
const { readFrame, writeFrame } = require('./frames.js');
const { loadModule } = require('./common.js');

function start(transform) {
  const setup = readFrame(3);
  if (setup === null) return;
  let code = setup.code;
  if (transform) {
    const built = transform(code, 'main.ts');
    if (built.error) {
      process.stderr.write(`compile error:\n${built.error.message}\n`);
      process.exitCode = 1;
      return;
    }
    writeFrame(4, { event: 'compiled' });
    if (readFrame(3) === null) return; // the go-ahead: the run's clock starts
    code = built.code;
  }
  loadModule(code, 'main.js', []);
}

if (require.main === module) start(null);
module.exports = { start };
