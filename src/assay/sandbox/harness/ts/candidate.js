'use strict';
// TypeScript's candidate: the JavaScript candidate after the compile step (argv[2]: the typescript package).
const { transpiler } = require('./transpile.js');

require('../js/candidate.js').start(transpiler(process.argv[2]));
