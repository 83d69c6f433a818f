/**
 * The service with a project whose flags use every part of evaluation (rules with each operator, segments,
 * prerequisites, variants, a kill, disabled and archived flags), for checking the Go and Python SDKs against it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EvaluationContext } from '@flagops/core';
import { KillSwitch } from '../../src/features/kill/kill-switch.js';
import { layout } from '../../src/foundations/repository/layout.js';
import { serializeRepositoryFile } from '../../src/foundations/repository/serialize-file.js';
import { commitFiles, type EvalHarness, type FlagSpec, ORG, projectFiles, sdkKey } from '../eval-server/harness.js';
import { seeded } from '../evaluation/support.js';
import { checkoutFlag, killRequest, type SdkHarness, startServiceHarness } from '../sdk/sdk-harness.js';

export const SLUG = 'shop';

const segments = {
  beta: { userIds: ['user-1', 'user-7', 'user-13', 'user-42', 'ユーザー-3'], conditions: [] },
  adults: {
    userIds: [],
    conditions: [
      { attribute: 'age', op: 'gte', value: 18 },
      { attribute: 'country', op: 'neq', value: 'US' },
    ],
  },
};

export const crossCheckFlags: FlagSpec[] = [
  checkoutFlag,
  {
    key: 'targeting',
    rolloutPct: 30,
    rules: [
      {
        id: 'eu-new',
        serve: 'on',
        conditions: [
          { attribute: 'country', op: 'in', value: ['DE', 'FR'] },
          { attribute: 'appVersion', op: 'semver_gt', value: '2.0.0' },
        ],
      },
      { id: 'pro-half', serve: 'off', rolloutPct: 50, conditions: [{ attribute: 'plan', op: 'eq', value: 'pro' }] },
    ],
  },
  {
    key: 'segmented',
    rolloutPct: 0,
    rules: [
      { id: 'beta', serve: 'on', conditions: [{ op: 'in_segment', value: 'beta' }] },
      { id: 'adults', serve: 'on', rolloutPct: 60, conditions: [{ op: 'in_segment', value: 'adults' }] },
      {
        id: 'low-score',
        serve: 'off',
        conditions: [
          { op: 'not_in_segment', value: 'beta' },
          { attribute: 'score', op: 'lt', value: 10 },
        ],
      },
    ],
  },
  {
    key: 'experiment',
    kind: 'string',
    valueOn: 'control',
    valueOff: 'none',
    rolloutPct: 80,
    variants: [
      { name: 'a', value: 'red', weight: 25 },
      { name: 'b', value: 'green', weight: 25.5 },
      { name: 'c', value: 'blue', weight: 49.5 },
    ],
    rules: [
      { id: 'us', serve: 'b', conditions: [{ attribute: 'country', op: 'eq', value: 'US' }] },
      { id: 'vip', serve: 'on', conditions: [{ attribute: 'tags', op: 'contains', value: 'vip' }] },
    ],
  },
  { key: 'gated', rolloutPct: 50, prerequisites: [{ flag: 'targeting', variation: 'on' }] },
  {
    key: 'gated-variant',
    kind: 'number',
    valueOn: 5,
    valueOff: 1.5,
    rolloutPct: 100,
    prerequisites: [{ flag: 'experiment', variation: 'a' }],
    rules: [
      { id: 'high', serve: 'on', conditions: [{ attribute: 'score', op: 'gt', value: 50 }] },
      { id: 'low', serve: 'off', conditions: [{ attribute: 'score', op: 'lte', value: 10 }] },
    ],
  },
  {
    key: 'chain',
    rolloutPct: 100,
    prerequisites: [
      { flag: 'gated', variation: 'on' },
      { flag: 'segmented', variation: 'on' },
    ],
  },
  {
    key: 'operators',
    kind: 'string',
    valueOn: 'on',
    valueOff: 'off',
    rolloutPct: 40,
    rules: [
      { id: 'acme', serve: 'on', conditions: [{ attribute: 'email', op: 'contains', value: '@acme' }] },
      { id: 'listed', serve: 'on', conditions: [{ attribute: 'userId', op: 'in', value: ['user-2', 'user-3', 'user-5'] }] },
      { id: 'old-app', serve: 'off', conditions: [{ attribute: 'appVersion', op: 'semver_lt', value: '1.5.0' }] },
      { id: 'exact-app', serve: 'on', conditions: [{ attribute: 'appVersion', op: 'semver_eq', value: '2.0.0' }] },
      { id: 'score', serve: 'on', rolloutPct: 70, conditions: [{ attribute: 'score', op: 'gte', value: 42.5 }] },
      { id: 'paying', serve: 'on', conditions: [{ attribute: 'plan', op: 'not_in', value: ['free'] }] },
      { id: 'beta-attr', serve: 'off', conditions: [{ attribute: 'beta', op: 'eq', value: true }] },
      { id: 'not-de', serve: 'on', rolloutPct: 20, conditions: [{ attribute: 'country', op: 'neq', value: 'DE' }] },
    ],
  },
  { key: 'killed-flag', rolloutPct: 100 },
  { key: 'after-kill', rolloutPct: 100, prerequisites: [{ flag: 'killed-flag', variation: 'off' }] },
  { key: 'disabled-flag', enabled: false },
  { key: 'archived-flag', kind: 'string', valueOn: 'new', valueOff: 'old', defaultValue: 'legacy', archivedAt: '2026-01-01T00:00:00.000Z' },
  { key: 'json-flag', kind: 'json', valueOn: { limits: [1, 2], dense: true }, valueOff: { limits: [] }, rolloutPct: 50 },
];

export const crossCheckKeys = [...crossCheckFlags.map((f) => f.key), 'no-such-flag'];

/** The service serving project shop with the flags above, `killed-flag` killed in prod, and an SDK key for prod. */
export async function startCrossCheckService(): Promise<SdkHarness> {
  const h: EvalHarness = await startServiceHarness();
  const segmentFiles = Object.entries(segments).map(([key, s]) => ({
    path: layout.segmentFile(SLUG, key),
    content: serializeRepositoryFile({ kind: 'segment', value: { key, version: 1, ...s } as never }),
  }));
  await commitFiles(h.repo, [...projectFiles(SLUG, crossCheckFlags), ...segmentFiles], 'the cross-check project');
  await h.service.holder.served(ORG);
  const key = await sdkKey(h, SLUG, 'prod');
  const sdk = Object.assign(h, { key, kills: new KillSwitch(h.service.holder) });
  await sdk.kills.kill(killRequest(sdk, 'killed-flag'));
  return sdk;
}

