import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../api/api-error.js';

/** What an agent should do next, per error code; a tool may replace one where it knows better. */
const NEXT_STEP: Readonly<Record<string, string>> = {
  version_conflict:
    'The config changed since you read it. Call get_flag to read the current version, check that your change still makes sense, then retry with expectedVersion set to that version.',
  forbidden: 'This agent key may not do this. Do not retry; ask a human with an admin key.',
  unauthorized: 'The control plane refused FLAGOPS_AGENT_KEY (wrong or revoked). Do not retry; a human must configure a valid agent key.',
  not_found: 'Check the key with list_flags; environments are dev, staging and prod.',
  invalid_input: 'Fix the named field and call again.',
  conflict: 'It exists already: read it with get_flag instead of creating it.',
  invalid_in_repository:
    'An invalid file on main holds this flag (or its project) back. Do not retry: a human must fix or revert the file named. Kills and cleared kills still work.',
  timeout:
    'No answer arrived in time. A write may or may not have happened: call get_flag (or get_audit_log) to see the current state before you retry.',
  unreachable: 'The control plane is not reachable at FLAGOPS_URL. Nothing was changed; retry later or tell a human.',
};

export type NextSteps = Readonly<Record<string, string>>;

/**
 * A failed call as a tool result (`isError`) rather than a protocol error, so the agent sees the API's code
 * and message and can act on them. Anything that is not an ApiError is a bug on our side: `internal`.
 */
export function toolError(err: unknown, nextSteps: NextSteps = {}): CallToolResult {
  const code = err instanceof ApiError ? err.code : 'internal';
  const message = err instanceof Error ? err.message : String(err);
  const next = nextSteps[code] ?? NEXT_STEP[code];
  const error: Record<string, unknown> = { code, message };
  if (err instanceof ApiError && err.status !== undefined) error.status = err.status;
  if (next !== undefined) error.next = next;
  return {
    isError: true,
    content: [{ type: 'text', text: next === undefined ? `${code}: ${message}` : `${code}: ${message}\n${next}` }],
    structuredContent: { error },
  };
}
