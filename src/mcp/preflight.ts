import { ApiError } from './api/api-error.js';
import type { ProjectScope } from './api/project-scope.js';

/** The service said no, or is not there: the server must not start pretending to work. */
export class PreflightError extends Error {
  override name = 'PreflightError';
}

/**
 * One cheap call before serving (GET /api/v1/projects): it proves the URL reaches a flagops control plane,
 * the key is accepted and the project exists. An MCP client shows a server that exits at start with its
 * stderr; a server that starts anyway would only fail later, on an agent's first call, with less context.
 * The same failures can still happen later (a revoked key, a stopped service): each tool then reports them.
 */
export async function preflight(scope: ProjectScope, baseUrl: string): Promise<void> {
  try {
    await scope.projectId();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    switch (err.code) {
      case 'unreachable':
      case 'timeout':
        throw new PreflightError(`${err.message}; is flagops running and FLAGOPS_URL right?`);
      case 'unauthorized':
        throw new PreflightError(
          `FLAGOPS_AGENT_KEY was refused by the control plane at ${baseUrl} (401 unauthorized: ${err.message}); is it a valid, unrevoked agent key?`,
        );
      case 'bad_response':
        throw new PreflightError(`FLAGOPS_URL ${baseUrl} does not answer like a flagops control plane (${err.message})`);
      case 'not_found':
        throw new PreflightError(err.message);
      default:
        throw new PreflightError(`the control plane at ${baseUrl} refused the start check: ${err.code}: ${err.message}`);
    }
  }
}
