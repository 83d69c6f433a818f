import { AUDIT_ACTIONS } from '@flagops/core';
import { InvalidInputError } from '../../foundations/errors/kinds.js';
import { FLAG_HEALTH_ACTIONS } from '../../foundations/state/index.js';

/** A webhook's fields as a request gives them, unchecked. */
export interface WebhookInput {
  url?: unknown;
  actions?: unknown;
  secret?: unknown;
}

const MAX_URL_LENGTH = 2048;
const FIELDS = new Set(['url', 'actions', 'secret']);

/** Checks a new webhook's fields, naming the one at fault: an http(s) URL, known audit actions, a usable secret. */
export function checkWebhookInput(input: WebhookInput): { url: string; actions: string[]; secret?: string } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidInputError('the body must be a JSON object');
  for (const field of Object.keys(input)) {
    if (!FIELDS.has(field)) throw new InvalidInputError(`${field} is not a webhook field (url, actions, secret)`, field);
  }
  return { url: checkUrl(input.url), actions: checkActions(input.actions), ...checkSecret(input.secret) };
}

function checkUrl(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw new InvalidInputError('url is required: the http or https URL to POST to', 'url');
  if (value.length > MAX_URL_LENGTH) throw new InvalidInputError(`url must be at most ${MAX_URL_LENGTH} characters`, 'url');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidInputError('url must be an absolute http or https URL', 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new InvalidInputError(`url must be an http or https URL, not ${url.protocol.replace(/:$/, '')}`, 'url');
  }
  return url.href;
}

function checkActions(value: unknown): string[] {
  if (value === undefined) return [];
  const known: readonly string[] = [...AUDIT_ACTIONS, ...FLAG_HEALTH_ACTIONS];
  if (!Array.isArray(value)) throw new InvalidInputError('actions must be a list of audit actions (none: every action)', 'actions');
  for (const action of value) {
    if (typeof action !== 'string' || !known.includes(action))
      throw new InvalidInputError(
        `actions: ${JSON.stringify(action)} is not an audit action or flag health event (${known.join(', ')})`,
        'actions',
      );
  }
  return [...new Set(value as string[])];
}

function checkSecret(value: unknown): { secret?: string } {
  if (value === undefined) return {};
  if (typeof value !== 'string' || value.length < 16 || value.length > 256 || !/^[\x21-\x7e]+$/.test(value)) {
    throw new InvalidInputError(
      'secret must be 16 to 256 printable characters without spaces (leave it out to have one generated)',
      'secret',
    );
  }
  return { secret: value };
}
