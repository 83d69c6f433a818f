#!/usr/bin/env node
import { mkdtemp, rm } from 'node:fs/promises';
// What one change to one flag costs each SDK in bytes, at 1,000 and 10,000 flags (BENCH_SIZES), each flag
// with a two-condition rule and a 30 % rollout (the flag of the evaluation benchmarks): the stream's version
// event with its patch, and a poll's delta (GET /v1/snapshot?since=, If-None-Match), against what a change
// cost before deltas (the version event alone, then the whole snapshot: measured in the same run). Bytes on the
// wire, HTTP headers and chunk framing included, counted on the client's socket; for a config change (one
// commit) and a kill. Then a local-mode SDK per way of following (stream, polling every 100 ms): the bytes its
// fetch read and the requests it made from the change until it served the new version.
//   npm run build && npm run bench -- snapshot-deltas
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { benchActor, ruleFlagConfig } from './lib/seed.mjs';

const dist = path.resolve(process.env.FLAGOPS_DIST ?? 'dist');
const load = (module) => import(pathToFileURL(path.join(dist, module)).href);
const SIZES = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const ORG = 'bench';

const { startService } = await load('service.js');
const { silentLogger } = await load('foundations/log/logger.js');
const { KillSwitch } = await load('features/kill/kill-switch.js');
const { layout } = await load('foundations/repository/layout.js');
const { serializeRepositoryFile } = await load('foundations/repository/serialize-file.js');
const { EnvironmentView } = await load('apps/eval-server/environment-view.js');
const { diffViews, patchJson } = await load('apps/eval-server/snapshot-patch.js');
const { createClient } = await import('@flagops/sdk');

/** A project of `count` flags, every one with the rule and the 30 % rollout of ruleFlagConfig. */
function ruleFlags(slug, count) {
  const files = [
    {
      path: layout.projectFile(slug),
      content: serializeRepositoryFile({ kind: 'project', value: { id: `prj_${slug}`, name: slug, slug } }),
    },
  ];
  for (const env of ['dev', 'staging', 'prod'])
    files.push({ path: layout.killsFile(slug, env), content: serializeRepositoryFile({ kind: 'kills', value: { kills: {} } }) });
  const config = serializeRepositoryFile({ kind: 'config', value: ruleFlagConfig });
  for (let i = 0; i < count; i++) {
    const key = `flag-${i}`;
    const flag = { id: `flg_${slug}_${i}`, key, kind: 'boolean', archivedAt: null };
    files.push({ path: layout.flagFile(slug, key), content: serializeRepositoryFile({ kind: 'flag', value: flag }) });
    for (const env of ['dev', 'staging', 'prod']) files.push({ path: layout.configFile(slug, env, key), content: config });
  }
  return files;
}

/** A GET on a connection of its own: status, body and every byte the socket read (headers included). */
function wireGet(url, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks), wire: req.socket.bytesRead }));
    });
    req.on('error', reject);
  });
}

