// One fact, one name: the package's result codes are the protocol's, in its order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { RESULT_CODES, isSuccess, isResultCode, PROTO_FILE, FencekeeperError } = require('../dist/index.js');

test('RESULT_CODES lists every ResultCode of fencing.proto, in its order', () => {
  const proto = readFileSync(PROTO_FILE, 'utf8');
  const body = proto.slice(proto.indexOf('enum ResultCode {'), proto.indexOf('}', proto.indexOf('enum ResultCode {')));
  const names = [...body.matchAll(/^\s*([A-Z_]+)\s*=\s*\d+;/gm)].map((m) => m[1]).filter((n) => n !== 'RESULT_CODE_UNSPECIFIED');
  assert.deepEqual([...RESULT_CODES], names);
});

test('success is what the Java client calls success', () => {
  const success = RESULT_CODES.filter(isSuccess);
  assert.deepEqual(success, ['GRANTED', 'RENEWED', 'RELEASED', 'ACCEPTED', 'FOUND', 'NOT_FOUND', 'CURRENT', 'REVOKED']);
  assert.equal(isResultCode('STALE_TOKEN'), true);
  assert.equal(isResultCode('stale_token'), false);
});

test('a rejection becomes an error with its code and context, tokens as bigints', () => {
  const error = FencekeeperError.fromResponse({
    code: 'STALE_TOKEN',
    message: "token 3 is stale: 'r' has token 7",
    currentToken: '7',
    sentToken: '3',
    holderOwner: 'worker-b',
    expiresAtMs: '0',
    key: 'k',
    position: 0,
  });
  assert.ok(error instanceof Error);
  assert.equal(error.code, 'STALE_TOKEN');
  assert.equal(error.currentToken, 7n);
  assert.equal(error.sentToken, 3n);
  assert.equal(error.holderOwner, 'worker-b');
  assert.equal(error.expiresAtMs, undefined);
  assert.equal(error.message, "STALE_TOKEN: token 3 is stale: 'r' has token 7");
  assert.deepEqual(JSON.parse(JSON.stringify(error)), {
    status: 'STALE_TOKEN',
    message: "STALE_TOKEN: token 3 is stale: 'r' has token 7",
    currentToken: '7',
    sentToken: '3',
    holderOwner: 'worker-b',
    key: 'k',
  });
});
