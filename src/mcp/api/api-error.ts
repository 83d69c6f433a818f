/**
 * Codes the MCP server adds to the control plane's own (contract §3) for failures that never reached an
 * answer: the agent must be able to tell "refused" from "no idea whether it happened".
 */
export type TransportErrorCode = 'unreachable' | 'timeout' | 'bad_response';

/**
 * A failed control-plane call: the API's `{ error: { code, message } }` when it answered, or a transport
 * code when it did not. `status` is absent when no HTTP answer arrived.
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
