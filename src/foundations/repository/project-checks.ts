import {
  ENVIRONMENTS,
  type EnvironmentConfig,
  type EnvironmentName,
  type FlagFile,
  type FlagState,
  isSegmentCondition,
  type KillsFile,
  type ProjectFile,
  type ProjectState,
  type SegmentFile,
} from '@flagops/core';
import { configModelIssues } from '../validation/config-model.js';
import { escapePointerSegment } from '../validation/error-messages.js';
import type { ValidationIssue } from '../validation/issue.js';
import { classifyPath, layout } from './layout.js';

// The cross-file checks of one project, shared by assembleState (a whole commit at once) and
// ProjectAssembler (one project kept up to date file by file), so that both say exactly the same.

/** A file slot: `value` undefined when the file is present but invalid (already reported by the parser). */
export interface Slot<T> {
  path: string;
  value: T | undefined;
}

const NO_ISSUES: readonly ValidationIssue[] = Object.freeze([]);

/** Slots per environment are arrays in ENVIRONMENTS order. */
export const ENV_INDEX: Readonly<Record<EnvironmentName, number>> = { dev: 0, staging: 1, prod: 2 };

/** What a flag's own files say, before the checks that involve other flags (unique ids, letter case). */
export interface FlagCheck {
  /** Undefined when the flag file is invalid: its parse issues say why, and nothing more is reported. */
  meta: FlagFile | undefined;
  /** The flag file's key is not its file name. */
  keyIssue?: ValidationIssue;
  /** Missing configs, values of the wrong kind and variants that do not add up, in environment order. */
  configIssues: readonly ValidationIssue[];
  /** The flag as served, when its own files have no issue (it may still lose its id to another flag). */
  state?: FlagState;
}

export function checkFlagFiles(
  slug: string,
  key: string,
  slot: Slot<FlagFile>,
  configs: ReadonlyArray<Slot<EnvironmentConfig> | undefined> | undefined,
): FlagCheck {
  const meta = slot.value;
  if (!meta) return { meta, configIssues: NO_ISSUES };
  const keyIssue: ValidationIssue | undefined =
    meta.key === key ? undefined : { file: slot.path, path: '/key', message: `must equal the file name "${key}" (found "${meta.key}")` };
  let ok = keyIssue === undefined;
  const configIssues: ValidationIssue[] = [];
  const environments = {} as Record<EnvironmentName, EnvironmentConfig>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const env = ENVIRONMENTS[i];
    const config = configs?.[i];
    if (!config) {
      configIssues.push({ file: slot.path, message: `has no config in ${env} (expected ${layout.configFile(slug, env, key)})` });
      ok = false;
    } else if (!config.value) {
      ok = false;
    } else {
      const kindIssues = configModelIssues(meta.kind, config.value, config.path);
      if (kindIssues.length > 0) {
        configIssues.push(...kindIssues);
        ok = false;
      }
      environments[env] = config.value;
    }
  }
  // The empty array is not kept: ProjectAssembler holds a check per flag, nearly all without issues.
  return {
    meta,
    keyIssue,
    configIssues: configIssues.length > 0 ? configIssues : NO_ISSUES,
    state: ok ? { meta, environments } : undefined,
  };
}

/**
 * Issues about files clashing with each other (one flag id used twice, keys that differ only in letter case, a
 * kill of a flag that has no flag file), as opposed to a file invalid on its own. A clash does not make a flag's
 * own files invalid, so it holds nothing back (held-units.ts); the loser is simply left out. A project that
 * lost its id to another is held back instead: every flag of it would otherwise go at once, and its SDK keys
 * with them.
 */
const clashes = new WeakSet<ValidationIssue>();

export function isClash(issue: ValidationIssue): boolean {
  return clashes.has(issue);
}

function clash(issue: ValidationIssue): ValidationIssue {
  clashes.add(issue);
  return issue;
}

/**
 * Flags clashing over one id or one letter-case-folded key, or projects over one id: the flag file (or
 * project.yaml) paths involved, the one that keeps it and those left out, in no particular order. Which keeps
 * it is decided by history (clash-incumbents.ts).
 */
export interface Clash {
  /** `id <id>`, `case <slug>/<lower-cased key>` or `project <id>`. */
  key: string;
  /** For a clash over an id: the id. */
  id?: string;
  paths: string[];
}

