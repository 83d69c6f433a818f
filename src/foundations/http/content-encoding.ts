import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/** The content codings answers may be sent in; `identity` is the body as it is. */
export type ContentCoding = 'br' | 'gzip' | 'identity';
export type Compression = Exclude<ContentCoding, 'identity'>;

/** Preferred first when a client accepts several with the same weight: br is the smaller (docs/performance.md). */
const SUPPORTED: readonly Compression[] = ['br', 'gzip'];

/**
 * The coding to answer in, from an `Accept-Encoding` header (RFC 9110 §12.5.3): the supported coding of the
 * highest weight above 0, `*` standing for any coding the header does not name; identity when none is
 * acceptable, when identity weighs more, or when there is no header at all (anything can decode identity, so it
 * is answered even when the header refuses it, rather than an error).
 */
export function negotiateCoding(header: string | undefined): ContentCoding {
  if (!header) return 'identity';
  const weights = new Map<string, number>();
  for (const element of header.split(',')) {
    const [rawName, ...params] = element.split(';');
    let name = rawName.trim().toLowerCase();
    if (name === '') continue;
    if (name === 'x-gzip') name = 'gzip';
    const q = weightOf(params);
    // An unreadable weight makes the element unreadable: ignored, as if not sent.
    if (q !== undefined) weights.set(name, Math.max(q, weights.get(name) ?? 0));
  }
  const any = weights.get('*');
  let best: ContentCoding = 'identity';
  let bestQ = 0;
  for (const coding of SUPPORTED) {
    const q = weights.get(coding) ?? any ?? 0;
    if (q > bestQ) {
      best = coding;
      bestQ = q;
    }
  }
  const identityQ = weights.get('identity');
  return identityQ !== undefined && identityQ > bestQ ? 'identity' : best;
}

/** The `q` of an element's parameters: 1 when absent, undefined when it is not a qvalue (0 to 1, at most 3 decimals). */
function weightOf(params: string[]): number | undefined {
  for (const param of params) {
    const [key, value] = param.split('=', 2).map((s) => s.trim());
    if (key.toLowerCase() !== 'q') continue;
    if (value === undefined || !/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(value)) return undefined;
    return Number(value);
  }
  return 1;
}

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/**
 * How hard to compress. `stored`: a body compressed once and sent many times (a snapshot version), so the
 * smaller output is worth some milliseconds; `per-request`: a body made for one request (OFREP bulk), where
 * the time counts on every request. Chosen by measurement on snapshots of 1,000 and 10,000 flags
 * (scripts/bench/snapshot-bytes.mjs): gzip above level 6 and brotli above quality 5 barely shrink such JSON
 * and take several times as long (brotli 11 takes seconds).
 */
export type Effort = 'stored' | 'per-request';

const GZIP_LEVEL: Record<Effort, number> = { stored: 6, 'per-request': 1 };
const BROTLI_QUALITY: Record<Effort, number> = { stored: 5, 'per-request': 1 };

/** Compresses on libuv's thread pool, so a body of megabytes does not hold up the event loop. */
export function compress(body: string | Buffer, coding: Compression, effort: Effort): Promise<Buffer> {
  const input = typeof body === 'string' ? Buffer.from(body) : body;
  if (coding === 'gzip') return gzipAsync(input, { level: GZIP_LEVEL[effort] });
  return brotliAsync(input, {
    params: {
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY[effort],
      [constants.BROTLI_PARAM_SIZE_HINT]: input.length,
    },
  });
}

const sentBytes: Record<ContentCoding, number> = { br: 0, gzip: 0, identity: 0 };

/** Counts the body bytes of an answer that could be compressed, by the coding it was sent in (the metrics). */
export function countBodyBytes(coding: ContentCoding, bytes: number): void {
  sentBytes[coding] += bytes;
}

/** What countBodyBytes counted in this process. */
export function bodyBytesByCoding(): Readonly<Record<ContentCoding, number>> {
  return sentBytes;
}
