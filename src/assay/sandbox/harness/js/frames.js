'use strict';
// Length-prefixed JSON frames over file descriptors (see ../frames.py), blocking I/O.
const fs = require('fs');

const MAX_FRAME_BYTES = 64 * 1024 * 1024;

function readExactly(fd, size) {
  const buffer = Buffer.alloc(size);
  let offset = 0;
  while (offset < size) {
    let count;
    try {
      count = fs.readSync(fd, buffer, offset, size - offset, null);
    } catch (error) {
      if (error.code === 'EAGAIN') continue;
      if (error.code === 'EOF') count = 0; else throw error;
    }
    if (count === 0) {
      if (offset === 0) return null;
      throw new Error('end of file inside a frame');
    }
    offset += count;
  }
  return buffer;
}

function readFrame(fd, limit = MAX_FRAME_BYTES) {
  const header = readExactly(fd, 4);
  if (header === null) return null;
  const length = header.readUInt32BE(0);
  if (length > (limit || MAX_FRAME_BYTES)) throw new Error(`incoming frame of ${length} bytes exceeds the ${limit}-byte limit`);
  const body = readExactly(fd, length);
  if (body === null) throw new Error('end of file inside a frame');
  return JSON.parse(body.toString('utf8'));
}

function writeFrame(fd, message) {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length, 0);
  const data = Buffer.concat([header, body]);
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += fs.writeSync(fd, data, offset, data.length - offset);
    } catch (error) {
      if (error.code !== 'EAGAIN') throw error;
    }
  }
}

module.exports = { readFrame, writeFrame };