/** Per issue about a lost claim, the clash it reports: the file it is on lost to `holder` (a flag file or project.yaml path). */
const lostClaims = new WeakMap<ValidationIssue, { key: string; id?: string; holder: string }>();

export function duplicateIdIssue(kind: 'flag' | 'project', path: string, id: string, holder: string): ValidationIssue {
  const issue: ValidationIssue = {
    file: path,
    path: '/id',
    message: `id "${id}" is already used by ${holder}; ${kind} ids must be unique`,
  };
  lostClaims.set(issue, { key: kind === 'flag' ? `id ${id}` : `project ${id}`, id, holder });
  return kind === 'flag' ? clash(issue) : issue;
}

export function caseCollisionIssue(path: string, twin: string): ValidationIssue {
  const issue = clash({
    file: path,
    path: '/key',
    message: `differs from flag "${twin}" only in letter case; the two files collide on case-insensitive file systems`,
  });
  const where = classifyPath(path);
  if (where.kind === 'flag')
    lostClaims.set(issue, { key: `case ${where.project}/${twin.toLowerCase()}`, holder: layout.flagFile(where.project, twin) });
  return issue;
}

/** Whether an issue reports a flag that lost an id or a key to another flag, or a project that lost its id. */
export function isLostClaim(issue: ValidationIssue): boolean {
  return lostClaims.has(issue);
}

/** The clashes that `issues` report, each with every file involved. */
export function clashesOf(issues: readonly ValidationIssue[]): Clash[] {
  const found = new Map<string, Clash>();
  for (const issue of issues) {
    const detail = lostClaims.get(issue);
    if (!detail || issue.file === undefined) continue;
    let group = found.get(detail.key);
    if (!group) {
      group = { key: detail.key, ...(detail.id !== undefined ? { id: detail.id } : {}), paths: [detail.holder] };
      found.set(detail.key, group);
    }
    if (!group.paths.includes(issue.file)) group.paths.push(issue.file);
  }
  return [...found.values()];
}

/**
 * Whether a flag file (or project.yaml) takes part in a clash: for an id, when it is valid and carries that id;
 * for a key, when it is there at all. `file` undefined: no such file; `value` undefined: there but invalid.
 */
export function claimsClash(clash: Clash, file: { value: { id: string } | undefined } | undefined): boolean {
  if (clash.id === undefined) return file !== undefined;
  return file?.value?.id === clash.id;
}

/** The path that keeps a clash by default (no history to say): the first by project, then by flag key. */
export function firstByKey(paths: readonly string[]): string {
  const order = (path: string) => {
    const where = classifyPath(path);
    return where.kind === 'flag' ? [where.project, where.flag] : [path, ''];
  };
  return [...paths].sort((a, b) => {
    const [pa, ka] = order(a);
    const [pb, kb] = order(b);
    return pa < pb ? -1 : pa > pb ? 1 : ka < kb ? -1 : ka > kb ? 1 : 0;
  })[0];
}

/** Configs of a key that has no flag file: reported even when the project is left out, as they need fixing. */
export function orphanIssues(
  slug: string,
  key: string,
  slots: ReadonlyArray<Slot<EnvironmentConfig> | undefined>,
  issues: ValidationIssue[],
): void {
  for (const slot of slots)
    if (slot) issues.push({ file: slot.path, message: `has no flag file (expected ${layout.flagFile(slug, key)})` });
}

/**
 * project.yaml, the kills files and the segments: whether the project can be served, with the issues that say
 * why not. A segment acts on every flag of the project, so an invalid one holds back the project.
 * `claimId` registers the project's id across projects and returns the path already holding it, if any.
 */
export function checkProjectFiles(
  slug: string,
  project: Slot<ProjectFile> | undefined,
  kills: ReadonlyArray<Slot<KillsFile> | undefined>,
  claimId: ((id: string, path: string) => string | undefined) | undefined,
  issues: ValidationIssue[],
  segments: Iterable<Slot<SegmentFile>> = [],
): boolean {
  let ok = project?.value !== undefined;
  for (const segment of segments) {
    // An invalid segment file is reported by the parser.
    if (!segment.value) ok = false;
    else if (segment.path !== layout.segmentFile(slug, segment.value.key)) {
      issues.push({ file: segment.path, path: '/key', message: `must equal the file name (found "${segment.value.key}")` });
      ok = false;
    }
  }
  if (!project) {
    issues.push({ file: layout.projectFile(slug), message: `is missing: the folder projects/${slug} needs one` });
  } else if (project.value && project.value.slug !== slug) {
    issues.push({ file: project.path, path: '/slug', message: `must equal the folder name "${slug}" (found "${project.value.slug}")` });
    ok = false;
  } else if (project.value && claimId) {
    const holder = claimId(project.value.id, project.path);
    if (holder !== undefined) {
      issues.push(duplicateIdIssue('project', project.path, project.value.id, holder));
      ok = false;
    }
  }
  // An invalid kills file is reported by the parser; the project is left out rather than un-kill its flags.
  if (kills.some((slot) => slot && !slot.value)) ok = false;
  return ok;
}

