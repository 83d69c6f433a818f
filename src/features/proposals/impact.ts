/**
 * The effective impact of a change: for each environment config that differs between two states of a
 * project, the share of users whose served variation changes, and between which variations.
 *
 * "Users" are contexts that carry a `userId` and no other attribute, with user ids spread evenly over the
 * bucket space: 10,000 rollout buckets (`<flagKey>/<userId>`) times 10,000 variant buckets
 * (`<flagKey>/variant/<userId>`), two independent hashes, so the joint space is their product. For such a
 * context a condition on an attribute other than `userId` never holds (the attribute is missing); `eq`/`in`
 * on `userId` and a segment's `userIds` name finitely many users, a share of zero; `neq`/`not_in` on `userId`
 * hold for all but those; `gt`/`gte`/`lt`/`lte` on `userId` (a string) never hold. What the served variation
 * is then depends only on the two buckets, and the impact is counted exactly over the 10^8 cells of that
 * space (`exact: true`, percentages with two decimals). A brute force over 10,000 user ids measures the same
 * share, within sampling error.
 *
 * The impact is `exact: false` (and `movedPct` null, `moves` empty) when the two configs' rules, the segments
 * those rules use, or their prerequisites differ (who a rule catches then depends on attributes the change
 * does not show), and when a rule's match on a userId-only context depends on the id's text (`contains` or a
 * `semver_*` operator on `userId`). Prerequisites that did not change are counted as the share of users the
 * prerequisite flags pass (computed the same way over their own bucket spaces, which are independent of this
 * flag's). Kills are not config changes: the impact is what the config does once it serves (a killed flag
 * serves `off` either way), and a change of kills alone has no entry. Only flags present on both sides have
 * entries.
 */
import {
  type AttributeCondition,
  type Condition,
  canonicalJson,
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagState,
  type ProjectState,
  type Rule,
} from '@flagops/core';

export interface ImpactMove {
  from: string;
  to: string;
  /** Percent of users, two decimals. */
  pct: number;
}

export interface ImpactEntry {
  environment: EnvironmentName;
  flagKey: string;
  exact: boolean;
  /** Percent of users whose served variation changes; null when not exact. */
  movedPct: number | null;
  moves: ImpactMove[];
}

/** Limit the impact to one flag, one environment, or both. */
export interface ImpactScope {
  flagKey?: string;
  environment?: EnvironmentName;
}

/** Buckets per hash, in hundredths of a percent. */
const SPACE = 10_000;
/** Nesting of prerequisites followed before giving up (cycles are refused when written). */
const MAX_DEPTH = 16;

/**
 * The impact of going from `before` to `after` (one project's state, either side absent for a project that
 * does not exist there): one entry per environment config that differs (ignoring `version`) or whose rules'
 * segments or prerequisite flags changed, ordered by flag key then environment.
 */
