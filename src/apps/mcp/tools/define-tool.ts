import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Logger } from '../../../foundations/log/logger.js';
import { ApiError, type ProjectScope, ProposalOpened } from '../control-plane-client.js';
import { proposalOpenedResult } from './proposal-text.js';

/** What every tool works with: the project it acts in (and through it the API), and the log. */
export interface ToolDeps {
  scope: ProjectScope;
  logger: Logger;
}

/**
 * A successful tool result: a short text an agent (or a person) reads first, then the same data as JSON.
 * The JSON is both `structuredContent` and a text block, because clients that predate structured content
 * only show text (MCP 2025-06-18, "Structured Content": SHOULD also return it serialized).
 */
export function toolSuccess(summary: string, data: Record<string, unknown>): CallToolResult {
  return {
    content: [
      { type: 'text', text: summary },
      { type: 'text', text: JSON.stringify(data) },
    ],
    structuredContent: data,
  };
}

/** Before retrying a write whose outcome is unknown: what shows whether it was made, or kept as a proposal. */
const READ_BEFORE_RETRY =
  'A write may or may not have been made: read the current state with get_flag (or get_segment, get_audit_log), and list_proposals where changes need approval, before you retry.';

/** What an agent should do next, per error code; a tool may replace one where it knows better (ToolSpec.nextSteps). */
const NEXT_STEP: Readonly<Record<string, string>> = {
  version_conflict:
    'The config changed since you read it. Call get_flag to read the current version, check that your change still makes sense, then retry with expectedVersion set to that version.',
  forbidden: 'This agent key may not do this. Do not retry; ask a human with an admin key.',
  unauthorized: 'The control plane refused FLAGOPS_AGENT_KEY (wrong or revoked). Do not retry; a human must configure a valid agent key.',
  not_found: 'Check the key with list_flags; environments are dev, staging and prod.',
  invalid_input: 'Fix the named field and call again.',
  conflict: 'The change conflicts with the current state (the message says how): read it (get_flag, list_segments) before deciding again.',
  invalid_in_repository:
    'An invalid file on main holds this flag (or its project) back. Do not retry: a human must fix or revert the file named. Kills and cleared kills still work.',
  unavailable:
    'The control plane cannot do this right now (the message says what fails); nothing was changed. Retry in a little while, and tell a human if it persists.',
  git_remote_timeout: `The git host did not take the change in time; it may still reach main once the host answers. ${READ_BEFORE_RETRY}`,
  timeout: `No answer arrived in time. ${READ_BEFORE_RETRY}`,
  connection_lost: `The connection broke before the answer arrived, possibly after the request reached the control plane. ${READ_BEFORE_RETRY}`,
  bad_response: `Something that is not flagops answered at FLAGOPS_URL (a proxy in between?). ${READ_BEFORE_RETRY} Tell a human if it persists.`,
  unreachable: 'The control plane is not reachable at FLAGOPS_URL. Nothing was changed; retry later or tell a human.',
};

export type NextSteps = Readonly<Record<string, string>>;

/**
 * A failed call as a tool result (or, for a write kept as a proposal, the answer that says so) (`isError`) rather than a protocol error, so the agent sees the API's code
 * and message and can act on them. Anything that is not an ApiError is a bug on our side: `internal`.
 */
export function toolError(err: unknown, nextSteps: NextSteps = {}): CallToolResult {
  // Not a failure: the change was kept for approval, which the agent must be told as such.
  if (err instanceof ProposalOpened) return proposalOpenedResult(err.proposal);
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

export interface ToolSpec<S extends ZodRawShapeCompat> {
  name: string;
  title: string;
  /** What an agent reads to decide when to call it: what it does, what it changes, what can go wrong. */
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /** Its own `next` hints where the common ones (NEXT_STEP) would point elsewhere, e.g. segment tools to segment tools. */
  nextSteps?: NextSteps;
  /** Throws ApiError for the API's refusals; the wrapper turns every throw into an isError result. */
  run(args: ShapeOutput<S>, deps: ToolDeps): Promise<CallToolResult>;
}

export interface McpTool {
  name: string;
  register(server: McpServer, deps: ToolDeps): void;
}

/**
 * A tool whose failures never escape: the SDK already answers bad input with an isError result naming the
 * field (zod), and this wrapper does the same for API refusals and our own bugs, so one bad call cannot take
 * the server down or leave the agent with a bare protocol error.
 */
export function defineTool<S extends ZodRawShapeCompat>(spec: ToolSpec<S>): McpTool {
  return {
    name: spec.name,
    register(server, deps) {
      const callback = async (args: ShapeOutput<S>): Promise<CallToolResult> => {
        const started = performance.now();
        let result: CallToolResult;
        try {
          result = await spec.run(args, deps);
        } catch (err) {
          result = toolError(err, spec.nextSteps);
          if (!(err instanceof ApiError) && !(err instanceof ProposalOpened))
            deps.logger.error('tool failed unexpectedly', { tool: spec.name, err });
        }
        const error = result.isError ? (result.structuredContent as { error?: { code?: string } } | undefined)?.error?.code : undefined;
        deps.logger.info('tool call', { tool: spec.name, ok: !result.isError, code: error, ms: Math.round(performance.now() - started) });
        return result;
      };
      server.registerTool(
        spec.name,
        {
          title: spec.title,
          description: spec.description,
          // Strict: an argument the tool does not take (a misspelt expectedVersion, a reason where none is taken) is
          // refused by name, as the API refuses unknown fields, rather than dropped: dropped, a misspelt guard made
          // an unguarded write.
          inputSchema: z.strictObject(spec.input) as unknown as S,
          annotations: { title: spec.title, ...spec.annotations },
        },
        callback as unknown as ToolCallback<S>,
      );
    },
  };
}
