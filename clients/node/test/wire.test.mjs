// The package's Wire* types (src/wire.ts), field by field against fencing.proto: every declared field is a
// field of the message of the same name, with the type the loader gives it (src/wire.ts LOADER_OPTIONS:
// 64-bit integers as strings, enums by name, bytes as Buffers, messages as objects or null, repeated as
// arrays, a oneof as its name holding the field's name), and every call's request is the .proto's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ts = require('typescript');
const protobuf = require('protobufjs');
const { PROTO_FILE } = require('../dist/wire.js');
const { RESULT_CODES } = require('../dist/codes.js');

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WIRE_SOURCE = path.join(packageDir, 'src', 'wire.ts');

/** The interfaces and type aliases of wire.ts: name -> { fields: name -> { type, optional } } or alias text. */
function declarations(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  const interfaces = new Map();
  const aliases = new Map();
  for (const statement of source.statements) {
    if (ts.isInterfaceDeclaration(statement)) {
      const fields = new Map();
      for (const member of statement.members) {
        if (ts.isPropertySignature(member)) {
          fields.set(member.name.getText(source), { type: member.type.getText(source).replace(/\s+/g, ' '), optional: !!member.questionToken });
        }
      }
      interfaces.set(statement.name.text, fields);
    } else if (ts.isTypeAliasDeclaration(statement)) {
      aliases.set(statement.name.text, statement.type.getText(source).replace(/\s+/g, ' '));
    }
  }
  return { interfaces, aliases };
}

const { interfaces, aliases } = declarations(WIRE_SOURCE);
const root = protobuf.loadSync(PROTO_FILE);
const pkg = root.lookup('fencekeeper.v1');
const service = root.lookupService('fencekeeper.v1.Fencekeeper');

const LONG = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const NUMBER = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32', 'double', 'float']);
const literals = (values) => values.map((v) => `'${v}'`).sort();

/** The literal strings a TS type text stands for, resolving the aliases it names (ResultCode included). */
function literalsOf(typeText) {
  return typeText
    .split('|')
    .map((part) => part.trim())
    .flatMap((part) => {
      if (part === 'ResultCode') {
        return literals([...RESULT_CODES]);
      }
      if (aliases.has(part)) {
        return literalsOf(aliases.get(part));
      }
      return [part];
    })
    .sort();
}

/** Why `declared` is not the loader's type of `field`, or undefined when it is. */
function mismatch(field, declared) {
  field.resolve();
  let element;
  if (LONG.has(field.type)) {
    element = 'string';
  } else if (NUMBER.has(field.type)) {
    element = 'number';
  } else if (field.type === 'bool') {
    element = 'boolean';
  } else if (field.type === 'string') {
    element = 'string';
  } else if (field.type === 'bytes') {
    element = 'Buffer';
  } else if (field.resolvedType instanceof protobuf.Enum) {
    const expected = literals(Object.keys(field.resolvedType.values));
    const elementText = field.repeated ? declared.replace(/\[\]$/, '').replace(/^\((.*)\)$/, '$1') : declared;
    const got = literalsOf(elementText);
    return JSON.stringify(got) === JSON.stringify(expected) ? undefined : `enum ${field.type}: declared ${got.join('|')}, the .proto has ${expected.join('|')}`;
  } else {
    element = `Wire${field.resolvedType.name}`;
    if (!interfaces.has(element)) {
      return `message ${field.type} has no ${element} declared`;
    }
  }
  let expected = field.repeated ? `${element}[]` : element;
  if (!field.repeated && field.resolvedType instanceof protobuf.Type) {
    expected = [`${element} | null`, element];
  }
  const ok = Array.isArray(expected) ? expected.includes(declared) : declared === expected;
  return ok ? undefined : `declared ${declared}, the loader gives ${Array.isArray(expected) ? expected[0] : expected}`;
}

test('every Wire* interface is a message of fencing.proto, every field its field with the loader\'s type', () => {
  const problems = [];
  let checked = 0;
  for (const [name, fields] of interfaces) {
    if (!name.startsWith('Wire') || name === 'WireRequests') {
      continue;
    }
    const message = pkg.lookup(name.slice(4));
    if (!(message instanceof protobuf.Type)) {
      problems.push(`${name}: no message ${name.slice(4)} in fencing.proto`);
      continue;
    }
    for (const [field, { type }] of fields) {
      checked++;
      const oneof = message.oneofs?.[field];
      if (oneof) {
        const got = literalsOf(type);
        const expected = literals(oneof.fieldsArray.map((f) => f.name));
        if (JSON.stringify(got) !== JSON.stringify(expected)) {
          problems.push(`${name}.${field}: oneof declared ${got.join('|')}, the .proto has ${expected.join('|')}`);
        }
        continue;
      }
      const protoField = message.fields[field];
      if (!protoField) {
        problems.push(`${name}.${field}: ${message.name} has no field ${field}`);
        continue;
      }
      const why = mismatch(protoField, type);
      if (why) {
        problems.push(`${name}.${field} (field ${protoField.id}): ${why}`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(checked > 80, `${checked} fields checked`);
});

test('each call the client makes is an RPC of the service, with the request message declared for it', () => {
  const requests = interfaces.get('WireRequests');
  assert.ok(requests.size >= 9);
  for (const [method, { type }] of requests) {
    const rpc = service.methods[method];
    assert.ok(rpc, `no rpc ${method} in the service`);
    assert.equal(rpc.responseType, 'Response', method);
    assert.equal(type, `Wire${rpc.requestType}`, `${method} takes ${rpc.requestType}`);
  }
  assert.equal(service.methods.Watch.requestType, 'WatchRequest');
  assert.equal(service.methods.Session.requestType, 'SessionRequest');
  assert.equal(service.methods.Session.responseType, 'SessionResponse');
});
