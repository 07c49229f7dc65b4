// The gateway's curl examples, run: every ```bash block of docs/http-gateway.md, and the README's "From
// other languages" block, in order, in one shell per page against a real cluster's gateway; each answer
// line's status (and HTTP code, where the block prints it) must be the one the page shows in the ```json
// block after it. The pages' ports are those of `./fencekeeper up`; the test swaps in its own cluster's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cluster as clusterHandle, release, repoRoot, PORTS } from '../support/cluster.mjs';

const PAGE = path.join(repoRoot, 'docs', 'http-gateway.md');
const MARK = '@@fencekeeper-doc-block@@';
let cluster;

before(async () => {
  cluster = await clusterHandle();
});

after(async () => {
  await release(cluster);
});

/** The page's blocks: each bash block with the json block that shows its answer, if one follows. */
function blocks(markdown) {
  const fences = [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1], body: m[2] }));
  const out = [];
  for (let i = 0; i < fences.length; i++) {
    if (fences[i].lang === 'bash') {
      const next = fences[i + 1];
      out.push({ script: fences[i].body, expected: next?.lang === 'json' ? next.body.trim().split('\n') : undefined });
    }
  }
  return out;
}

/** What a test compares of an answer line: its status and, when printed, its HTTP code. */
function shape(line) {
  const status = /"status":"([A-Z_]+)"/.exec(line)?.[1] ?? (/^\{"(\w+)"/.exec(line)?.[1] ?? line);
  const http = / HTTP (\d{3})$/.exec(line)?.[1];
  return http ? `${status} HTTP ${http}` : status;
}

/** The page's default ports (base 7301) become the test cluster's. */
function ported(script) {
  return script.replace(/127\.0\.0\.1:(7[3-6]0[1-3])/g, (_, port) => {
    const n = Number(port);
    const offset = Math.floor((n - 7301) / 100) * 100;
    return `127.0.0.1:${cluster.basePort + offset + ((n - 7301) % 100)}`;
  });
}

function runBlocks(page, name) {
  // A pause between blocks, as between a reader's commands: a follower the next block asks has then
  // applied what the last one committed (a watch there would otherwise see the last event arrive in a
  // second answer line).
  const script = page.map((b) => `${ported(b.script)}\necho "${MARK}"\nsleep 0.3`).join('\n');
  const run = spawnSync('bash', ['-c', `set -u\n${script}`], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 110_000,
  });
  assert.equal(run.status, 0, `${name}'s blocks failed:\n${run.stdout}\n${run.stderr}`);
  const outputs = run.stdout.split(`${MARK}\n`);
  page.forEach((block, i) => {
    if (!block.expected) {
      return;
    }
    // A JSON answer ends its line; curl's ` HTTP nnn` (-w) follows it on the next.
    const lines = outputs[i]
      .replace(/\n( HTTP \d{3})/g, '$1')
      .split('\n')
      .filter((l) => l.trim() !== '');
    assert.deepEqual(
      lines.map(shape),
      block.expected.map(shape),
      `${name}, block ${i + 1}:\n${block.script}\nanswered:\n${lines.join('\n')}\nthe page shows:\n${block.expected.join('\n')}`,
    );
  });
}

test('every curl block of docs/http-gateway.md answers as the page says', { timeout: 120_000 }, () => {
  const page = blocks(readFileSync(PAGE, 'utf8'));
  assert.ok(page.length >= 10, 'the page has its curl blocks');
  runBlocks(page, 'docs/http-gateway.md');
});

test('the README\'s curl session answers as the README says', { timeout: 60_000 }, () => {
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const start = readme.indexOf('## From other languages');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const page = blocks(section);
  assert.equal(page.length, 1);
  assert.match(page[0].script, /STALE|\$A/);
  runBlocks(page, 'README.md');
});

test('the page shows the gateway on the ports `up` gives it', () => {
  assert.equal(PORTS.http, 300);
  assert.match(readFileSync(PAGE, 'utf8'), /GW=http:\/\/127\.0\.0\.1:7601/);
});