/** The kills served per environment: those of served flags. A kill naming no flag file is an issue. */
export function serveKills(
  slug: string,
  slots: ReadonlyArray<Slot<KillsFile> | undefined>,
  flags: ReadonlyMap<string, FlagState>,
  hasFlagFile: (key: string) => boolean,
  issues: ValidationIssue[],
): Record<EnvironmentName, KillsFile> {
  const kills = {} as Record<EnvironmentName, KillsFile>;
  for (let i = 0; i < ENVIRONMENTS.length; i++) {
    const slot = slots[i];
    const served: KillsFile = { kills: {} };
    for (const [key, kill] of Object.entries(slot?.value?.kills ?? {})) {
      if (flags.has(key)) served.kills[key] = kill;
      else if (!hasFlagFile(key)) {
        issues.push(
          clash({
            file: slot!.path,
            path: `/kills/${escapePointerSegment(key)}`,
            message: `names flag "${key}", which has no flag file in project "${slug}"`,
          }),
        );
      }
      // A kill of a flag left out for its own issues is simply not served: the flag is not either.
    }
    kills[ENVIRONMENTS[i]] = served;
  }
  return kills;
}

/** The segments of a project's valid segment files, by key in key order. */
export function servedSegments(slots: Iterable<Slot<SegmentFile>>): Map<string, SegmentFile> {
  const segments = new Map<string, SegmentFile>();
  for (const slot of [...slots].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)))
    if (slot.value) segments.set(slot.value.key, slot.value);
  return segments;
}

/**
 * The segment keys a condition may name without an issue: the key of every valid segment file and the file
 * name of every segment file. An invalid segment file (which holds back its project) is reported once, on its
 * own, not again on each condition naming it. For a served project these are the keys of servedSegments.
 */
export function segmentKeys(slots: Iterable<Slot<SegmentFile>>): Set<string> {
  const keys = new Set<string>();
  for (const slot of slots) {
    if (slot.value) keys.add(slot.value.key);
    const where = classifyPath(slot.path);
    if (where.kind === 'segment') keys.add(where.segment);
  }
  return keys;
}

/** What a flag's configs refer to, per environment: segments (with where) and prerequisite flags. */
interface References {
  segments: Array<{ env: EnvironmentName; path: string; key: string }>;
  prerequisites: Array<{ env: EnvironmentName; index: number; key: string; variation: string }>;
}

// FlagStates are frozen and shared between the versions that did not change them: read each once.
const referencesOf = new WeakMap<FlagState, References | null>();

function references(flag: FlagState): References | null {
  let refs = referencesOf.get(flag);
  if (refs !== undefined) return refs;
  const found: References = { segments: [], prerequisites: [] };
  for (const env of ENVIRONMENTS) {
    const config = flag.environments[env];
    config.rules.forEach((rule, r) => {
      rule.conditions.forEach((c, i) => {
        if (isSegmentCondition(c)) found.segments.push({ env, path: `/rules/${r}/conditions/${i}/value`, key: c.value });
      });
    });
    (config.prerequisites ?? []).forEach((p, index) => {
      found.prerequisites.push({ env, index, key: p.flag, variation: p.variation });
    });
  }
  refs = found;
  if (refs.segments.length === 0 && refs.prerequisites.length === 0) refs = null;
  referencesOf.set(flag, refs);
  return refs;
}

/**
 * The checks between a project's flags and segments: every segment a condition names has a segment file,
 * every prerequisite names a flag of the project, and prerequisites form no cycle in any environment. A flag
 * failing one is left out (its config holds it back, as an issue of its own files would); the rest are
 * returned in their order, the same map when none fails.
 */
