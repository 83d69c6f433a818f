import type { AuditEntry, EnvironmentName } from '@flagops/core';
import { createLimiter } from '../../foundations/storage/git/limiter.js';
import type { FlagRepository } from '../../foundations/storage/index.js';
import type { AuditIndex } from '../audit/audit-index.js';
import { BUDGET_WINDOW_MS, isImportEntry, roundPct, spenderOf } from './budget-rules.js';
import { budgetedPct } from './budgeted-pct.js';

/** One applied change that counts against a budget. */
export interface BudgetSpend {
  /** The commit on main. */
  commit: string;
  /** When it reached main: the push's time for a pushed commit, else the commit's. */
  at: string;
  projectSlug: string;
  flagKey: string;
  environment: EnvironmentName;
  actorType: string;
  /** Its impact's movedPct; 100 when not exact. */
  movedPct: number;
}

/** Which (project, environment, actor type) a reader wants the spends of. */
export type SpendFilter = (projectSlug: string, environment: EnvironmentName, actorType: string) => boolean;

/**
 * How far another control plane's clock may lag this one's: the walk down main goes this much further back
 * than the window before it trusts that nothing older is above.
 */
const CLOCK_SLACK_MS = 10 * 60_000;
/** Impacts remembered: each is one commit's change to one config, and never changes. */
const MAX_CACHED = 20_000;
const IMPACT_CONCURRENCY = 4;

/**
 * The last hour's use of every budget of one organisation, read from main's audit trail (the git log, shared by
 * every control plane and kept across restarts): each applied config update or promotion, by whom it counts
 * for (budget-rules.ts spenderOf; an import's never count), with the impact of its commit against its first
 * parent, computed by the function proposals use. Impacts are cached by commit, so a check costs the walk over
 * the last hour's entries of an index already in memory.
 */
export class BudgetLedger {
  private static readonly byRepository = new WeakMap<object, BudgetLedger>();

  /** The one ledger of an organisation's repository; `index` gives its audit index. */
  static of(repo: Pick<FlagRepository, 'readCommit' | 'readState'>, index: () => Promise<AuditIndex>): BudgetLedger {
    let ledger = BudgetLedger.byRepository.get(repo);
    if (!ledger) {
      ledger = new BudgetLedger(repo, index);
      BudgetLedger.byRepository.set(repo, ledger);
    }
    return ledger;
  }

  private readonly impacts = new Map<string, Promise<number | null>>();
  private readonly limit = createLimiter(IMPACT_CONCURRENCY);

  private constructor(
    private readonly repo: Pick<FlagRepository, 'readCommit' | 'readState'>,
    private readonly index: () => Promise<AuditIndex>,
  ) {}

  /**
   * The spends of the 60 minutes before `now` that `wanted` asks for, newest first, read from main as it is now
   * (or at `at`, a head the index may hold already); `head` is the commit they were read at.
   */
  async spends(now: Date, wanted: SpendFilter, at?: string | null): Promise<{ head: string | null; spends: BudgetSpend[] }> {
    const since = now.getTime() - BUDGET_WINDOW_MS;
    const index = await this.index();
    const { head, entries } = await index.recent(new Date(since - CLOCK_SLACK_MS).toISOString(), at);
    const counted: Array<{ entry: AuditEntry; at: string; actorType: string }> = [];
    for (const entry of entries) {
      const actorType = spenderOf(entry);
      if (actorType === null || !wanted(entry.projectSlug!, entry.environment!, actorType)) continue;
      // A pushed commit's author date is the author's to write: the push's own time counts.
      const at = (entry.pushedBy && index.pushedAt(entry.id)) || entry.at;
      if (Date.parse(at) > since) counted.push({ entry, at, actorType });
    }
    const spends = await Promise.all(
      counted.map(async ({ entry, at, actorType }): Promise<BudgetSpend | null> => {
        const movedPct = await this.impactOf(entry);
        if (movedPct === null) return null;
        const { projectSlug, flagKey, environment } = entry;
        return { commit: entry.id, at, projectSlug: projectSlug!, flagKey: flagKey!, environment: environment!, actorType, movedPct };
      }),
    );
    return { head, spends: spends.filter((spend) => spend !== null) };
  }

  /**
   * Per `<project>/<environment>` that `wanted` names, the use of `actorType`'s changes in the 60 minutes
   * before `now`.
   */
  async usedBy(
    now: Date,
    actorType: string,
    wanted: (projectSlug: string, environment: EnvironmentName) => boolean,
  ): Promise<Record<string, number>> {
    const { spends } = await this.spends(now, (slug, env, type) => type === actorType && wanted(slug, env));
    const used: Record<string, number> = {};
    for (const s of spends) {
      const key = `${s.projectSlug}/${s.environment}`;
      used[key] = roundPct((used[key] ?? 0) + s.movedPct);
    }
    return used;
  }

  /** The sum of the spends `spends` names for one budget. */
  static used(spends: readonly BudgetSpend[], projectSlug: string, environment: EnvironmentName, actorType: string): number {
    let sum = 0;
    for (const s of spends)
      if (s.projectSlug === projectSlug && s.environment === environment && s.actorType === actorType) sum += s.movedPct;
    return roundPct(sum);
  }

  /** The entry's counted impact, or null when its commit never counts (budget-rules.ts isImportEntry). */
  private impactOf(entry: AuditEntry): Promise<number | null> {
    const key = `${entry.id}\u0000${entry.projectSlug}\u0000${entry.flagKey}\u0000${entry.environment}`;
    let impact = this.impacts.get(key);
    if (!impact) {
      impact = this.limit(() => this.computeImpact(entry));
      this.impacts.set(key, impact);
      impact.catch(() => this.impacts.delete(key));
      if (this.impacts.size > MAX_CACHED) this.impacts.delete(this.impacts.keys().next().value!);
    }
    return impact;
  }

  private async computeImpact(entry: AuditEntry): Promise<number | null> {
    const commit = await this.repo.readCommit(entry.id);
    if (isImportEntry(entry, commit)) return null;
    const [before, after] = await Promise.all([this.repo.readState(commit.parents[0] ?? null), this.repo.readState(commit.oid)]);
    const slug = entry.projectSlug!;
    return budgetedPct(before.state.projects.get(slug), after.state.projects.get(slug), entry.flagKey!, entry.environment!);
  }
}
