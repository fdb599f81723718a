'use strict';
// A plain program: the code runs as the main module; its exit code is the result.
const { readFrame } = require('./frames.js');
const { loadModule } = require('./common.js');

const setup = readFrame(3);
if (setup !== null) loadModule(setup.code, 'main.js', []);
