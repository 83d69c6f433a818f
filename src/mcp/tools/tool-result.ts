import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

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