/** GET /v1/stream, counting the bytes its socket reads; `until(version)` resolves with the bytes read since `mark()`. */
function openStream(url, headers) {
  return new Promise((resolve, reject) => {
    let text = '';
    let marked = 0;
    const waiters = [];
    const wire = () => req.socket?.bytesRead ?? 0;
    const req = http.get(url, { headers, agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        text += chunk;
        for (const w of [...waiters]) w();
      });
      resolve({
        text: () => text,
        mark: () => {
          marked = wire();
        },
        until: (version) =>
          new Promise((done) => {
            const check = () => {
              if (!text.includes(`"version":${version}`)) return;
              waiters.splice(waiters.indexOf(check), 1);
              // The socket's data arrives before the response's: the bytes of this event are counted already.
              done(wire() - marked);
            };
            waiters.push(check);
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on('error', (err) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

/**
 * What the server spends finding a change (diffViews and patchJson, in the holder's swap), in CPU ms: between
 * two views whose entries are all new objects (every entry of both compared by value, each serialized once)
 * and between two that share their unchanged entries (compared by reference). Median of `runs`.
 */
function diffCost(before, after, runs = 7) {
  const copy = (view) =>
    EnvironmentView.build(
      view.org,
      view.projectId,
      view.projectSlug,
      view.environment,
      structuredClone(view.flags),
      view.kills,
      view.version,
      null,
      structuredClone(view.segments),
    );
  const median = (f) => {
    const times = [];
    for (let i = 0; i < runs; i++) times.push(f());
    return times.sort((a, b) => a - b)[Math.floor(runs / 2)];
  };
  // CPU time, not wall time: other processes on a busy machine stretch the latter.
  const timed = (a, b) => {
    const started = process.cpuUsage();
    patchJson(b, diffViews(a, b));
    const { user, system } = process.cpuUsage(started);
    return (user + system) / 1000;
  };
  const rebuilt = median(() => timed(copy(before), copy(after)));
  const shared = median(() => {
    const a = copy(before);
    const flags = { ...a.flags, 'flag-7': after.flags['flag-7'] };
    const b = EnvironmentView.build(a.org, a.projectId, a.projectSlug, a.environment, flags, a.kills, a.version + 1, null, a.segments);
    return timed(a, b);
  });
  return { rebuilt, shared };
}

/** A fetch that counts the body bytes it reads and the requests it makes. */
function countingFetch() {
  const counted = { bytes: 0, requests: 0 };
  const counting = async (input, init) => {
    counted.requests++;
    const res = await fetch(input, init);
    if (res.body === null) return res;
    const body = res.body.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          counted.bytes += chunk.byteLength;
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  return { fetch: counting, counted };
}

async function waitFor(check, what, ms = 60_000) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function measure(count) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'flagops-bench-deltas-'));
  const service = await startService(
    {
      dataDir,
      host: '127.0.0.1',
      controlPort: 0,
      evalPort: 0,
      bootstrapKeys: [{ org: ORG, key: 'svc_adm_benchbenchbenchbench00000001' }],
      planProjectLimit: 25,
      logLevel: 'error',
    },
    silentLogger,
  );
  const clients = [];
  try {
    const repo = await service.repos.get(ORG);
    await repo.update(() => ({
      changes: ruleFlags('big', count),
      meta: { action: 'change', summary: 'seed', actor: benchActor },
      result: null,
    }));
    await service.holder.served(ORG);
    const { key } = await service.keys.createKey(ORG, { kind: 'sdk', projectId: 'prj_big', environment: 'prod' });
    const auth = { authorization: `Bearer ${key}`, 'accept-encoding': 'identity' };
    const snapshotUrl = `${service.evalUrl}/v1/snapshot`;
    const version = () => service.holder.view(ORG, 'prj_big', 'prod').version;

    // The SDKs follow every change below; their counters start at each change.
    const streaming = countingFetch();
    const polling = countingFetch();
    for (const [counting, stream, pollIntervalMs] of [
      [streaming, true, 3_600_000],
      [polling, false, 100],
    ]) {
      const client = createClient({
        evalUrl: service.evalUrl,
        sdkKey: key,
        stream,
        pollIntervalMs,
        sendCounts: false,
        fetch: counting.fetch,
      });
      clients.push(client);
      await client.ready(30_000);
    }
    const stream = await openStream(`${service.evalUrl}/v1/stream`, auth);
    await waitFor(() => stream.text().includes(`"version":${version()}`), 'the first stream event');
    const full = await wireGet(snapshotUrl, auth);

    const kills = new KillSwitch(service.holder);
    const changes = [
      [
        'config change',
        () => {
          const value = { ...ruleFlagConfig, rolloutPct: 45, version: 2 };
          return repo.update(() => ({
            changes: [{ path: layout.configFile('big', 'prod', 'flag-7'), content: serializeRepositoryFile({ kind: 'config', value }) }],
            meta: { action: 'config_update', summary: 'bench', actor: benchActor, project: 'big', flag: 'flag-7', environment: 'prod' },
            result: null,
          }));
        },
      ],
      ['kill', () => kills.kill({ org: ORG, repo, projectSlug: 'big', flagKey: 'flag-7', environment: 'prod', actor: benchActor })],
    ];
    const rows = [];
    let cost;
    for (const [name, change] of changes) {
      const beforeView = service.holder.view(ORG, 'prj_big', 'prod');
      const before = version();
      stream.mark();
      for (const c of [streaming, polling]) Object.assign(c.counted, { bytes: 0, requests: 0 });
      await change();
      await service.holder.served(ORG);
      const after = version();
      const event = await stream.until(after);
      const delta = await wireGet(`${snapshotUrl}?since=${before}`, { ...auth, 'if-none-match': `"v${before}"` });
      if (!JSON.parse(delta.body).since) throw new Error('the delta answer is a full snapshot');
      await waitFor(() => clients.every((c) => c.version === after), 'the SDKs');
      cost ??= diffCost(beforeView, service.holder.view(ORG, 'prj_big', 'prod'));
      rows.push({
        name,
        event,
        delta: delta.wire,
        sdkStream: { ...streaming.counted },
        sdkPoll: { ...polling.counted },
      });
    }
    stream.close();
    const plainEvent = Buffer.byteLength(`id: ${version()}\nevent: version\ndata: {"version":${version()}}\n\n`) + 8; // + chunk framing
    return { count, cost, full: full.wire, fullBody: full.body.length, gzip: gzipSync(full.body).length, plainEvent, rows };
  } finally {
    await Promise.all(clients.map((c) => c.close()));
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const fmt = (n) => n.toLocaleString('en');
const results = [];
for (const count of SIZES) results.push(await measure(count));
console.log(
  `\nBytes per SDK for one change to one flag (on the wire: headers and chunk framing included); ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}\n`,
);
console.log(`| | ${results.map((r) => `${fmt(r.count)} flags`).join(' | ')} |`);
console.log(`|---|${results.map(() => '---:').join('|')}|`);
const row = (name, f) => console.log(`| ${name} | ${results.map((r) => f(r)).join(' | ')} |`);
row('full snapshot, identity (body)', (r) => fmt(r.fullBody));
row('full snapshot, gzip -6 of that body (for scale)', (r) => fmt(r.gzip));
row('before deltas: version event + full snapshot', (r) => fmt(r.plainEvent + r.full));
row(
  'server: finding a config change, CPU ms, entries all new / shared (median of 7)',
  (r) => `${r.cost.rebuilt.toFixed(1)} / ${r.cost.shared.toFixed(1)}`,
);
for (const name of ['config change', 'kill']) {
  const of = (r) => r.rows.find((x) => x.name === name);
  row(`${name}: stream event with its patch`, (r) => fmt(of(r).event));
  row(`${name}: poll, delta answer (?since=)`, (r) => fmt(of(r).delta));
  row(`${name}: SDK on the stream, body bytes read / requests`, (r) => `${fmt(of(r).sdkStream.bytes)} / ${of(r).sdkStream.requests}`);
  row(`${name}: SDK polling every 100 ms, body bytes read / requests`, (r) => `${fmt(of(r).sdkPoll.bytes)} / ${of(r).sdkPoll.requests}`);
}
