'use strict';
// Plain values across the sandbox boundary (see ../codec.py for the format).
const MAX_DEPTH = 100;

class UnsupportedValue extends TypeError {}

function encode(value, depth = 0) {
  if (depth > MAX_DEPTH) throw new UnsupportedValue(`value is nested more than ${MAX_DEPTH} levels deep (or contains itself)`);
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case 'boolean': case 'string': return value;
    case 'number': return encodeNumber(value);
    case 'bigint': return encodeBigInt(value);
    case 'object': return encodeObject(value, depth);
    default: throw new UnsupportedValue(`a value of type ${typeof value} is not plain data`);
  }
}

function encodeNumber(value) {
  if (Number.isNaN(value)) return { $float: 'nan' };
  if (!Number.isFinite(value)) return { $float: value > 0 ? 'inf' : '-inf' };
  if (Number.isInteger(value)) {
    if (Number.isSafeInteger(value)) return value;
    return encodeBigInt(BigInt(value));
  }
  return value;
}

function encodeBigInt(value) {
  const negative = value < 0n;
  return { $int: (negative ? '-' : '') + (negative ? -value : value).toString(16) };
}

function encodeObject(value, depth) {
  const items = (list) => Array.from(list, (item) => encode(item, depth + 1));
  if (Array.isArray(value)) return items(value);
  if (value instanceof Set) return { $set: items(value) };
  if (value instanceof Map) {
    return { $dict: Array.from(value, ([k, v]) => [encode(k, depth + 1), encode(v, depth + 1)]) };
  }
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    return { $bytes: Buffer.from(value).toString('base64') };
  }
  const proto = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) {
    return { $dict: Object.keys(value).map((k) => [k, encode(value[k], depth + 1)]) };
  }
  const name = (value.constructor && value.constructor.name) || 'object';
  throw new UnsupportedValue(`a value of type ${name} is not plain data`);
}

function decode(data, depth = 0) {
  if (depth > MAX_DEPTH + 1) throw new Error('encoded value is nested too deeply');
  if (data === null || typeof data === 'boolean' || typeof data === 'string' || typeof data === 'number') return data;
  if (Array.isArray(data)) return data.map((item) => decode(item, depth + 1));
  const keys = Object.keys(data);
  if (keys.length !== 1) throw new Error('malformed encoded value');
  const body = data[keys[0]];
  switch (keys[0]) {
    case '$int': {
      const negative = body.startsWith('-');
      const magnitude = BigInt('0x' + (negative ? body.slice(1) : body));
      const big = negative ? -magnitude : magnitude;
      const small = Number(big);
      return Number.isSafeInteger(small) ? small : big;
    }
    case '$float': return decodeFloat(body);
    case '$tuple': return body.map((item) => decode(item, depth + 1));
    case '$dict': return decodeDict(body, depth);
    case '$set': case '$frozenset': return new Set(body.map((item) => decode(item, depth + 1)));
    case '$bytes': return Buffer.from(body, 'base64');
    default: throw new Error(`unsupported value tag ${keys[0]} in JavaScript`);
  }
}

function decodeFloat(body) {
  if (typeof body === 'number') return body;
  return { nan: NaN, inf: Infinity, '-inf': -Infinity }[body];
}

function decodeDict(pairs, depth) {
  const keys = pairs.map(([k]) => decode(k, depth + 1));
  if (keys.every((k) => typeof k === 'string')) {
    const object = {};
    pairs.forEach(([, v], i) => { object[keys[i]] = decode(v, depth + 1); });
    return object;
  }
  return new Map(pairs.map(([, v], i) => [keys[i], decode(v, depth + 1)]));
}

module.exports = { encode, decode, UnsupportedValue };
