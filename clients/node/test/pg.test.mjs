// The guard row from Node against a real PostgreSQL: the same table and migration as fencekeeper-jdbc,
// and a stale token's transaction refused by the database itself, its work rolled back.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { postgres } from './support/postgres.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { advance, fencedTransaction, guard, migrate, acceptedToken, StaleFenceTokenError } = require('../dist/pg.js');

let server;
let pool;
let databases = 0;

before(async () => {
  server = await postgres();
  pool = new pg.Pool({ ...server.connectionConfig, max: 4 });
  // Idle clients see the server's shutdown at the end as an error; nothing to report then.
  pool.on('error', () => {});
});

after(async () => {
  await pool?.end();
  await server?.stop();
});

/** A fresh database with the migration run and a report table, so no test sees another's rows. */
async function freshDatabase() {
  const name = `fk_node_${process.pid}_${++databases}`;
  await pool.query(`CREATE DATABASE ${name}`);
  const db = new pg.Pool({ ...server.connectionConfig, database: name, max: 4 });
  db.on('error', () => {});
  await migrate(db);
  await db.query('CREATE TABLE report (day TEXT PRIMARY KEY, body TEXT NOT NULL, token BIGINT NOT NULL)');
  return db;
}

const writeReport = (body, token) => (client) =>
  client.query(
    'INSERT INTO report (day, body, token) VALUES ($1, $2, $3) ON CONFLICT (day) DO UPDATE SET body = $2, token = $3',
    ['2026-11-29', body, String(token)],
  );

const report = async (db) => (await db.query('SELECT body, token FROM report')).rows;

test('the migration creates fencekeeper_fence as fencekeeper-jdbc does, and runs twice', async () => {
  const db = await freshDatabase();
  try {
    await migrate(db);
    const columns = await db.query(
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'fencekeeper_fence' ORDER BY ordinal_position",
    );
    assert.deepEqual(columns.rows, [
      { column_name: 'resource', data_type: 'character varying' },
      { column_name: 'token', data_type: 'bigint' },
      { column_name: 'written_at', data_type: 'timestamp with time zone' },
    ]);
  } finally {
    await db.end();
  }
});

test('first use, the same token again and a newer token are accepted; an older token is refused and its work rolled back', async () => {
  const db = await freshDatabase();
  try {
    assert.equal(await fencedTransaction(db, { resource: 'daily-sales-report', token: 41n }, async (c) => {
      await writeReport('draft by A', 41)(c);
      return 'done';
    }), 'done');
    await fencedTransaction(db, { resource: 'daily-sales-report', token: 41n }, writeReport('final by A', 41));
    await fencedTransaction(db, { resource: 'daily-sales-report', token: 42n }, writeReport('by B', 42));
    let ran = false;
    await assert.rejects(
      fencedTransaction(db, { resource: 'daily-sales-report', token: 41n }, async (c) => {
        ran = true;
        await writeReport('late by A', 41)(c);
      }),
      (e) => {
        assert.ok(e instanceof StaleFenceTokenError);
        assert.equal(e.code, 'STALE_TOKEN');
        assert.equal(e.sentToken, 41n);
        assert.equal(e.newerToken, 42n);
        assert.equal(e.sqlState, 'FK001');
        assert.match(e.message, /sent token 41 but the database has accepted token 42/);
        return true;
      },
    );
    assert.equal(ran, false, 'the work of a stale token must not run');
    assert.deepEqual(await report(db), [{ body: 'by B', token: '42' }]);
    assert.equal(await acceptedToken(db, 'daily-sales-report'), 42n);
    assert.equal(await acceptedToken(db, 'never-fenced'), null);
  } finally {
    await db.end();
  }
});

test('work that throws rolls back its writes and the guard row', async () => {
  const db = await freshDatabase();
  try {
    await assert.rejects(
      fencedTransaction(db, { resource: 'r', token: 7n }, async (c) => {
        await writeReport('half done', 7)(c);
        throw new Error('the report generator failed');
      }),
      /the report generator failed/,
    );
    assert.deepEqual(await report(db), []);
    assert.equal(await acceptedToken(db, 'r'), null);
    // The pool's clients are not left inside a transaction.
    await fencedTransaction(db, { resource: 'r', token: 6n }, writeReport('ok', 6));
    assert.deepEqual(await report(db), [{ body: 'ok', token: '6' }]);
  } finally {
    await db.end();
  }
});

