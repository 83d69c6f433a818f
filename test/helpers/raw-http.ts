import http, { type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';

/**
 * An HTTP request over node:http, which (unlike fetch) neither adds Accept-Encoding nor decodes the answer:
 * the bytes as they were on the wire.
 */
export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The body of a raw answer decoded as its Content-Encoding says, as text. */
export function decodedText(res: RawResponse): string {
  const coding = res.headers['content-encoding'];
  if (coding === undefined) return res.body.toString('utf8');
  if (coding === 'gzip') return gunzipSync(res.body).toString('utf8');
  if (coding === 'br') return brotliDecompressSync(res.body).toString('utf8');
  throw new Error(`unexpected Content-Encoding ${coding}`);
}
