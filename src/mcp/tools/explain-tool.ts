import { type EvaluationExplanation, type EvaluationStep, explainEvaluation, type SnapshotFlag } from '@flagops/core';
import { defineTool, toolSuccess } from './define-tool.js';
import { environment, evaluationContext, flagKey } from './inputs.js';

const show = (value: unknown): string => JSON.stringify(value) ?? 'missing';

function stepLine(step: EvaluationStep, index: number): string[] {
  const label = step.step === 'rule' ? `rule ${step.ruleId}` : step.step;
  const lines = [`${index + 1}. ${label}: ${step.outcome}`];
  for (const c of step.conditions ?? []) {
    const actual = c.actual === undefined ? 'attribute missing' : `actual ${show(c.actual)}`;
    lines.push(`     ${c.attribute} ${c.op} ${show(c.value)} — ${actual}: ${c.holds ? 'holds' : 'does not hold'}`);
  }
  return lines;
}

/** The result, the deciding step named first, then every step taken, in evaluation order (docs/evaluation.md). */
export function explanationText(key: string, env: string, explanation: EvaluationExplanation): string {
  const { result, steps } = explanation;
  const deciding = steps[steps.length - 1];
  const extras = [result.ruleId && `ruleId ${result.ruleId}`, result.bucket !== undefined && `bucket ${result.bucket}`].filter(Boolean);
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
    "(killed, archived, disabled, a rule with its id and each condition checked, or the rollout with the user's bucket).",
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
    // The snapshot entry the evaluation server would build: the config plus kill, archive and default.
    const snapshotFlag: SnapshotFlag = {
      enabled: state.enabled,
      rolloutPct: state.rolloutPct,
      valueOn: state.valueOn,
      valueOff: state.valueOff,
      rules: state.rules,
      killed: state.killed,
      archived: Boolean(flag.archivedAt),
      defaultValue: flag.defaultValue ?? null,
    };
    const explanation = explainEvaluation(snapshotFlag, flag.key, context ?? {});
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