export function checkReferences(
  slug: string,
  flags: ReadonlyMap<string, FlagState>,
  hasFlagFile: (key: string) => boolean,
  segments: { has(key: string): boolean },
  issues: ValidationIssue[],
): ReadonlyMap<string, FlagState> {
  const failed = new Set<string>();
  const withPrerequisites: string[] = [];
  // forEach rather than for-of: no [key, value] pair allocated per flag, on every commit of a 10,000-flag project.
  flags.forEach((flag, key) => {
    const refs = references(flag);
    if (refs === null) return;
    for (const ref of refs.segments) {
      if (segments.has(ref.key)) continue;
      issues.push({
        file: layout.configFile(slug, ref.env, key),
        path: ref.path,
        message: `names segment "${ref.key}", which project "${slug}" does not have (expected ${layout.segmentFile(slug, ref.key)})`,
      });
      failed.add(key);
    }
    for (const ref of refs.prerequisites) {
      const problem = prerequisiteProblem(slug, ref, refs.prerequisites, flags, hasFlagFile);
      if (problem === null) continue;
      issues.push({ file: layout.configFile(slug, ref.env, key), ...problem });
      failed.add(key);
    }
    if (refs.prerequisites.length > 0) withPrerequisites.push(key);
  });
  for (const env of ENVIRONMENTS) {
    const prerequisitesOf = (key: string) => flags.get(key)?.environments[env].prerequisites ?? [];
    const inCycles = new Set<string>();
    for (const cycle of prerequisiteCycles(withPrerequisites, prerequisitesOf)) {
      for (const key of cycle.members) {
        const index = flags.get(key)!.environments[env].prerequisites!.findIndex((p) => cycle.members.includes(p.flag));
        issues.push({
          file: layout.configFile(slug, env, key),
          path: `/prerequisites/${index}/flag`,
          message: `is part of a prerequisite cycle: ${cycle.words}`,
        });
        failed.add(key);
        inCycles.add(key);
      }
    }
    const depths = new Map<string, number>();
    for (const key of withPrerequisites) {
      if (inCycles.has(key)) continue;
      const problem = chainTooLong(key, prerequisitesOf, depths, inCycles);
      if (problem === null) continue;
      issues.push({ file: layout.configFile(slug, env, key), ...problem });
      failed.add(key);
    }
  }
  if (failed.size === 0) return flags;
  const kept = new Map<string, FlagState>();
  for (const [key, flag] of flags) if (!failed.has(key)) kept.set(key, flag);
  return kept;
}

/**
 * The variations a config can serve: without variants `on` and `off`; with variants `off` and the variants,
 * never `on` (wherever it would serve valueOn it serves a variant, and the weights add up to 100). `default`
 * is an archived flag's, whatever its config.
 */
export function servableVariations(config: EnvironmentConfig): string[] {
  const variants = config.variants ?? [];
  return variants.length === 0 ? ['on', 'off'] : ['off', ...variants.map((v) => v.name)];
}

/**
 * Why a prerequisite can never be met, or null: it names a flag the project does not have, a flag an earlier
 * prerequisite of the same config names already (a flag serves one variation at a time, so two would ask for
 * two at once or for one twice), or a variation that flag cannot serve in that environment (servableVariations;
 * a flag held back by its own files is not judged on its variations).
 */
function prerequisiteProblem(
  slug: string,
  ref: References['prerequisites'][number],
  all: References['prerequisites'],
  flags: { get(key: string): FlagState | undefined },
  hasFlagFile: (key: string) => boolean,
): { path: string; message: string } | null {
  if (!hasFlagFile(ref.key))
    return { path: `/prerequisites/${ref.index}/flag`, message: `names flag "${ref.key}", which project "${slug}" does not have` };
  const first = all.find((other) => other.env === ref.env && other.key === ref.key)!;
  if (first.index !== ref.index)
    return {
      path: `/prerequisites/${ref.index}/flag`,
      message: `names flag "${ref.key}" a second time (as /prerequisites/${first.index}): a flag serves one variation at a time, so keep one`,
    };
  const config = flags.get(ref.key)?.environments[ref.env];
  if (config === undefined) return null;
  const servable = servableVariations(config);
  if (servable.includes(ref.variation)) return null;
  return {
    path: `/prerequisites/${ref.index}/variation`,
    message: `names variation "${ref.variation}", which flag "${ref.key}" cannot serve in ${ref.env} (it serves ${servable.join(', ')})`,
  };
}

