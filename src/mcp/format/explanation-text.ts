import type { EvaluationExplanation, EvaluationStep } from '@flagops/core';

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

/** The result, the deciding step named first, then every step taken in contract §4 order. */
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
