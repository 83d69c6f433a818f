/**
 * The installation's secret under which keys and trigger secrets are hashed (HMAC-SHA-256): without it, a copy
 * of the stored hashes does not even let anyone test guesses.
 */
export interface PepperStore {
  /**
   * The pepper, created when there is none and `mayCreate` (nothing is hashed with one yet). When there is
   * none and hashes exist, this throws: a new pepper would silently invalidate every stored key.
   */
  get(options: { mayCreate: boolean }): Promise<Buffer>;
}
