import { ENVIRONMENTS } from '@flagops/core';
import { z } from 'zod';
import { escapedControls } from '../../../foundations/validation/one-line.js';
import type { FlagResponse } from '../api-types.js';
import { ProposalOpened } from '../control-plane-client.js';
import { defineTool, toolError, toolSuccess } from './define-tool.js';
import { flagKey } from './inputs.js';
import { proposalOpenedResult } from './proposal-text.js';

export const listStaleFlags = defineTool({
  name: 'list_stale_flags',
  title: 'List stale flags, with why',
  description: [
    'Lists the flags of the project that are stale (expired, or rolled out: every environment has served one value to everyone for staleAfterDays)',
    'or potentially stale (no evaluation in any environment for staleAfterDays), each with its reasons in words, its type, owner and expiry.',
    'Read-only. Use it to find cleanup work: a stale flag is a candidate for removal from the code and then archive_flag.',
  ].join(' '),
  input: {
    staleAfterDays: z
      .number()
      .min(0)
      .max(36_500)
      .optional()
      .describe('Days without change or evaluation before a flag counts as stale (default 30).'),
    includePotentiallyStale: z
      .boolean()
      .optional()
      .describe('Also list flags only potentially stale (not evaluated lately); default true.'),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ staleAfterDays, includePotentiallyStale }, { scope }) {
    const projectId = await scope.projectId();
    const [{ flags: health }, { flags }] = await Promise.all([
      scope.api.flagHealth(projectId, staleAfterDays),
      scope.api.listFlags(projectId),
    ]);
    const byKey = new Map(flags.map((f) => [f.key, f]));
    const wanted = health.filter((h) => h.status === 'stale' || (h.status === 'potentially_stale' && includePotentiallyStale !== false));
    const listed = wanted.map((h) => {
      const lifecycle = byKey.get(h.key)?.lifecycle;
      return {
        key: h.key,
        status: h.status,
        reasons: h.reasons,
        type: lifecycle?.type ?? 'release',
        ...(lifecycle?.owner !== undefined ? { owner: lifecycle.owner } : {}),
        ...(lifecycle?.expiresAt !== undefined ? { expiresAt: lifecycle.expiresAt } : {}),
      };
    });
    const days = staleAfterDays ?? 30;
    const lines = listed.map((f) =>
      escapedControls(
        `- ${f.key} [${f.status.replace('_', ' ')}; ${f.type}${'owner' in f ? `; owner ${f.owner}` : ''}]: ${f.reasons.map((r) => r.message).join('; ')}`,
      ),
    );
    const summary =
      listed.length === 0
        ? `No stale flags in ${scope.slug} (staleAfterDays ${days}, ${health.length} active flag(s) checked).`
        : [
            `${listed.length} of ${health.length} active flag(s) in ${scope.slug} are stale or potentially stale (staleAfterDays ${days}):`,
            ...lines,
          ].join('\n');
    return toolSuccess(summary, { projectSlug: scope.slug, staleAfterDays: days, flags: listed });
  },
});

/** What the evaluation API and every SDK serve once the flag is archived, in words (the evaluation order). */
export function servedAfterArchive(flag: FlagResponse): string {
  const killed = ENVIRONMENTS.filter((env) => flag.environments[env]?.killed);
  const kept =
    killed.length === 0
      ? ''
      : ` Where it is killed (${killed.join(', ')}) it keeps serving valueOff (reason "killed") until the kill is cleared.`;
  return [
    `Once archived, the evaluation API and every SDK serve its defaultValue ${JSON.stringify(flag.defaultValue ?? null)} for ${flag.key} in every environment`,
    `(variation "default", reason "archived"), whatever the configs say; it stays in the snapshot, so code still calling it gets that value, not the caller's own default.${kept}`,
  ].join(' ');
}

/** Only what holds for every refused key: one limited to some environments cannot take the proposal route either. */
const ARCHIVE_NEXT = {
  forbidden:
    'This agent key may not archive this flag. Do not retry with it; ask a human with an admin key (or the dashboard) to archive it, or use a key that may.',
};

export const archiveFlag = defineTool({
  name: 'archive_flag',
  title: 'Archive a flag',
  description: [
    'Archives a flag of the project (soft: its files stay in git, with archivedAt set); audited as flag_archive.',
    'Afterwards every environment serves the flag\'s defaultValue (reason "archived"): remove the flag from the code first, or make sure defaultValue is what the code should get.',
    'Where the project requires approval of agent keys, the archive is kept as a proposal that an admin key or dashboard session approves; otherwise agent keys are refused (forbidden).',
  ].join(' '),
  input: { key: flagKey },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  async run({ key }, { scope }) {
    const flag = await scope.flag(key);
    if (flag.archivedAt !== null)
      return toolSuccess(`${key} is archived already (${flag.archivedAt}). ${servedAfterArchive(flag)}`, {
        flag,
        servedAfter: flag.defaultValue ?? null,
      });
    try {
      const archived = await scope.api.archiveFlag(flag.id);
      return toolSuccess(`Archived ${key} in ${scope.slug}. ${servedAfterArchive(archived)}`, {
        flag: archived,
        servedAfter: archived.defaultValue ?? null,
      });
    } catch (err) {
      if (err instanceof ProposalOpened) {
        const result = proposalOpenedResult(err.proposal);
        const note = `If approved: ${servedAfterArchive(flag)}`;
        return {
          ...result,
          content: [{ type: 'text', text: `${(result.content[0] as { text: string }).text}\n${note}` }, ...result.content.slice(1)],
          structuredContent: { ...result.structuredContent, servedAfter: flag.defaultValue ?? null },
        };
      }
      return toolError(err, ARCHIVE_NEXT);
    }
  },
});
