#!/usr/bin/env node
import { mkdtemp, rm } from 'node:fs/promises';
// Snapshot bytes at scale: GET /v1/snapshot, the OFREP bulk evaluation and the replica feed's view of one
// environment of 1,000 and 10,000 flags (each a two-condition rule and a 30 % rollout, as `flagops import`
// would load them), in identity, gzip and br as sent on the wire; how long compressing one version takes at
// the levels the server uses and at others (why those); and the first answer of a new version (which
// compresses it) against the next ones (which send the stored bytes).
//   npm run build && npm run bench -- snapshot-bytes      (BENCH_FLAGS=1000,10000 by default)
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { compress } from '../../dist/foundations/http/content-encoding.js';
import { silentLogger } from '../../dist/foundations/log/logger.js';
import { layout } from '../../dist/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../dist/foundations/repository/serialize-file.js';
import { startService } from '../../dist/service.js';
import { benchActor, ruleFlagConfig, summarize } from './lib/seed.mjs';

const SIZES = (process.env.BENCH_FLAGS ?? '1000,10000').split(',').map(Number);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const ADMIN = 'svc_adm_benchbenchbenchbench00000001';

/** A project of `count` flags, each with its own rule (country in [DE, FR] and appVersion > 2.0.0) and a 30 % rollout. */
function importedProject(slug, count) {
  const files = [
    {
      path: layout.projectFile(slug),
      content: serializeRepositoryFile({ kind: 'project', value: { id: `prj_${slug}`, name: slug, slug } }),
    },
  ];
  for (const env of ['dev', 'staging', 'prod']) {
    files.push({ path: layout.killsFile(slug, env), content: serializeRepositoryFile({ kind: 'kills', value: { kills: {} } }) });
  }
  for (let i = 0; i < count; i++) {
    const key = `checkout-step-${i}`;
    files.push({
      path: layout.flagFile(slug, key),
      content: serializeRepositoryFile({ kind: 'flag', value: { id: `flg_${slug}_${i}`, key, kind: 'boolean', archivedAt: null } }),
    });
    const config = { ...ruleFlagConfig, rules: [{ ...ruleFlagConfig.rules[0], id: `eu-new-app-${i}` }] };
    for (const env of ['dev', 'staging', 'prod']) {
      files.push({ path: layout.configFile(slug, env, key), content: serializeRepositoryFile({ kind: 'config', value: config }) });
    }
  }
  return files;
}