test('an older token waiting on a newer holder\'s guard lock is refused once the newer commits', async () => {
  const db = await freshDatabase();
  const newer = await db.connect();
  try {
    await newer.query('BEGIN');
    await guard(newer, { resource: 'r', token: 9n });
    await writeReport('by the newer holder', 9)(newer);
    let olderSettled = false;
    const older = fencedTransaction(db, { resource: 'r', token: 8n }, writeReport('by the older holder', 8)).finally(() => {
      olderSettled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(olderSettled, false, 'the older token must wait on the guard row lock');
    await newer.query('COMMIT');
    await assert.rejects(older, (e) => e instanceof StaleFenceTokenError && e.newerToken === 9n);
    assert.deepEqual(await report(db), [{ body: 'by the newer holder', token: '9' }]);
  } finally {
    newer.release();
    await db.end();
  }
});

test('a pg.Client works as well as a pool, and bad input changes nothing', async () => {
  const db = await freshDatabase();
  const client = new pg.Client({ ...server.connectionConfig, database: (await db.query('SELECT current_database() AS d')).rows[0].d });
  await client.connect();
  try {
    await fencedTransaction(client, { resource: 'r', token: '5' }, writeReport('via a client', 5));
    const invalid = (pattern) => (e) => e.code === 'INVALID_ARGUMENT' && pattern.test(e.message);
    await assert.rejects(fencedTransaction(client, { resource: 'r', token: 0n }, writeReport('x', 0)), invalid(/token/));
    await assert.rejects(fencedTransaction(client, { resource: '', token: 6n }, writeReport('x', 6)), invalid(/resource/));
    await assert.rejects(fencedTransaction(client, { resource: 'r', token: 6n }, writeReport('x', 6), { table: 'fence; DROP TABLE report' }), invalid(/table/));
    await assert.rejects(fencedTransaction(client, { resource: 'x'.repeat(513), token: 6n }, writeReport('x', 6)), invalid(/512/));
    await assert.rejects(fencedTransaction(client, { resource: 'r', token: 6n }, 'not a function'), invalid(/work/));
    assert.deepEqual(await report(db), [{ body: 'via a client', token: '5' }]);
    assert.equal(await acceptedToken(db, 'r'), 5n);
  } finally {
    await client.end();
    await db.end();
  }
});

test('advance right after acquiring refuses the older holder before the newer one has written anything', async () => {
  // The ordering of a paused worker: A (token 111) acquired and was paused before its transaction; B
  // acquired 113 and advanced, but has not written yet; A resumes and runs its transaction.
  const db = await freshDatabase();
  try {
    await advance(db, { resource: 'daily-sales-report', token: 113n });
    assert.equal(await acceptedToken(db, 'daily-sales-report'), 113n);
    let ran = false;
    await assert.rejects(
      fencedTransaction(db, { resource: 'daily-sales-report', token: 111n }, async (c) => {
        ran = true;
        await writeReport('late by A', 111)(c);
      }),
      (e) => e instanceof StaleFenceTokenError && e.sentToken === 111n && e.newerToken === 113n,
    );
    assert.equal(ran, false);
    assert.deepEqual(await report(db), []);
    // The newer holder's own transactions, and a second advance of its token, go through.
    await advance(db, { resource: 'daily-sales-report', token: 113n });
    await fencedTransaction(db, { resource: 'daily-sales-report', token: 113n }, writeReport('by B', 113));
    assert.deepEqual(await report(db), [{ body: 'by B', token: '113' }]);
    // An advance of a token older than the row's is refused and changes nothing.
    await assert.rejects(advance(db, { resource: 'daily-sales-report', token: 112n }), StaleFenceTokenError);
    assert.equal(await acceptedToken(db, 'daily-sales-report'), 113n);
  } finally {
    await db.end();
  }
});

test('advance waits for an older holder inside its transaction only lockWaitMs, then fails and changes nothing', async () => {
  const db = await freshDatabase();
  const older = await db.connect();
  try {
    await older.query('BEGIN');
    await guard(older, { resource: 'r', token: 4n });
    const started = Date.now();
    await assert.rejects(advance(db, { resource: 'r', token: 5n }, { lockWaitMs: 300 }), (e) => e.code === '55P03');
    const waited = Date.now() - started;
    assert.ok(waited >= 250 && waited < 5000, `advance waited ${waited} ms`);
    await older.query('COMMIT');
    assert.equal(await acceptedToken(db, 'r'), 4n);
    // The connection went back to the pool without the lock timeout.
    const setting = await db.query('SHOW lock_timeout');
    assert.equal(setting.rows[0].lock_timeout, '0');
    await assert.rejects(advance(db, { resource: 'r', token: 5n }, { lockWaitMs: 0 }), (e) => e.code === 'INVALID_ARGUMENT');
  } finally {
    older.release();
    await db.end();
  }
});

test('guard outside a transaction is refused and changes nothing: on a pool, a client in autocommit, an older driver', async () => {
  const db = await freshDatabase();
  const client = await db.connect();
  try {
    const outside = (e) => e.code === 'INVALID_ARGUMENT' && /outside a transaction/.test(e.message);
    await assert.rejects(guard(db, { resource: 'r', token: 3n }), outside);
    await assert.rejects(guard(client, { resource: 'r', token: 3n }), outside);
    // A driver that cannot tell the transaction status: PostgreSQL is asked.
    const olderDriver = { query: (text, values) => client.query(text, values) };
    await assert.rejects(guard(olderDriver, { resource: 'r', token: 3n }), outside);
    assert.equal(await acceptedToken(db, 'r'), null);
    await olderDriver.query('BEGIN');
    await guard(olderDriver, { resource: 'r', token: 3n });
    await olderDriver.query('COMMIT');
    assert.equal(await acceptedToken(db, 'r'), 3n);
    // fencedTransaction and advance on a client inside a transaction would commit the caller's: refused.
    await client.query('BEGIN');
    await assert.rejects(advance(client, { resource: 'r', token: 4n }), (e) => e.code === 'INVALID_ARGUMENT');
    await client.query('ROLLBACK');
  } finally {
    client.release();
    await db.end();
  }
});
