import type { EnvironmentName, Snapshot } from '@flagops/core';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { checkoutFlag, killRequest, type SdkHarness, setConfig, shopFlags } from '../sdk/sdk-harness.js';
import { commitFiles, type FlagSpec, ORG, projectFiles } from './harness.js';

/** The shop's flags and a segment `beta`, named by a rule of `beta-feature`. */
export const sequenceFlags: FlagSpec[] = [
  ...shopFlags,
  {
    key: 'beta-feature',
    rules: [{ id: 'beta', serve: 'on', conditions: [{ op: 'in_segment', value: 'beta' }] }],
    rolloutPct: 0,
  },
];

export function segmentFiles(slug: string, userIds: string[], country?: string, key = 'beta') {
  const value = { key, version: 1, userIds, conditions: country ? [{ attribute: 'country', op: 'eq' as const, value: country }] : [] };
  return [{ path: layout.segmentFile(slug, key), content: serializeRepositoryFile({ kind: 'segment', value }) }];
}

/** The files of one flag (its definition and its config in every environment). */
function flagFiles(slug: string, spec: FlagSpec) {
  return projectFiles(slug, [spec]).filter((f) => f.path.includes(`/${spec.key}.yaml`));
}

export interface SequenceStep {
  name: string;
  run(h: SdkHarness): Promise<unknown>;
}

/**
 * One of each change a snapshot can see, in an order where each builds on the last: a flag changed, added,
 * deleted, killed, changed while killed, its kill cleared, a segment changed, one added and removed, and several
 * flags at once. Each step returns once the service serves it.
 */
export function changeSequence(env: EnvironmentName = 'prod', slug = 'shop'): SequenceStep[] {
  const served = (h: SdkHarness) => h.service.holder.served(ORG);
  return [
    { name: 'a flag changed', run: (h) => setConfig(h, checkoutFlag.key, { rolloutPct: 55, rules: checkoutFlag.rules }, env, slug) },
    {
      name: 'a flag added',
      run: async (h) => {
        await commitFiles(h.repo, flagFiles(slug, { key: 'fresh', kind: 'string', valueOn: 'new', valueOff: 'old', rolloutPct: 40 }));
        await served(h);
      },
    },
    {
      name: 'a flag deleted',
      run: async (h) => {
        await commitFiles(
          h.repo,
          flagFiles(slug, { key: 'max-items' }).map((f) => ({ path: f.path, content: null })),
        );
        await served(h);
      },
    },
    { name: 'a flag killed', run: (h) => h.kills.kill({ ...killRequest(h, 'banner-text', env), projectSlug: slug }) },
    {
      name: 'a killed flag changed',
      run: (h) => setConfig(h, 'banner-text', { valueOn: 'Summer sale', valueOff: 'Hi', rolloutPct: 50 }, env, slug),
    },
    { name: 'a kill cleared', run: (h) => h.kills.clear({ ...killRequest(h, 'banner-text', env), projectSlug: slug }) },
    {
      name: 'a segment changed',
      run: async (h) => {
        await commitFiles(h.repo, segmentFiles(slug, ['ana', 'ben'], 'DE'));
        await served(h);
      },
    },
    {
      name: 'a segment added',
      run: async (h) => {
        await commitFiles(h.repo, segmentFiles(slug, ['cleo'], undefined, 'gamma'));
        await served(h);
      },
    },
    {
      name: 'a segment removed',
      run: async (h) => {
        await commitFiles(h.repo, [{ path: layout.segmentFile(slug, 'gamma'), content: null }]);
        await served(h);
      },
    },
    {
      name: 'several flags at once',
      run: async (h) => {
        const specs: FlagSpec[] = [
          { key: 'dark-mode', enabled: true, rolloutPct: 25 },
          { key: 'theme', kind: 'json', valueOn: { color: 'red' }, valueOff: { color: 'blue' }, enabled: false },
        ];
        await commitFiles(h.repo, [...specs.flatMap((s) => flagFiles(slug, s))]);
        await served(h);
      },
    },
  ];
}

/** The files of the sequence's project: the shop's flags, `beta-feature` and its segment (one commit). */
export function sequenceProjectFiles(slug = 'shop') {
  return [...segmentFiles(slug, ['ana']), ...projectFiles(slug, sequenceFlags)];
}

/** A delta (or patch) applied to a snapshot, as a client applies it: null removes the key. */
export function applyDelta(
  snapshot: Snapshot,
  delta: { version: number; flags: Record<string, unknown>; segments: Record<string, unknown> },
): Snapshot {
  const flags = { ...snapshot.flags } as Record<string, unknown>;
  const segments = { ...(snapshot.segments ?? {}) } as Record<string, unknown>;
  for (const [key, entry] of Object.entries(delta.flags))
    if (entry === null) delete flags[key];
    else flags[key] = entry;
  for (const [key, entry] of Object.entries(delta.segments))
    if (entry === null) delete segments[key];
    else segments[key] = entry;
  return { ...snapshot, version: delta.version, flags, segments } as Snapshot;
}