/** A request over node:http, which neither asks for nor decodes compression: the bytes on the wire, and the time to the last. */
function wire(url, { method = 'GET', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (chunk) => {
        bytes += chunk.length;
      });
      res.on('end', () =>
        resolve({ status: res.statusCode, coding: res.headers['content-encoding'] ?? 'identity', bytes, ms: performance.now() - started }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const kb = (n) => `${(n / 1024).toLocaleString('en', { maximumFractionDigits: 1 })} KB`;
const ratio = (identity, n) => `${(identity / n).toFixed(0)}×`;
const ms = (n) => n.toFixed(1);

/** zlib's async compression at a setting, or (`stored`) the server's own call for a version's stored bytes. */
function compressor(coding, options) {
  if (options.stored) return (input) => compress(input, coding, 'stored');
  if (coding === 'gzip') return (input) => promisify(zlib.gzip)(input, { level: options.level });
  return (input) =>
    promisify(zlib.brotliCompress)(input, {
      params: {
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_QUALITY]: options.quality,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: input.length,
      },
    });
}

async function timeCompress(input, run) {
  const samples = [];
  let size = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    size = (await run(input)).length;
    samples.push(performance.now() - started);
  }
  return { size, ...summarize(samples) };
}

const bytesRows = [];
const levelRows = [];
const firstRows = [];
for (const flags of SIZES) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-bytes-'));
  const service = await startService(
    {
      dataDir,
      host: '127.0.0.1',
      controlPort: 0,
      evalPort: 0,
      bootstrapKeys: [{ org: 'bench', key: ADMIN }],
      planProjectLimit: 25,
      logLevel: 'error',
    },
    silentLogger,
  );
  const repo = await service.repos.get('bench');
  await repo.update(() => ({
    changes: importedProject('big', flags),
    meta: { action: 'change', summary: 'import', actor: benchActor },
    result: null,
  }));
  await service.holder.served('bench');
  const { key } = await service.keys.createKey('bench', { kind: 'sdk', projectId: 'prj_big', environment: 'prod' });
  const sdk = { authorization: `Bearer ${key}` };

  const answers = {
    'GET /v1/snapshot': (accept) => wire(`${service.evalUrl}/v1/snapshot`, { headers: { ...sdk, ...accept } }),
    'POST /ofrep/v1/evaluate/flags': (accept) =>
      wire(`${service.evalUrl}/ofrep/v1/evaluate/flags`, {
        method: 'POST',
        headers: { ...sdk, 'content-type': 'application/json', ...accept },
        body: JSON.stringify({ context: { targetingKey: 'user-42', country: 'DE', appVersion: '2.3.1' } }),
      }),
    'replica feed view': (accept) =>
      wire(`${service.controlUrl}/api/v1/replica/snapshots/prj_big/prod`, { headers: { authorization: `Bearer ${ADMIN}`, ...accept } }),
  };
  for (const [name, get] of Object.entries(answers)) {
    const identity = await get({});
    const gzip = await get({ 'accept-encoding': 'gzip' });
    const br = await get({ 'accept-encoding': 'br' });
    if (gzip.coding !== 'gzip' || br.coding !== 'br') throw new Error(`${name} was not compressed: ${gzip.coding}, ${br.coding}`);
    bytesRows.push(
      `| ${flags.toLocaleString('en')} | ${name} | ${identity.bytes.toLocaleString('en')} | ${gzip.bytes.toLocaleString('en')} (${kb(gzip.bytes)}, ${ratio(identity.bytes, gzip.bytes)}) | ${br.bytes.toLocaleString('en')} (${kb(br.bytes)}, ${ratio(identity.bytes, br.bytes)}) |`,
    );
  }

  // One version's snapshot, compressed as the server stores it and at other settings.
  const json = Buffer.from(service.holder.view('bench', 'prj_big', 'prod').snapshotJson());
  const settings = [
    ['gzip', { level: 1 }, 'gzip level 1'],
    ['gzip', { stored: true }, 'gzip level 6 (what the server stores)'],
    ['gzip', { level: 9 }, 'gzip level 9'],
    ['br', { quality: 1 }, 'br quality 1'],
    ['br', { quality: 4 }, 'br quality 4'],
    ['br', { stored: true }, 'br quality 5 (what the server stores)'],
    ['br', { quality: 7 }, 'br quality 7'],
  ];
  for (const [coding, options, setting] of settings) {
    const r = await timeCompress(json, compressor(coding, options));
    levelRows.push(`| ${flags.toLocaleString('en')} | ${setting} | ${r.size.toLocaleString('en')} | ${ms(r.p50)} | ${ms(r.max)} |`);
  }

  // A new version: its first compressed answer compresses it, the next ones send the stored bytes.
  for (const coding of ['gzip', 'br']) {
    const first = [];
    const next = [];
    for (let round = 0; round < 5; round++) {
      const config = { ...ruleFlagConfig, rolloutPct: 31 + round + (coding === 'br' ? 10 : 0) };
      await repo.update(() => ({
        changes: [
          {
            path: layout.configFile('big', 'prod', 'checkout-step-0'),
            content: serializeRepositoryFile({ kind: 'config', value: config }),
          },
        ],
        meta: { action: 'config_update', summary: 'one flag', actor: benchActor },
        result: null,
      }));
      await service.holder.served('bench');
      first.push((await answers['GET /v1/snapshot']({ 'accept-encoding': coding })).ms);
      for (let i = 0; i < 3; i++) next.push((await answers['GET /v1/snapshot']({ 'accept-encoding': coding })).ms);
    }
    const identityMs = [];
    for (let i = 0; i < 10; i++) identityMs.push((await answers['GET /v1/snapshot']({})).ms);
    firstRows.push(
      `| ${flags.toLocaleString('en')} | ${coding} | ${ms(summarize(first).p50)} | ${ms(summarize(next).p50)} | ${ms(summarize(identityMs).p50)} |`,
    );
  }
  await service.stop();
  await rm(dataDir, { recursive: true, force: true });
}

console.log(`\nSnapshot-shaped answers on the wire, by Accept-Encoding; ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`);
console.log('| flags | answer | identity bytes | gzip | br |\n|---:|---|---:|---:|---:|');
for (const row of bytesRows) console.log(row);
console.log(`\nCompressing one version of the snapshot (async zlib, on the thread pool), ${ROUNDS} rounds each\n`);
console.log('| flags | setting | bytes | p50 ms | max ms |\n|---:|---|---:|---:|---:|');
for (const row of levelRows) console.log(row);
console.log(
  '\nGET /v1/snapshot over loopback, one request at a time, p50 ms: the first answer of a new version (serializes and compresses it), the next ones (the stored bytes), and identity (the text already made)\n',
);
console.log('| flags | encoding | first answer | next answers | identity |\n|---:|---|---:|---:|---:|');
for (const row of firstRows) console.log(row);
