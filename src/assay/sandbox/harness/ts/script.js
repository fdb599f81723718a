'use strict';
// TypeScript's script: the JavaScript script after the compile step (argv[2]: the typescript package).
const { transpiler } = require('./transpile.js');

require('../js/script.js').start(transpiler(process.argv[2]));
