import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { InvalidInputError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../errors/kinds.js';
import { requestCutOff } from './client-errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * Arrays and objects nest at most this deep in a request body: flag values may nest 64 levels, and the body
 * around them a few more. Anything deeper is refused before it is parsed, so no handler, validator or
 * serializer ever recurses through it.
 */
export const MAX_BODY_DEPTH = 100;

function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  if (header === 'application/json') return true; // what nearly every client sends: no string work
  const type = header.split(';', 1)[0].trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

/**
 * Reads a JSON request body: not application/json, or compressed (Content-Encoding) → 415, over the limit → 413,
 * not UTF-8, malformed or nested deeper than MAX_BODY_DEPTH → 400. An empty body reads as `undefined` so routes with
 * optional bodies can accept it.
 */
export async function readJsonBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const declared = req.headers['content-length'];
  const hasBody = (declared !== undefined && declared !== '0') || req.headers['transfer-encoding'] !== undefined;
  if (!hasBody) return undefined;
  if (!isJsonContentType(req.headers['content-type'])) throw new UnsupportedMediaTypeError();
  // Bodies are read as sent: one labelled compressed would be parsed (and committed) as what it says it is not.
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new UnsupportedMediaTypeError(
      `the body must be sent uncompressed (Content-Encoding ${JSON.stringify(coding.slice(0, 40))} is not taken); send plain application/json`,
    );
  }
  const body = await readBody(req, limit);
  if (body.length === 0) return undefined;
  // Decoded leniently, bytes that are not UTF-8 would become U+FFFD and be committed as if they had been sent.
  if (!isUtf8(body)) throw new InvalidInputError('the body is not valid UTF-8', 'body');
  const text = body.toString('utf8');
  if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
    throw new InvalidInputError(`the body nests arrays and objects more than ${MAX_BODY_DEPTH} levels deep`, 'body');
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidInputError(`the body is not valid JSON: ${(err as Error).message}`, 'body');
  }
}

/**
 * Whether brackets outside strings nest deeper than `limit` in JSON text. A text shorter than twice the limit
 * cannot (valid JSON closes what it opens), which spares the scan for the small bodies of the hot paths.
 */
function nestsDeeperThan(text: string, limit: number): boolean {
  if (text.length <= 2 * limit) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** Reads a request body whole, up to `limit` bytes (413 beyond: the rest is read and dropped). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new PayloadTooLargeError(limit);
  }
  return collect(req, limit);
}

/**
 * Collects the body with plain stream events: cheaper per request than an async iterator. A body whose connection
 * closes before it is whole (the client went away, or was answered 408) rejects with RequestCutOffError.
 */
function collect(req: IncomingMessage, limit: number): Promise<Buffer> {
  // Cut off before this began to read: its stream will say nothing more.
  if (req.readableAborted) return Promise.reject(requestCutOff(req));
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
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      // Node's `aborted`: the connection closed before the body was whole.
      reject(err.code === 'ECONNRESET' ? requestCutOff(req) : err);
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