/**
 * The cycles among prerequisites (strongly connected components with a cycle, Tarjan's algorithm), each with
 * its members in key order and the cycle in words (`a → b → a`).
 */
function prerequisiteCycles(
  keys: readonly string[],
  prerequisitesOf: (key: string) => readonly { flag: string }[],
): Array<{ members: string[]; words: string }> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: Array<{ members: string[]; words: string }> = [];
  let next = 0;
  const visit = (key: string) => {
    index.set(key, next);
    low.set(key, next++);
    stack.push(key);
    onStack.add(key);
    for (const { flag } of prerequisitesOf(key)) {
      if (!index.has(flag)) {
        visit(flag);
        low.set(key, Math.min(low.get(key)!, low.get(flag)!));
      } else if (onStack.has(flag)) low.set(key, Math.min(low.get(key)!, index.get(flag)!));
    }
    if (low.get(key) !== index.get(key)) return;
    const members: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      members.push(member);
    } while (member !== key);
    const selfLoop = members.length === 1 && prerequisitesOf(key).some((p) => p.flag === key);
    if (members.length > 1 || selfLoop) {
      members.sort();
      cycles.push({ members, words: cycleWords(members, prerequisitesOf) });
    }
  };
  for (const key of [...keys].sort()) if (!index.has(key)) visit(key);
  return cycles;
}

/**
 * The most prerequisites one evaluation follows in a row: each is evaluated in turn, by the server and by every SDK
 * (whose languages bound how deep a call may nest), and a real chain is a few long.
 */
export const MAX_PREREQUISITE_CHAIN = 50;

/**
 * How many prerequisites in a row evaluating `key` follows at most (0: none), computed without recursion and
 * remembered in `depths` for the flags below it; flags in a cycle (reported apart) count as ends.
 */
function chainLength(
  key: string,
  prerequisitesOf: (key: string) => readonly { flag: string }[],
  depths: Map<string, number>,
  inCycles: ReadonlySet<string>,
): number {
  const known = depths.get(key);
  if (known !== undefined) return known;
  const stack: Array<{ key: string; next: number; depth: number }> = [{ key, next: 0, depth: 0 }];
  const onPath = new Set<string>([key]);
  while (stack.length > 0) {
    const top = stack[stack.length - 1];
    const below = prerequisitesOf(top.key);
    if (top.next < below.length) {
      const flag = below[top.next++].flag;
      if (inCycles.has(flag) || onPath.has(flag)) {
        top.depth = Math.max(top.depth, 1);
        continue;
      }
      const done = depths.get(flag);
      if (done !== undefined) top.depth = Math.max(top.depth, done + 1);
      else {
        stack.push({ key: flag, next: 0, depth: 0 });
        onPath.add(flag);
      }
      continue;
    }
    stack.pop();
    onPath.delete(top.key);
    depths.set(top.key, top.depth);
    if (stack.length > 0) stack[stack.length - 1].depth = Math.max(stack[stack.length - 1].depth, top.depth + 1);
  }
  return depths.get(key)!;
}

/** The issue of a config whose prerequisites run on longer than MAX_PREREQUISITE_CHAIN, at its longest one. */
function chainTooLong(
  key: string,
  prerequisitesOf: (key: string) => readonly { flag: string }[],
  depths: Map<string, number>,
  inCycles: ReadonlySet<string>,
): { path: string; message: string } | null {
  const length = chainLength(key, prerequisitesOf, depths, inCycles);
  if (length <= MAX_PREREQUISITE_CHAIN) return null;
  const prerequisites = prerequisitesOf(key);
  const index = prerequisites.findIndex((p) => (depths.get(p.flag) ?? 0) + 1 === length);
  return {
    path: `/prerequisites/${Math.max(0, index)}/flag`,
    message: `starts a chain of ${length} prerequisites in a row; at most ${MAX_PREREQUISITE_CHAIN} are followed`,
  };
}

/** One cycle through the members, from the first in key order: `a → b → a`. */
function cycleWords(members: readonly string[], prerequisitesOf: (key: string) => readonly { flag: string }[]): string {
  const path = [members[0]];
  for (let key = members[0]; ; ) {
    key = prerequisitesOf(key).find((p) => members.includes(p.flag))!.flag;
    path.push(key);
    if (key === members[0] || path.length > members.length + 1) break;
    if (path.indexOf(key) !== path.length - 1) break;
  }
  return path.join(' → ');
}

