import type { McpServer, ToolCallback } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ShapeOutput, ZodRawShapeCompat } from '@modelcontextprotocol/sdk/server/zod-compat.js';
import type { CallToolResult, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import { ApiError } from '../api/api-error.js';
import type { ToolDeps } from './tool-deps.js';
import { toolError } from './tool-error.js';

export interface ToolSpec<S extends ZodRawShapeCompat> {
  name: string;
  title: string;
  /** What an agent reads to decide when to call it: what it does, what it changes, what can go wrong. */
  description: string;
  input: S;
  annotations: ToolAnnotations;
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
          result = toolError(err);
          if (!(err instanceof ApiError)) deps.logger.error('tool failed unexpectedly', { tool: spec.name, err });
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
          inputSchema: spec.input,
          annotations: { title: spec.title, ...spec.annotations },
        },
        callback as unknown as ToolCallback<S>,
      );
    },
  };
}
