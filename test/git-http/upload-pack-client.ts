import { randomBytes } from 'node:crypto';
import { readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { git, gitWith } from '../helpers/git-cli.js';

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/** The body of a clone's git-upload-pack request: want `commit`, have nothing, done. */
export function wantBody(commit: string): string {
  return `${pkt(`want ${commit} side-band-64k ofs-delta\n`)}0000${pkt('done\n')}`;
}

/**
 * Adds branch `big` to a bare repository: one commit holding `mib` MiB of random bytes, which no
 * compression shrinks, so that its pack is larger than the connection's buffers and git has to wait for a
 * client that does not read. Returns the commit.
 */
export function addBigBranch(gitdir: string, mib: number): string {
  const file = path.join(gitdir, 'big.bin');
  writeFileSync(file, randomBytes(mib * 1024 * 1024));
  const blob = git(gitdir, 'hash-object', '-w', file).trim();
  rmSync(file);
  const tree = gitWith(gitdir, { input: `100644 blob ${blob}\tbig.bin\n` }, 'mktree').trim();
  const commit = git(gitdir, 'commit-tree', tree, '-m', 'big').trim();
  git(gitdir, 'update-ref', 'refs/heads/big', commit);
  return commit;
}

/** Every git process whose working directory is `gitdir` (git http-backend runs upload-pack there). */
export function gitProcessesIn(gitdir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === gitdir) pids.push(Number(entry));
    } catch {
      // gone, or not ours to look at
    }
  }
  return pids;
}

export interface RawResponse {
  res: http.IncomingMessage;
  req: http.ClientRequest;
}

/**
 * POSTs to `/git/<repo>/git-upload-pack` (over https when the URL says so, trusting any certificate), asking
 * to keep the connection open, as git does: an answer that closes it anyway came from the git runner.
 */
export function postUploadPack(url: string, body: string, key?: string): Promise<RawResponse> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: 'POST',
        agent: false,
        rejectUnauthorized: false,
        headers: {
          connection: 'keep-alive',
          'content-type': 'application/x-git-upload-pack-request',
          ...(key ? { authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}` } : {}),
        },
      },
      (res) => resolve({ res, req }),
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Reads a response to its end: the whole body, or the error that cut it off. */
export function readToEnd(res: http.IncomingMessage): Promise<{ body: Buffer; complete: boolean }> {
  const chunks: Buffer[] = [];
  return new Promise((resolve) => {
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve({ body: Buffer.concat(chunks), complete: res.complete }));
    res.on('error', () => resolve({ body: Buffer.concat(chunks), complete: false }));
    res.on('aborted', () => resolve({ body: Buffer.concat(chunks), complete: false }));
  });
}

/** Polls `check` every 50 ms until it is true or `ms` pass; returns its last answer. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return check();
}