/**
 * What the checks between files say of one flag's config in one environment were it `config`, as issues with
 * a path into the config and no file: a control-plane write checks this first, so that its 400 names the field.
 * Besides the config's own references: another flag's prerequisite on this one that the config would leave
 * unmet (its variants added, removed or renamed), reported at `/variants` with that flag's file.
 */
export function configReferenceIssues(
  project: ProjectState,
  key: string,
  env: EnvironmentName,
  config: EnvironmentConfig,
): ValidationIssue[] {
  const slug = project.project.slug;
  const current = project.flags.get(key);
  if (!current) return [];
  // What checkReferences says of this one file, without going through the project (10,000 flags on every write):
  // only the config's own references name it, and only a cycle through the flag in this environment.
  const flag: FlagState = { meta: current.meta, environments: { ...current.environments, [env]: config } };
  const flags = { get: (k: string) => (k === key ? flag : project.flags.get(k)) };
  const hasFlagFile = (k: string) => project.flags.has(k);
  const segments = project.segments ?? new Map<string, SegmentFile>();
  const issues: ValidationIssue[] = [];
  const refs = references(flag);
  for (const ref of refs?.segments ?? []) {
    if (ref.env !== env || segments.has(ref.key)) continue;
    issues.push({
      path: ref.path,
      message: `names segment "${ref.key}", which project "${slug}" does not have (expected ${layout.segmentFile(slug, ref.key)})`,
    });
  }
  for (const ref of refs?.prerequisites ?? []) {
    if (ref.env !== env) continue;
    const problem = prerequisiteProblem(slug, ref, refs!.prerequisites, flags, hasFlagFile);
    if (problem !== null) issues.push(problem);
  }
  if ((config.prerequisites ?? []).length > 0) {
    // Tarjan's algorithm from the flag visits all it reaches: the component holding the flag is the one the
    // whole project's check finds.
    const prerequisitesOf = (k: string) => flags.get(k)?.environments[env].prerequisites ?? [];
    const inCycles = new Set<string>();
    for (const cycle of prerequisiteCycles([key], prerequisitesOf)) {
      for (const member of cycle.members) inCycles.add(member);
      if (!cycle.members.includes(key)) continue;
      const index = config.prerequisites!.findIndex((p) => cycle.members.includes(p.flag));
      issues.push({ path: `/prerequisites/${index}/flag`, message: `is part of a prerequisite cycle: ${cycle.words}` });
    }
    if (!inCycles.has(key)) {
      const tooLong = chainTooLong(key, prerequisitesOf, new Map(), inCycles);
      if (tooLong !== null) issues.push(tooLong);
    }
  }
  issues.push(...dependantIssues(project, key, env, current.environments[env], config));
  return issues;
}

/**
 * The prerequisites of other flags on `key` in `env` that its config met as `before` and would not as `after`.
 * Only a change of what the flag can serve breaks one, so the project's flags are gone through only then.
 */
function dependantIssues(
  project: ProjectState,
  key: string,
  env: EnvironmentName,
  before: EnvironmentConfig,
  after: EnvironmentConfig,
): ValidationIssue[] {
  const was = servableVariations(before);
  const will = servableVariations(after);
  if (was.length === will.length && was.every((v, i) => v === will[i])) return [];
  const issues: ValidationIssue[] = [];
  project.flags.forEach((other, otherKey) => {
    if (otherKey === key) return;
    for (const p of other.environments[env].prerequisites ?? []) {
      if (p.flag !== key || !was.includes(p.variation) || will.includes(p.variation)) continue;
      issues.push({
        path: '/variants',
        message: `leaves a prerequisite of flag "${otherKey}" unmet: ${layout.configFile(project.project.slug, env, otherKey)} names variation "${p.variation}" of this flag, which it would no longer serve in ${env} (it would serve ${will.join(', ')})`,
      });
    }
  });
  return issues;
}

/** The configs that name a segment: flag key and environment, in key order. */
export function segmentUsage(project: ProjectState, segmentKey: string): Array<{ flag: string; environment: EnvironmentName }> {
  const used: Array<{ flag: string; environment: EnvironmentName }> = [];
  for (const key of [...project.flags.keys()].sort()) {
    const refs = references(project.flags.get(key)!);
    for (const env of ENVIRONMENTS)
      if (refs?.segments.some((s) => s.env === env && s.key === segmentKey)) used.push({ flag: key, environment: env });
  }
  return used;
}
