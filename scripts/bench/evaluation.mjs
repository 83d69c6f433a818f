#!/usr/bin/env node
// Evaluation core vs peers, in process, on the same flag: a rule (country in [DE, FR] AND
// appVersion semver_gt 2.0.0) applied to 30% of the matching users, everyone else off.
// 100,000 distinct pre-generated users; each library gets the contexts in its own shape, so no
// conversion is timed, and parsed from JSON, as a server receives them (flat strings rather than
// the concatenated "cons" strings a template literal makes, which are slower to read char by char).
// Prints ns per evaluation (median of ROUNDS, after warm-up; wall and process CPU time) and each
// library's on-fraction, and exits 1 if any library's decisions are wrong (so the comparison is
// of real work). Nothing leaves the process: LaunchDarkly runs on TestData with events off,
// Unleash on bootstrap data with polling off.
//
//   node scripts/bench/evaluation.mjs [module] [--also <label>=<module> ...]
//   (default packages/core/dist/index.js, the built @flagops/core: `npm run build`; or pass another build of
//   the core, e.g. `npx esbuild packages/core/src/index.ts --bundle --format=esm --outfile=.bench-tmp/evaluation.mjs`).
//   --also times another build of the core in the same process, interleaved with the others, e.g. an older
//   commit's (`--also 71a001f=../before/dist/evaluation/index.js`): a same-run ratio, which separate
//   processes on a shared machine do not give.
import { existsSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import * as ld from '@launchdarkly/node-server-sdk';
import { FlagdCore } from '@openfeature/flagd-core';
import { InMemStorageProvider, Unleash } from 'unleash-client';

const USERS = 100_000;
// A young-generation collection before each timed run, so no library pays for the garbage the previous
// one left (a full one would leave background sweeping running into the next measurement).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc');
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const FLAG = 'new-checkout';

const args = process.argv.slice(2);
const others = [];
for (let i = args.indexOf('--also'); i !== -1; i = args.indexOf('--also')) {
  const [label, file] = (args.splice(i, 2)[1] ?? '').split('=');
  if (!label || !file) {
    console.error('--also takes <label>=<module>');
    process.exit(2);
  }
  others.push({ label, path: resolve(file) });
}
const modulePath = resolve(args[0] ?? 'packages/core/dist/index.js');
for (const file of [modulePath, ...others.map((o) => o.path)]) {
  if (!existsSync(file)) {
    console.error(`${file} not found: run \`npm run build\` first, or pass a bundled module path`);
    process.exit(2);
  }
}
const { compileEnvironment } = await import(pathToFileURL(modulePath).href);
for (const other of others) other.compileEnvironment = (await import(pathToFileURL(other.path).href)).compileEnvironment;

// ---- Users: a fixed pseudo-random mix, so every run times the same work. ----
const COUNTRIES = ['DE', 'FR', 'US', 'GB', 'IT'];
const VERSIONS = ['1.9.0', '2.0.0', '2.0.1', '2.1.0', '2.0.0-rc.1', '3.0.0-beta.1', '3.2.5', '10.0.0'];
const NEWER = new Set(['2.0.1', '2.1.0', '3.0.0-beta.1', '3.2.5', '10.0.0']); // > 2.0.0, by hand
let seed = 42;
const random = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
  return seed / 2 ** 32;
};
const users = Array.from({ length: USERS }, (_, i) => ({
  id: `user-${i}-${Math.floor(random() * 1e9).toString(36)}`,
  country: COUNTRIES[Math.floor(random() * COUNTRIES.length)],
  appVersion: VERSIONS[Math.floor(random() * VERSIONS.length)],
}));
/** Contexts as they arrive in a request body. */
const fromJson = (contexts) => JSON.parse(JSON.stringify(contexts));
const matches = users.map((u) => (u.country === 'DE' || u.country === 'FR') && NEWER.has(u.appVersion));

