import {
  type ConditionTrace,
  type EvaluationExplanation,
  type EvaluationStep,
  explainEvaluation,
  type SnapshotFlag,
  type SnapshotSegment,
} from '@flagops/core';
import type { FlagResponse } from '../api-types.js';
import { defineTool, toolSuccess } from './define-tool.js';
import { environment, evaluationContext, flagKey } from './inputs.js';

const show = (value: unknown): string => JSON.stringify(value) ?? 'missing';

function conditionLine(c: ConditionTrace): string {
  const holds = c.holds ? 'holds' : 'does not hold';
  if (c.segment) {
    const s = c.segment;
    const why = !s.exists ? 'no such segment' : s.member ? (s.listed ? 'member (listed)' : 'member (its conditions hold)') : 'not a member';
    return `${c.op} ${s.key} — ${why}: ${holds}`;
  }
  const actual = c.actual === undefined ? 'attribute missing' : `actual ${show(c.actual)}`;
  return `${c.attribute} ${c.op} ${show(c.value)} — ${actual}: ${holds}`;
}

function stepLine(step: EvaluationStep, index: number): string[] {
  const label = step.step === 'rule' ? `rule ${step.ruleId}` : step.step;
  const lines = [`${index + 1}. ${label}: ${step.outcome}`];
  for (const c of step.conditions ?? []) lines.push(`     ${conditionLine(c)}`);
  for (const p of step.prerequisites ?? []) {
    const served = p.served === undefined ? 'no such flag' : `serves ${p.served} (reason ${p.reason})`;
    lines.push(`     prerequisite ${p.flag} must serve ${p.variation} — ${served}: ${p.holds ? 'holds' : 'does not hold'}`);
  }
  return lines;
}

/** The snapshot entry the evaluation server would build from a flag response: the config plus kill, archive and default. */
function snapshotEntry(flag: FlagResponse, env: keyof FlagResponse['environments']): SnapshotFlag {
  const state = flag.environments[env];
  const entry: SnapshotFlag = {
    enabled: state.enabled,
    rolloutPct: state.rolloutPct,
    valueOn: state.valueOn,
    valueOff: state.valueOff,
    rules: state.rules,
    killed: state.killed,
    archived: Boolean(flag.archivedAt),
    defaultValue: flag.defaultValue ?? null,
  };
  if (state.variants) entry.variants = state.variants;
  if (state.prerequisites) entry.prerequisites = state.prerequisites;
  return entry;
}

/** The result, the deciding step named first, then every step taken, in evaluation order (docs/evaluation.md). */
export function explanationText(key: string, env: string, explanation: EvaluationExplanation): string {
  const { result, steps } = explanation;
  const deciding = steps[steps.length - 1];
  const extras = [
    result.ruleId && `ruleId ${result.ruleId}`,
    result.bucket !== undefined && `bucket ${result.bucket}`,
    result.variantBucket !== undefined && `variantBucket ${result.variantBucket}`,
    result.prerequisiteKey && `prerequisiteKey ${result.prerequisiteKey}`,
  ].filter(Boolean);
  return [
    `${key} in ${env}: value ${show(result.value)} (variation ${result.variation}, reason ${result.reason}${extras.length ? `, ${extras.join(', ')}` : ''})`,
    `Decided by step "${deciding.step}"${deciding.ruleId ? ` (rule ${deciding.ruleId})` : ''}: ${deciding.outcome}`,
    'Steps:',
    ...steps.flatMap(stepLine),
  ].join('\n');
}

export const explainEvaluationTool = defineTool({
  name: 'explain_evaluation',
  title: 'Explain how a flag evaluates for a context',
  description: [
    'Explains which value a flag serves in one environment for a given user context, and why: which step decided',
    "(killed, archived, disabled, a failed prerequisite, a rule with its id and each condition checked (segment membership too), or the rollout with the user's bucket), and which variant the variant bucket picked.",
    'Read-only: it evaluates the current config with the same code as the evaluation API and changes nothing. Use it to debug "why does user X get Y".',
  ].join(' '),
  input: {
    key: flagKey,
    env: environment,
    context: evaluationContext.optional().describe('The evaluation context: { userId?, attributes? }. Omit for an anonymous context.'),
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  async run({ key, env, context }, { scope }) {
    const flag = await scope.flag(key);
    const state = flag.environments[env];
    // Prerequisites are other flags of the project, and rules may name segments: read those only when needed.
    const usesSegments = state.rules.some((r) => r.conditions.some((c) => c.op === 'in_segment' || c.op === 'not_in_segment'));
    const flags: Record<string, SnapshotFlag> = {};
    const segments: Record<string, SnapshotSegment> = {};
    if (state.prerequisites || usesSegments) {
      const projectId = await scope.projectId();
      if (state.prerequisites)
        for (const other of (await scope.api.listFlags(projectId)).flags) flags[other.key] = snapshotEntry(other, env);
      for (const s of (await scope.api.listSegments(projectId)).segments)
        segments[s.key] = { userIds: s.userIds, conditions: s.conditions };
    }
    const snapshotFlag = snapshotEntry(flag, env);
    const explanation = explainEvaluation(snapshotFlag, flag.key, context ?? {}, undefined, { flags, segments });
    return toolSuccess(explanationText(flag.key, env, explanation), {
      key: flag.key,
      environment: env,
      context: context ?? {},
      result: explanation.result,
      decidedBy: explanation.steps[explanation.steps.length - 1],
      steps: explanation.steps,
    });
  },
});
