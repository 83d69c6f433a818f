import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitRunner } from '../../src/apps/git-http/git-runner.js';
import { type BackendRequest, runHttpBackend, serveUploadPack } from '../../src/apps/git-http/http-backend.js';
import { readBody } from '../../src/foundations/http/read-json-body.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { git } from '../helpers/git-cli.js';
import { gitAsyncWith } from './git-async.js';
import { addBigBranch, eventually, gitProcessesIn, postUploadPack, readToEnd, wantBody } from './upload-pack-client.js';

/**
 * git's smart HTTP for one bare repository (`/repo.git/…`) as the service serves it, on a plain HTTP or an
 * HTTPS server, with or without a git runner; `/ping` answers `pong`.
 */
async function gitServer(projectRoot: string, options: { runner?: GitRunner; tls?: { key: Buffer; cert: Buffer } }) {
  const handler = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (req.url === '/ping') {
      res.end('pong');
      return;
    }
    const rest = new URL(req.url ?? '/', 'http://localhost').pathname.replace(/^\/repo\.git\//, '');
    const request: BackendRequest = {
      projectRoot,
      pathInfo: `/repo.git/${rest}`,
      remoteUser: 'tester',
      allowPush: false,
      logger: silentLogger,
      runner: options.runner,
    };
    if (rest === 'git-upload-pack') await serveUploadPack(req, res, { ...request, body: await readBody(req, 1024 * 1024) });
    else await runHttpBackend(req, res, request);
  };
  const server = options.tls ? https.createServer(options.tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('git-upload-pack where the connection cannot be handed to the git runner', () => {
  let work: string;
  let gitdir: string;
  let head: string;
  let tls: { key: Buffer; cert: Buffer };
  const runner = new GitRunner(silentLogger, { stopGraceMs: 300 });

  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), 'flagops-upload-pack-'));
    const source = path.join(work, 'source');
    mkdirSync(source);
    git(source, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(source, 'README.md'), 'flags\n');
    git(source, 'add', 'README.md');
    git(source, 'commit', '--quiet', '-m', 'first');
    gitdir = path.join(work, 'repo.git');
    git(work, 'clone', '--quiet', '--bare', source, gitdir);
    head = git(gitdir, 'rev-parse', 'main').trim();
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
        '-keyout',
        path.join(work, 'key.pem'),
        '-out',
        path.join(work, 'cert.pem'),
      ]),
      { stdio: 'ignore' },
    );
    tls = { key: readFileSync(path.join(work, 'key.pem')), cert: readFileSync(path.join(work, 'cert.pem')) };
  });
  afterAll(async () => {
    await runner.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('over plain HTTP with a runner, is handed off: the connection closes after the answer', async () => {
    const server = await gitServer(work, { runner });
    try {
      const { res } = await postUploadPack(`${server.url}/repo.git/git-upload-pack`, wantBody(head));
      expect(res.headers.connection).toBe('close');
      const { body, complete } = await readToEnd(res);
      expect(complete).toBe(true);
      expect(body.includes('PACK')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('over TLS, streams through the server as before, and git clone works', async () => {
    const server = await gitServer(work, { runner, tls });
    try {
      const { res } = await postUploadPack(`${server.url}/repo.git/git-upload-pack`, wantBody(head));
      expect(res.headers.connection).toBe('keep-alive');
      const { body, complete } = await readToEnd(res);
      expect(complete).toBe(true);
      expect(body.includes('PACK')).toBe(true);
      const cloned = await gitAsyncWith(work, { GIT_SSL_NO_VERIFY: '1' }, 'clone', '--quiet', `${server.url}/repo.git`, 'over-tls');
      expect(cloned.ok).toBe(true);
      expect(git(path.join(work, 'over-tls'), 'rev-parse', 'HEAD').trim()).toBe(head);
    } finally {
      await server.close();
    }
  });

  it('without a runner, streams through the server', async () => {
    const server = await gitServer(work, {});
    try {
      const { res } = await postUploadPack(`${server.url}/repo.git/git-upload-pack`, wantBody(head));
      expect(res.headers.connection).toBe('keep-alive');
      expect((await readToEnd(res)).body.includes('PACK')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('with a request pipelined behind it on the connection, answers both, in order', async () => {
    const server = await gitServer(work, { runner });
    try {
      const body = wantBody(head);
      const { port } = new URL(server.url);
      const socket = net.connect(Number(port), '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      const closed = new Promise((resolve) => socket.once('close', resolve));
      // Both requests in one write: Node reads the second before the first is answered.
      socket.write(
        `POST /repo.git/git-upload-pack HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-git-upload-pack-request\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
          'GET /ping HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
      );
      await closed;
      const text = Buffer.concat(chunks).toString('latin1');
      expect(text.match(/HTTP\/1\.1 200 OK/g)?.length).toBe(2);
      expect(text.indexOf('PACK')).toBeGreaterThan(0);
      expect(text.indexOf('PACK')).toBeLessThan(text.lastIndexOf('HTTP/1.1 200 OK'));
      expect(text.endsWith('pong')).toBe(true);
    } finally {
      await server.close();
    }
  });

  it('when the server stops, a handed-off answer still running after the grace period is cut off and its git stopped', async () => {
    const big = addBigBranch(gitdir, 16);
    const server = await gitServer(work, { runner });
    try {
      const { res } = await postUploadPack(`${server.url}/repo.git/git-upload-pack`, wantBody(big));
      expect(res.headers.connection).toBe('close');
      await new Promise((resolve) => res.once('data', resolve));
      res.pause(); // a client that does not read: git waits
      expect(gitProcessesIn(gitdir).length).toBeGreaterThan(0);
      runner.finishHandedOff();
      const ended = readToEnd(res);
      // Past the grace, the runner stops the git still writing the answer (and cuts its connection).
      expect(await eventually(() => gitProcessesIn(gitdir).length === 0)).toBe(true);
      res.resume();
      expect((await ended).complete).toBe(false);
    } finally {
      await server.close();
    }
  });
});