// ---- The same flag in each library's format. ----
const flagConfig = {
  [FLAG]: {
    enabled: true,
    rolloutPct: 0,
    valueOn: true,
    valueOff: false,
    killed: false,
    archived: false,
    defaultValue: false,
    rules: [
      {
        id: 'eu-new',
        serve: 'on',
        rolloutPct: 30,
        conditions: [
          { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
          { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
        ],
      },
    ],
  },
};
const ours = compileEnvironment(flagConfig);
for (const other of others) other.compiled = other.compileEnvironment(flagConfig);
const ourContexts = fromJson(users.map((u) => ({ userId: u.id, attributes: { country: u.country, appVersion: u.appVersion } })));
const noKills = new Set();

const flagd = new FlagdCore();
flagd.setConfigurations(
  JSON.stringify({
    flags: {
      [FLAG]: {
        state: 'ENABLED',
        variants: { on: true, off: false },
        defaultVariant: 'off',
        targeting: {
          if: [
            { and: [{ in: [{ var: 'country' }, ['DE', 'FR']] }, { sem_ver: [{ var: 'appVersion' }, '>', '2.0.0'] }] },
            {
              fractional: [
                ['on', 30],
                ['off', 70],
              ],
            },
            'off',
          ],
        },
      },
    },
  }),
);
const flagdContexts = fromJson(users.map((u) => ({ targetingKey: u.id, country: u.country, appVersion: u.appVersion })));
const silent = { error() {}, warn() {}, info() {}, debug() {} };

const td = new ld.integrations.TestData();
await td.usePreconfiguredFlag({
  key: FLAG,
  version: 1,
  on: true,
  variations: [true, false],
  offVariation: 1,
  fallthrough: { variation: 1 },
  targets: [],
  prerequisites: [],
  salt: FLAG,
  rules: [
    {
      id: 'eu-new',
      clauses: [
        { contextKind: 'user', attribute: 'country', op: 'in', values: ['DE', 'FR'], negate: false },
        { contextKind: 'user', attribute: 'appVersion', op: 'semVerGreaterThan', values: ['2.0.0'], negate: false },
      ],
      rollout: {
        variations: [
          { variation: 0, weight: 30000 },
          { variation: 1, weight: 70000 },
        ],
      },
    },
  ],
});
const ldClient = ld.init('sdk-bench-offline', {
  updateProcessor: td.getFactory(),
  sendEvents: false,
  diagnosticOptOut: true,
  logger: silent,
});
await ldClient.waitForInitialization({ timeout: 5 });
const ldContexts = fromJson(users.map((u) => ({ kind: 'user', key: u.id, country: u.country, appVersion: u.appVersion })));

const unleash = new Unleash({
  appName: 'flagops-bench',
  url: 'http://127.0.0.1:9/api/', // never contacted: refreshInterval 0 disables fetching
  refreshInterval: 0,
  disableMetrics: true,
  skipInstanceCountWarning: true,
  storageProvider: new InMemStorageProvider(),
  bootstrap: {
    data: [
      {
        name: FLAG,
        enabled: true,
        type: 'release',
        project: 'default',
        strategies: [
          {
            name: 'flexibleRollout',
            parameters: { rollout: '30', stickiness: 'userId', groupId: FLAG },
            constraints: [
              { contextName: 'country', operator: 'IN', values: ['DE', 'FR'] },
              { contextName: 'appVersion', operator: 'SEMVER_GT', value: '2.0.0' },
            ],
          },
        ],
      },
    ],
  },
});
unleash.on('error', () => {});
await new Promise((ready) => unleash.once('ready', ready));
const unleashContexts = fromJson(users.map((u) => ({ userId: u.id, properties: { country: u.country, appVersion: u.appVersion } })));

// ---- Each runner evaluates every user once and records the decisions. ----
const on = new Uint8Array(USERS);
const runners = [
  [
    'flagops core (SDK path)',
    () => {
      for (let i = 0; i < USERS; i++) on[i] = ours.evaluate(FLAG, ourContexts[i]).value === true ? 1 : 0;
    },
  ],
  [
    'flagops core (server path, kill overlay)',
    () => {
      for (let i = 0; i < USERS; i++) on[i] = ours.evaluate(FLAG, ourContexts[i], noKills).value === true ? 1 : 0;
    },
  ],
  ...others.map(({ label, compiled }) => [
    `flagops core at ${label} (SDK path)`,
    () => {
      for (let i = 0; i < USERS; i++) on[i] = compiled.evaluate(FLAG, ourContexts[i]).value === true ? 1 : 0;
    },
  ]),
  [
    '@openfeature/flagd-core',
    () => {
      for (let i = 0; i < USERS; i++) on[i] = flagd.resolveBooleanEvaluation(FLAG, false, flagdContexts[i], silent).value ? 1 : 0;
    },
  ],
  [
    '@launchdarkly/node-server-sdk',
    async () => {
      for (let i = 0; i < USERS; i++) on[i] = (await ldClient.variation(FLAG, ldContexts[i], false)) ? 1 : 0;
    },
  ],
  [
    'unleash-client',
    () => {
      for (let i = 0; i < USERS; i++) on[i] = unleash.isEnabled(FLAG, unleashContexts[i]) ? 1 : 0;
    },
  ],
];

function check(name) {
  let matching = 0;
  let onMatching = 0;
  let onOther = 0;
  for (let i = 0; i < USERS; i++) {
    if (matches[i]) {
      matching++;
      onMatching += on[i];
    } else onOther += on[i];
  }
  const fraction = onMatching / matching;
  const ok = onOther === 0 && fraction > 0.28 && fraction < 0.32;
  return { name, fraction, onOther, matching, ok };
}

// Wall time, and process CPU time, which leaves out the time other jobs on a shared machine hold the cores.
const wall = new Map(runners.map(([name]) => [name, []]));
const cpu = new Map(runners.map(([name]) => [name, []]));
const checks = [];
for (const [name, run] of runners) {
  // warm-up, and the correctness check
  for (let w = 0; w < 3; w++) await run();
  checks.push(check(name));
}
for (let r = 0; r < ROUNDS; r++) {
  // interleaved, so a burst of load from other work hits everyone alike
  for (const [name, run] of runners) {
    collectGarbage({ type: 'minor' });
    const cpuStart = process.cpuUsage();
    const start = process.hrtime.bigint();
    await run();
    wall.get(name).push(Number(process.hrtime.bigint() - start) / USERS);
    const used = process.cpuUsage(cpuStart);
    cpu.get(name).push(((used.user + used.system) * 1000) / USERS);
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const oursWall = median(wall.get(runners[0][0]));
const oursCpu = median(cpu.get(runners[0][0]));
console.log(
  `node ${process.version}, ${cpus().length} cpus (${cpus()[0].model}), load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`${USERS} users, ${checks[0].matching} match the rule; median of ${ROUNDS} rounds after 3 warm-up rounds\n`);
console.log('| evaluator | ns/op wall | wall min–max | vs flagops | ns/op CPU | vs flagops | on among matching | on among others |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const c of checks) {
  const w = wall.get(c.name);
  const u = median(cpu.get(c.name));
  console.log(
    `| ${c.name} | ${median(w).toFixed(0)} | ${Math.min(...w).toFixed(0)}–${Math.max(...w).toFixed(0)} | ${(median(w) / oursWall).toFixed(1)}× | ${u.toFixed(0)} | ${(u / oursCpu).toFixed(1)}× | ${(100 * c.fraction).toFixed(2)}% | ${c.onOther} |${c.ok ? '' : ' WRONG'}`,
  );
}
ldClient.close();
unleash.destroy();
if (checks.some((c) => !c.ok)) {
  console.error('\nsome evaluator did not serve ~30% of matching users and none of the others');
  process.exit(1);
}
