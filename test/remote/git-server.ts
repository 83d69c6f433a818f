import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { runHttpBackend } from '../../src/apps/git-http/http-backend.js';
import type { Config } from '../../src/foundations/config/config.js';
import { silentLogger } from '../../src/foundations/log/logger.js';
import { freePort } from '../helpers/free-port.mjs';

/**
 * A real git host on loopback: `git http-backend` behind a node http server, serving one bare repository
 * `flags.git` that accepts pushes (non-fast-forward ones refused, as GitHub's protected branches do).
 */
export async function startGitServer() {
  const root = mkdtempSync(path.join(os.tmpdir(), 'flagops-git-host-'));
  const gitdir = path.join(root, 'flags.git');
  execFileSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', gitdir]);
  execFileSync('git', ['--git-dir', gitdir, 'config', 'receive.denyNonFastForwards', 'true']);
  // No `git gc --auto` after pushes: it goes on in the background after the push has been answered, so it
  // raced stop()'s removal of the repository (ENOTEMPTY) and took CPU from whatever a benchmark was timing.
  execFileSync('git', ['--git-dir', gitdir, 'config', 'receive.autogc', 'false']);
  let requests = 0;
  let fetches = 0;
  /** The User-Agent of each request to push (ref advertisement and update), in order. */
  const pushAgents: string[] = [];
  /** The Authorization header of each request to push, in order ('' for none). */
  const pushAuthorizations: string[] = [];
  /** While hung: the requests taken and never answered. */
  let hung: http.IncomingMessage[] | null = null;
  let unanswered = 0;
  let pushesUnanswered = 0;
  /** How long each request waits before the host answers it (0: at once). */
  let slowMs = 0;
  const server = http.createServer((req, res) => {
    requests++;
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (hung !== null) {
      unanswered++;
      // A push's first request (the refs to push to, or its update once the host is known) is where a hung host holds it.
      if (url.searchParams.get('service') === 'git-receive-pack' || url.pathname.endsWith('/git-receive-pack')) pushesUnanswered++;
      hung.push(req);
      return;
    }
    if (req.method === 'POST' && url.pathname.endsWith('/git-upload-pack')) fetches++;
    if (url.searchParams.get('service') === 'git-receive-pack' || url.pathname.endsWith('/git-receive-pack')) {
      pushAgents.push(`${req.method} ${req.headers['user-agent'] ?? ''}`);
      pushAuthorizations.push(req.headers.authorization ?? '');
    }
    const answer = () =>
      void runHttpBackend(req, res, {
        projectRoot: root,
        pathInfo: url.pathname,
        remoteUser: 'flagops',
        allowPush: true,
        logger: silentLogger,
      });
    if (slowMs > 0) setTimeout(answer, slowMs);
    else answer();
  });
  // Below the ports the system hands out: nothing else is given it while the host is down (`down()`, `up()`).
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    /** The host goes down: its port refuses connections until `up()`; the repository stays as it is. */
    async down() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
    /**
     * The host hangs: it takes connections and requests and answers none, until `answer()`. Nothing a request
     * asked for while it hung is done.
     */
    hang() {
      hung ??= [];
    },
    /** The host answers again; the requests it hung on are cut off, undone. */
    answer() {
      for (const req of hung ?? []) req.socket.destroy();
      hung = null;
    },
    /** The host answers every request, each `ms` late (a busy git host); 0 makes it answer at once again. */
    slow(ms: number) {
      slowMs = ms;
    },
    /** Requests the host took while hung and never answered. */
    get unanswered() {
      return unanswered;
    },
    /** Of those, the pushes. */
    get pushesUnanswered() {
      return pushesUnanswered;
    },
    /** The host is back, on the same port. */
    async up() {
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    url: `http://127.0.0.1:${port}/flags.git`,
    gitdir,
    get requests() {
      return requests;
    },
    /** `<method> <user agent>` of each push request answered (GET of the refs, POST of the update), in order. */
    pushAgents,
    /** The Authorization header of each push request answered ('' for none), in order. */
    pushAuthorizations,
    /** Fetches and clones served (each one POST to git-upload-pack). */
    get fetches() {
      return fetches;
    },
    async stop() {
      for (const req of hung ?? []) req.socket.destroy();
      server.closeAllConnections();
      if (server.listening) await new Promise((resolve) => server.close(resolve));
      rmSync(root, { recursive: true, force: true, maxRetries: 5 });
    },
  };
}

/** The kill commits for `flag` on a repository's main, `<action> <environment>`, oldest first (from their trailers). */
export function killCommits(gitdir: string, flag: string): string[] {
  const trailer = (key: string) => `%(trailers:key=${key},valueonly,separator=)`;
  const format = [trailer('Flagops-Action'), trailer('Flagops-Flag'), trailer('Flagops-Environment')].join('%x09');
  return execFileSync('git', ['--git-dir', gitdir, 'log', '--reverse', `--format=${format}`, 'main'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.split('\t'))
    .filter(([action, key]) => (action === 'kill' || action === 'clear_kill') && key === flag)
    .map(([action, , env]) => `${action} ${env}`);
}

/** A control plane's settings in remote mode on `url`, with the organisation acme and its admin key. */
export function remoteConfig(dataDir: string, url: string, adminKey: string, extra: Partial<Config> = {}): Config {
  return {
    dataDir,
    host: '127.0.0.1',
    controlPort: 0,
    evalPort: 0,
    bootstrapKeys: [{ org: 'acme', key: adminKey }],
    planProjectLimit: 25,
    logLevel: 'error',
    gitRemote: { url, pollSeconds: 0 },
    ...extra,
  };
}