/** `n` random contexts from a fixed seed: ids and attributes of every type, present or missing. */
export function randomContexts(n: number, seed: number): EvaluationContext[] {
  const random = seeded(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
  const attributes: Record<string, readonly unknown[]> = {
    country: ['DE', 'FR', 'US', 'GB', 'de'],
    appVersion: ['1.0.0', '1.4.9', '2.0.0', '2.0.1', '2.1.0-beta.1', '10.0.0', 'v2.0.0', '2.0', 3, '2.0.0+build.7'],
    plan: ['pro', 'free', 'team', true, null],
    age: [17, 18, 30, 18.5, '18', -1],
    score: [0, 9.99, 10, 10.5, 42.5, 50, 51, 1000, '51'],
    tags: [['vip'], ['a', 'vip'], 'vip-list', ['x'], [1], []],
    email: ['a@acme.com', 'b@example.org', 5],
    beta: [true, false, 'true', 1],
    userId: ['user-1', 'user-2', 7],
  };
  const contexts: EvaluationContext[] = [];
  for (let i = 0; i < n; i++) {
    const context: EvaluationContext = {};
    const r = random();
    if (r < 0.7) context.userId = `user-${Math.floor(random() * 300)}`;
    else if (r < 0.75) context.userId = '';
    else if (r < 0.8) context.userId = pick(['ユーザー-3', 'é-1', '😀']);
    if (random() < 0.9) {
      const attrs: Record<string, unknown> = {};
      for (const [name, values] of Object.entries(attributes)) if (random() < (name === 'userId' ? 0.1 : 0.6)) attrs[name] = pick(values);
      context.attributes = attrs;
    }
    contexts.push(context);
  }
  return contexts;
}

/** POST /v1/evaluate of every key for each context, a few requests at a time: what the server answers. */
export async function serverResults(h: SdkHarness, keys: string[], contexts: EvaluationContext[]): Promise<unknown[]> {
  const out: unknown[] = new Array(contexts.length);
  let next = 0;
  const worker = async () => {
    while (next < contexts.length) {
      const i = next++;
      const res = await fetch(`${h.service.evalUrl}/v1/evaluate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ keys, context: contexts[i] }),
      });
      if (res.status !== 200) throw new Error(`POST /v1/evaluate answered ${res.status}: ${await res.text()}`);
      out[i] = await res.json();
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return out;
}

/** A temporary directory, removed by the returned function. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}
