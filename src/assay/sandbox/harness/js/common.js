'use strict';
// Shared by the JavaScript roles: loading code from the working folder, error reports.
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const HARNESS_DIR = __dirname;

function errorReport(error) {
  const isError = error instanceof Error;
  const name = isError ? error.name : typeof error;
  let message;
  try { message = isError ? error.message : String(error); } catch (e) { message = '<unprintable>'; }
  let stack = '';
  try {
    stack = isError && typeof error.stack === 'string'
      ? error.stack.split('\n').filter((line) => !line.includes(HARNESS_DIR) && !line.includes('(node:') && !line.includes('node:internal')).join('\n')
      : `${name}: ${message}`;
  } catch (e) { stack = `${name}: ${message}`; }
  return { error_type: name, message, traceback: stack };
}

// Write code to the private working folder and load it as a CommonJS module; the
// export line is appended after the code so its line numbers stay true.
function loadModule(code, filename, exportNames) {
  // compile alone first, so a syntax error points into the code, not at our export line
  new vm.Script(code, { filename });
  const file = path.join(process.cwd(), filename);
  const exports = exportNames
    .map((name) => `module.exports[${JSON.stringify(name)}] = (typeof ${name} !== 'undefined') ? ${name} : undefined;`)
    .join(' ');
  fs.writeFileSync(file, `${code}\n;${exports}\n`);
  return require(file);
}

function isIdentifier(name) {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name);
}

module.exports = { errorReport, loadModule, isIdentifier };
