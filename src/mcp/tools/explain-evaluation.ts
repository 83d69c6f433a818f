import { explainEvaluation, type SnapshotFlag } from '@flagops/core';
import { explanationText } from '../format/explanation-text.js';
import { defineTool } from './define-tool.js';
import { environment, evaluationContext, flagKey } from './inputs.js';
import { toolSuccess } from './tool-result.js';

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
    // The snapshot entry the evaluation server would build (contract §4): the config plus kill, archive and default.
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
