// Builds flag files for benchmarks through the compiled repository format (dist/).
import { layout } from '../../../dist/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../../dist/foundations/repository/serialize-file.js';

export const benchActor = { type: 'admin', name: 'bench', keyPrefix: 'svc_adm_benchben' };

/** The admin key of the benchmarks' organisation `bench`. */
export const BENCH_ADMIN_KEY = 'svc_adm_benchbenchbenchbench00000001';

/** The settings a benchmark's in-process service starts with: loopback, free ports, organisation `bench`. */
export function benchServiceConfig(dataDir) {
  return {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'bench', key: BENCH_ADMIN_KEY }],
    planProjectLimit: 25,
    logLevel: 'error',
  };
}

/** The flag of the evaluation benchmarks: country in [DE, FR] and appVersion semver_gt 2.0.0, else a 30% rollout. */
export const ruleFlagConfig = {
  enabled: true,
  rolloutPct: 30,
  valueOn: true,
  valueOff: false,
  version: 1,
  rules: [
    {
      id: 'eu-new-app',
      serve: 'on',
      conditions: [
        { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
        { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
      ],
    },
  ],
};

/** Files of a project `slug` with `count` flags; flag 0 is `ruleFlagConfig`, the others plain rollouts. */
export function projectWithFlags(slug, count, { prefix = 'flag' } = {}) {
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
    const key = `${prefix}-${i}`;
    files.push({
      path: layout.flagFile(slug, key),
      content: serializeRepositoryFile({ kind: 'flag', value: { id: `flg_${slug}_${i}`, key, kind: 'boolean', archivedAt: null } }),
    });
    const config =
      i === 0 ? ruleFlagConfig : { enabled: true, rolloutPct: (i * 7) % 101, valueOn: true, valueOff: false, version: 1, rules: [] };
    for (const env of ['dev', 'staging', 'prod']) {
      files.push({ path: layout.configFile(slug, env, key), content: serializeRepositoryFile({ kind: 'config', value: config }) });
    }
  }
  return files;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] };
}

/**
 * `n` users for ruleFlagConfig, a fixed pseudo-random mix of countries and app versions (a quarter match its
 * rule), parsed from JSON as a request body would be.
 */
export function ruleFlagContexts(n) {
  let seed = 42;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 2 ** 32;
  };
  const countries = ['DE', 'FR', 'US', 'GB', 'IT'];
  const versions = ['1.9.0', '2.0.0', '2.0.1', '2.1.0', '3.2.5', '10.0.0'];
  return JSON.parse(
    JSON.stringify(
      Array.from({ length: n }, (_, i) => ({
        userId: `user-${i}-${Math.floor(random() * 1e9).toString(36)}`,
        attributes: {
          country: countries[Math.floor(random() * countries.length)],
          appVersion: versions[Math.floor(random() * versions.length)],
        },
      })),
    ),
  );
}
