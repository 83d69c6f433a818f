import type { IncomingMessage } from 'node:http';
import { InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors/kinds.js';

export const MAX_BODY_BYTES = 1024 * 1024;

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Reads a JSON request body (contract §3): not application/json → 415, over the limit → 413,
 * malformed → 400. An empty body reads as `undefined` so routes with optional bodies can accept it.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = req.headers['content-length'];
  const hasBody = (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) throw new UnsupportedMediaTypeError();
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new PayloadTooLargeError(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(chunk as Buffer);
  }
  if (size === 0) return undefined;
  const text = Buffer.concat(chunks, size).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`the body is not valid JSON: ${(err as Error).message}`, 'body');
  }
}
