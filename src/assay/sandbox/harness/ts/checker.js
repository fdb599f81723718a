'use strict';
// TypeScript's checker: the JavaScript checker after the compile step (argv[2]: the typescript package).
const { transpiler } = require('./transpile.js');

require('../js/checker.js').start(transpiler(process.argv[2]));