export function computeImpact(before: ProjectState | undefined, after: ProjectState | undefined, scope: ImpactScope = {}): ImpactEntry[] {
  if (!before || !after) return [];
  const out: ImpactEntry[] = [];
  const keys = scope.flagKey === undefined ? [...after.flags.keys()].sort() : [scope.flagKey];
  const environments = scope.environment === undefined ? ENVIRONMENTS : [scope.environment];
  for (const key of keys) {
    const old = before.flags.get(key);
    const now = after.flags.get(key);
    if (!old || !now) continue;
    for (const environment of environments) {
      if (!configDiffers(before, after, old, now, environment)) continue;
      out.push(configImpact(before, after, old, now, environment));
    }
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/** The config without its version: a version bump alone changes nothing a user sees. */
function servingFields(config: EnvironmentConfig): unknown {
  const { version: _version, ...rest } = config;
  return rest;
}

function segmentKeysOf(rules: readonly Rule[]): string[] {
  return rules.flatMap((r) => (r.conditions ?? []).filter((c) => c.attribute === undefined).map((c) => String(c.value)));
}

function segmentsSame(before: ProjectState, after: ProjectState, keys: readonly string[]): boolean {
  return keys.every((k) => same(before.segments?.get(k), after.segments?.get(k)));
}

/** A prerequisite flag serves the same on both sides: its config, archived state and kill are unchanged. */
function prerequisiteFlagsSame(before: ProjectState, after: ProjectState, config: EnvironmentConfig, env: EnvironmentName): boolean {
  return (config.prerequisites ?? []).every((p) => {
    const a = before.flags.get(p.flag);
    const b = after.flags.get(p.flag);
    return (
      same(a?.environments[env] && servingFields(a.environments[env]), b?.environments[env] && servingFields(b.environments[env])) &&
      same(a?.meta.archivedAt ?? null, b?.meta.archivedAt ?? null) &&
      same(before.kills[env]?.kills?.[p.flag] ?? null, after.kills[env]?.kills?.[p.flag] ?? null)
    );
  });
}

function configDiffers(before: ProjectState, after: ProjectState, old: FlagState, now: FlagState, env: EnvironmentName): boolean {
  const a = old.environments[env];
  const b = now.environments[env];
  if (!a || !b) return false;
  if (!same(servingFields(a), servingFields(b))) return true;
  if (same(old.meta.archivedAt ?? null, now.meta.archivedAt ?? null) === false) return true;
  if (!segmentsSame(before, after, segmentKeysOf([...a.rules, ...b.rules]))) return true;
  return !prerequisiteFlagsSame(before, after, b, env);
}

function inexact(flagKey: string, environment: EnvironmentName): ImpactEntry {
  return { environment, flagKey, exact: false, movedPct: null, moves: [] };
}

function configImpact(before: ProjectState, after: ProjectState, old: FlagState, now: FlagState, env: EnvironmentName): ImpactEntry {
  const key = now.meta.key;
  const a = old.environments[env];
  const b = now.environments[env];
  const unchangedTargeting =
    same(a.rules, b.rules) &&
    segmentsSame(before, after, segmentKeysOf([...a.rules, ...b.rules])) &&
    same(a.prerequisites ?? [], b.prerequisites ?? []) &&
    prerequisiteFlagsSame(before, after, b, env);
  if (!unchangedTargeting) return inexact(key, env);
  const sideA = userIdOnlyServing(before, old, env);
  const sideB = userIdOnlyServing(after, now, env);
  if (!sideA || !sideB) return inexact(key, env);
  // Prerequisites are the same on both sides: where they fail, both serve off and nothing moves.
  const pass = prerequisitePass(after, b, env, 0);
  if (pass === null) return inexact(key, env);
  const counts = new Map<string, number>();
  let total = 0;
  for (const cell of jointCells(sideA, sideB)) {
    const from = cell.before;
    const to = cell.after;
    if (from === to) continue;
    const weight = cell.size * pass;
    const name = `${from}\u0000${to}`;
    counts.set(name, (counts.get(name) ?? 0) + weight);
    total += weight;
  }
  const moves = [...counts]
    .map(([name, weight]) => {
      const [from, to] = name.split('\u0000');
      return { from, to, pct: percent(weight) };
    })
    .filter((m) => m.pct > 0)
    .sort((x, y) => y.pct - x.pct || x.from.localeCompare(y.from) || x.to.localeCompare(y.to));
  return { environment: env, flagKey: key, exact: true, movedPct: percent(total), moves };
}

/** Cells of the joint space (in units of one cell of 10^8) → percent with two decimals. */
function percent(cells: number): number {
  return Math.round(cells / 10_000) / 100;
}

/**
 * What a config serves a userId-only context, as a function of the rollout bucket: ordered pieces
 * `[from, to)` of the rollout bucket (hundredths) serving `off`, `default`, a variant by name, or `on`
 * (valueOn, or a variant by the variant bucket when the config has variants). Null when a rule's match
 * depends on the user id's text.
 */
interface Serving {
  /** Thresholds in the rollout bucket where what is served may change. */
  cuts: number[];
  serveAt(rolloutBucket: number): string;
  /** Cumulative variant weights in hundredths, or null without variants. */
  variantCuts: Array<{ name: string; upTo: number }> | null;
}

type Match = 'always' | 'never' | 'depends';

function attributeMatch(c: AttributeCondition | Condition): Match {
  if (c.attribute !== 'userId') return 'never';
  switch (c.op) {
    case 'eq':
    case 'in':
      return 'never';
    case 'neq':
    case 'not_in':
      return 'always';
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return 'never';
    default:
      return 'depends';
  }
}

function allOf(matches: readonly Match[]): Match {
  if (matches.includes('never')) return 'never';
  return matches.includes('depends') ? 'depends' : 'always';
}

function segmentMatch(project: ProjectState, key: string): Match {
  const segment = project.segments?.get(key);
  if (!segment || segment.conditions.length === 0) return 'never';
  return allOf(segment.conditions.map(attributeMatch));
}

function ruleMatch(project: ProjectState, rule: Rule): Match {
  return allOf(
    (rule.conditions ?? []).map((c): Match => {
      if (c.op === 'in_segment') return segmentMatch(project, String(c.value));
      if (c.op === 'not_in_segment') {
        const m = segmentMatch(project, String(c.value));
        return m === 'always' ? 'never' : m === 'never' ? 'always' : 'depends';
      }
      return attributeMatch(c);
    }),
  );
}

/** Hundredths of a percent, as the bucket compares: bucket < pct ⇔ rolloutBucket < round(pct × 100). */
function threshold(pct: number | undefined): number {
  return Math.max(0, Math.min(SPACE, Math.round((pct ?? 0) * 100)));
}

function userIdOnlyServing(project: ProjectState, flag: FlagState, env: EnvironmentName): Serving | null {
  const config = flag.environments[env];
  const variantCuts = variantCutsOf(config);
  if (flag.meta.archivedAt) return { cuts: [], serveAt: () => 'default', variantCuts };
  if (!config.enabled) return { cuts: [], serveAt: () => 'off', variantCuts };
  const applying: Array<{ upTo: number; serve: string }> = [];
  for (const rule of config.rules) {
    const match = ruleMatch(project, rule);
    if (match === 'depends') return null;
    if (match === 'never') continue;
    const upTo = rule.rolloutPct === undefined ? SPACE : threshold(rule.rolloutPct);
    applying.push({ upTo, serve: rule.serve });
    if (upTo >= SPACE) break;
  }
  const rollout = threshold(config.rolloutPct);
  const cuts = [...applying.map((r) => r.upTo), rollout];
  return {
    cuts,
    variantCuts,
    serveAt: (r) => {
      for (const rule of applying) if (r < rule.upTo) return rule.serve;
      return r < rollout ? 'on' : 'off';
    },
  };
}

function variantCutsOf(config: EnvironmentConfig): Array<{ name: string; upTo: number }> | null {
  if (!config.variants || config.variants.length === 0) return null;
  let upTo = 0;
  return config.variants.map((v) => {
    upTo += v.weight > 0 ? Math.round(v.weight * 100) : 0;
    return { name: v.name, upTo };
  });
}

/** The variation `on` becomes at variant bucket `v`: the first variant whose cumulative weight exceeds it. */
function resolve(serve: string, serving: Serving, v: number): string {
  if (serve !== 'on' || serving.variantCuts === null) return serve;
  for (const variant of serving.variantCuts) if (v < variant.upTo) return variant.name;
  return 'off';
}

function intervals(cuts: readonly number[]): Array<[number, number]> {
  const points = [...new Set([0, SPACE, ...cuts.filter((c) => c > 0 && c < SPACE)])].sort((x, y) => x - y);
  const out: Array<[number, number]> = [];
  for (let i = 0; i + 1 < points.length; i++) out.push([points[i], points[i + 1]]);
  return out;
}

/** The joint bucket space cut into rectangles on which both sides serve one variation each. */
function* jointCells(a: Serving, b: Serving): Generator<{ size: number; before: string; after: string }> {
  const rolloutPieces = intervals([...a.cuts, ...b.cuts]);
  const variantPieces = intervals([...(a.variantCuts ?? []), ...(b.variantCuts ?? [])].map((v) => v.upTo));
  for (const [r0, r1] of rolloutPieces) {
    const serveA = a.serveAt(r0);
    const serveB = b.serveAt(r0);
    for (const [v0, v1] of variantPieces) {
      yield { size: (r1 - r0) * (v1 - v0), before: resolve(serveA, a, v0), after: resolve(serveB, b, v0) };
    }
  }
}

/** The share (0..1) of userId-only contexts every prerequisite of `config` passes; null when not computable. */
function prerequisitePass(project: ProjectState, config: EnvironmentConfig, env: EnvironmentName, depth: number): number | null {
  let pass = 1;
  for (const prerequisite of config.prerequisites ?? []) {
    const share = variationShare(project, prerequisite.flag, prerequisite.variation, env, depth + 1);
    if (share === null) return null;
    pass *= share;
  }
  return pass;
}

/** The share of userId-only contexts a flag serves `variation` to, as served (kills included). */
function variationShare(project: ProjectState, key: string, variation: string, env: EnvironmentName, depth: number): number | null {
  if (depth > MAX_DEPTH) return null;
  const flag = project.flags.get(key);
  if (!flag?.environments[env]) return variation === 'off' ? 1 : 0;
  if (project.kills[env]?.kills?.[key]) return variation === 'off' ? 1 : 0;
  const serving = userIdOnlyServing(project, flag, env);
  if (!serving) return null;
  const config = flag.environments[env];
  const pass = flag.meta.archivedAt || !config.enabled ? 1 : prerequisitePass(project, config, env, depth);
  if (pass === null) return null;
  let cells = 0;
  for (const cell of jointCells(serving, serving)) if (cell.before === variation) cells += cell.size;
  const share = cells / (SPACE * SPACE);
  // Where a prerequisite fails the flag serves off.
  return pass * share + (variation === 'off' ? 1 - pass : 0);
}

function pct(value: number): string {
  return `${value.toFixed(2)} %`;
}

/**
 * An impact entry in words, as `flagops diff --impact`, the MCP server and the dashboard say it:
 * `prod: moves 15.00 % of users from off to on`, or with several moves
 * `prod: moves 20.00 % of users (10.00 % from off to control, 10.00 % from off to treatment)`.
 */
export function describeImpact(entry: ImpactEntry): string {
  if (!entry.exact || entry.movedPct === null)
    return `${entry.environment}: impact not exact (rules, segments or prerequisites changed; who moves depends on attributes)`;
  if (entry.moves.length === 0) return `${entry.environment}: moves no users`;
  if (entry.moves.length === 1) {
    const [move] = entry.moves;
    return `${entry.environment}: moves ${pct(move.pct)} of users from ${move.from} to ${move.to}`;
  }
  const parts = entry.moves.map((m) => `${pct(m.pct)} from ${m.from} to ${m.to}`);
  return `${entry.environment}: moves ${pct(entry.movedPct)} of users (${parts.join(', ')})`;
}
