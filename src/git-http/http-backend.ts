import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/logger.js';
import { cgiHeadEnd, parseCgiHead } from './cgi-headers.js';

export interface BackendRequest {
  /** The directory holding the bare repositories (`<dataDir>/repos`). */
  projectRoot: string;
  /** The path inside it: `/acme.git/info/refs`. */
  pathInfo: string;
  remoteUser: string;
  /** Allow git-receive-pack (push). */
  allowPush: boolean;
  /** Extra environment for git and its hooks. */
  env?: Record<string, string>;
  logger: Logger;
}

/**
 * Runs `git http-backend` (git's own smart-HTTP server, as a CGI program) for one request: the request body
 * streams into it, its CGI head becomes the HTTP status and headers, and the rest streams out. git inflates
 * a gzip-encoded body itself when told the encoding (it sends `Content-Encoding: gzip` for large posts).
 */
export function runHttpBackend(req: IncomingMessage, res: ServerResponse, request: BackendRequest): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: request.projectRoot,
    GIT_HTTP_EXPORT_ALL: '1',
    GIT_CONFIG_NOSYSTEM: '1',
    PATH_INFO: request.pathInfo,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_USER: request.remoteUser,
    REMOTE_ADDR: req.socket.remoteAddress ?? '',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    ...request.env,
  };
  if (req.headers['content-length'] !== undefined) env.CONTENT_LENGTH = req.headers['content-length'];
  if (req.headers['content-encoding'] !== undefined) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
  if (req.headers['git-protocol'] !== undefined) env.GIT_PROTOCOL = String(req.headers['git-protocol']);
  const args = request.allowPush ? ['-c', 'http.receivepack=true', 'http-backend'] : ['-c', 'http.receivepack=false', 'http-backend'];

  return new Promise((resolve) => {
    const child = spawn('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let head: Buffer | null = Buffer.alloc(0);
    let stderr = '';
    req.pipe(child.stdin);
    child.stdin.on('error', () => {}); // git may answer (e.g. 403) before reading the whole body
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.stdout.on('data', (chunk: Buffer) => {
      if (head === null) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      const end = cgiHeadEnd(head);
      if (end < 0) return;
      const { status, headers } = parseCgiHead(head.subarray(0, end).toString('latin1'));
      res.statusCode = status;
      for (const [name, value] of headers) res.appendHeader(name, value);
      res.write(head.subarray(end));
      head = null;
    });
    child.on('error', (err) => {
      request.logger.error('git http-backend could not start', { err });
      if (!res.headersSent) res.statusCode = 500;
      res.end();
      resolve();
    });
    child.on('close', (code) => {
      if (code !== 0) request.logger.warn('git http-backend failed', { code, path: request.pathInfo, stderr: stderr.trim() });
      if (head !== null && !res.headersSent) res.statusCode = 502; // it ended before a complete head
      res.end();
      resolve();
    });
  });
}
