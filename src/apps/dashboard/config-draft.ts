import { FLAG_KINDS, type FlagKind, type JsonValue, type Rule, type Variant } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { configModelIssues } from '../../foundations/validation/config-model.js';
import { bodyIssues, pointerToField } from '../../foundations/validation/validate-body.js';
import { route } from '../control-plane/route-table.js';
import { parseRulesYaml } from './rules-yaml.js';

/** One problem of a draft, named like the API names fields (`rules[0].conditions[1].value`). */
export interface DraftIssue {
  field: string;
  message: string;
  /** Position in the rules text, for issues inside the rules. */
  line?: number;
  column?: number;
}

export interface DraftResult {
  /** The rules as the config update would send them; null while the rules have issues. */
  rules: unknown[] | null;
  /** The rules as read from the text, with or without issues (the rule builder shows them); null when the text is not a YAML list. */
  parsedRules: unknown[] | null;
  issues: DraftIssue[];
}

const CONFIG_FIELDS = ['enabled', 'rolloutPct', 'valueOn', 'valueOff'] as const;
const MAX_RULES_TEXT = 512 * 1024;

interface DraftInput {
  kind: FlagKind;
  config: Record<string, unknown>;
  rulesYaml?: string;
  /** The config's variants, which rules may serve by name; not part of the draft, only what it is checked against. */
  variants?: Variant[] | null;
}

function draftInput(input: unknown): DraftInput {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) throw new InvalidInputError('the body must be a JSON object');
  const { kind, config = {}, rulesYaml, variants, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined) throw new InvalidInputError(`${unknown}: unknown field; send kind, config, rulesYaml and variants`, unknown);
  if (variants !== undefined && variants !== null && !Array.isArray(variants))
    throw new InvalidInputError('variants: must be the list of the config variants, or null', 'variants');
  if (!(FLAG_KINDS as readonly unknown[]).includes(kind))
    throw new InvalidInputError(`kind: must be one of ${FLAG_KINDS.join(', ')}`, 'kind');
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    throw new InvalidInputError('config: must be an object', 'config');
  const extra = Object.keys(config).find((f) => !(CONFIG_FIELDS as readonly string[]).includes(f));
  if (extra !== undefined)
    throw new InvalidInputError(`config.${extra}: not a field of the draft; send ${CONFIG_FIELDS.join(', ')}`, `config.${extra}`);
  if (rulesYaml !== undefined && (typeof rulesYaml !== 'string' || rulesYaml.length > MAX_RULES_TEXT)) {
    throw new InvalidInputError(`rulesYaml: must be a string of at most ${MAX_RULES_TEXT} characters`, 'rulesYaml');
  }
  return {
    kind: kind as FlagKind,
    config: config as Record<string, unknown>,
    ...(rulesYaml === undefined ? {} : { rulesYaml }),
    variants: (variants as Variant[] | null | undefined) ?? null,
  };
}

/**
 * A config update checked before it is sent: the rules text parsed as YAML, then the whole body run through
 * the very checks PUT .../config runs (the config-update JSON Schema, duplicate rule ids, values of the flag's
 * kind). Nothing is written; the dashboard calls this as people type.
 */
export function checkConfigDraft(input: unknown): DraftResult {
  const { kind, config, rulesYaml, variants } = draftInput(input);
  const body: Record<string, unknown> = { ...config };
  const issues: DraftIssue[] = [];
  const parsed = rulesYaml === undefined ? undefined : parseRulesYaml(rulesYaml);
  if (parsed) {
    for (const { message, pointer, line, column } of parsed.issues) {
      issues.push({ field: `rules${pointerToField(pointer ?? '')}`, message, ...(line === undefined ? {} : { line, column }) });
    }
    if (parsed.value !== undefined) body.rules = parsed.value;
  }
  for (const issue of [
    ...bodyIssues('config-update', body),
    // Values of the flag's kind, and rules serving a variant the config has.
    ...configModelIssues(kind, { ...(body as { valueOn?: JsonValue; valueOff?: JsonValue; rules?: Rule[] }), variants }),
  ]) {
    const pointer = issue.path ?? '';
    const inRules = pointer === '/rules' || pointer.startsWith('/rules/');
    const at = inRules && parsed ? parsed.positionOf(pointer.slice('/rules'.length)) : undefined;
    issues.push({ field: pointerToField(pointer), message: issue.message, ...at });
  }
  const rulesOk = parsed?.value !== undefined && !issues.some((i) => i.field === 'rules' || i.field.startsWith('rules['));
  const parsedRules = Array.isArray(parsed?.value) ? (parsed.value as unknown[]) : null;
  return { rules: rulesOk ? (body.rules as unknown[]) : null, parsedRules, issues };
}

/**
 * POST /dashboard/api/validate-config: the live validation of the flag page's editor. Reading is enough:
 * nothing is written. It goes through the control plane's route pipeline, so it is authenticated (and its
 * body limited) like every API call.
 */
export const validateConfigRoute = route({
  method: 'POST',
  path: '/dashboard/api/validate-config',
  permission: 'read',
  body: 'json',
  handle: async ({ body }) => ({ body: checkConfigDraft(body) }),
});
