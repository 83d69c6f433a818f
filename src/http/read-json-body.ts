import type { IncomingMessage } from 'node:http';
import { InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors/kinds.js';

export const MAX_BODY_BYTES = 1024 * 1024;

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  if (header === 'application/json') return true; // what nearly every client sends: no string work
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
  const { size, text } = await readText(req, limit);
  if (size === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`the body is not valid JSON: ${(err as Error).message}`, 'body');
  }
}

/** Collects the body with plain stream events: cheaper per request than an async iterator. */
function readText(req: IncomingMessage, limit: number): Promise<{ size: number; text: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(new PayloadTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
      resolve({ size, text: body.toString('utf8') });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
