import { ApiError } from '../api.js';

/** A failure as one sentence for the person at the screen. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof TypeError) return 'The server cannot be reached. Check that flagops is running, then try again.';
  return err instanceof Error ? err.message : String(err);
}
