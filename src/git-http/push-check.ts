import { spawn } from 'node:child_process';
import { readRepositoryFiles } from '../repository/read-repository.js';
import { layout } from '../repository/layout.js';
import { formatIssue } from '../validation/issue.js';

export const ZERO_OID = '0000000000000000000000000000000000000000';
const MAIN = 'refs/heads/main';

export interface RefUpdate {
  oldOid: string;
  newOid: string;
  ref: string;
}

/** The lines a pre-receive hook reads on stdin: `<old> <new> <ref>` (githooks(5)). */
export function parseRefUpdates(text: string): RefUpdate[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .map((line) => {
      const [oldOid, newOid, ref] = line.split(' ');
      return { oldOid, newOid, ref };
    });
}

/** Runs git in the repository the hook runs in; its environment carries git's quarantine variables. */
function gitOut(args: string[], input?: Buffer): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: err }));
    child.stdin.end(input);
  });
}

/** The YAML files under projects/ of a pushed commit, read with git itself: only git knows the quarantine. */
export async function readPushedFiles(commit: string): Promise<Array<{ path: string; text: string }>> {
  const listing = await gitOut(['ls-tree', '-r', '-z', '--full-tree', commit, '--', `${layout.projectsDir}/`]);
  if (listing.code !== 0) throw new Error(`git ls-tree ${commit} failed: ${listing.stderr.trim()}`);
  const blobs: Array<{ oid: string; path: string }> = [];
  for (const entry of listing.stdout.toString('utf8').split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [, type, oid] = entry.slice(0, tab).split(' ');
    const path = entry.slice(tab + 1);
    if (type === 'blob' && /\.ya?ml$/.test(path)) blobs.push({ oid, path });
  }
  if (blobs.length === 0) return [];
  const batch = await gitOut(['cat-file', '--batch'], Buffer.from(`${blobs.map((b) => b.oid).join('\n')}\n`));
  if (batch.code !== 0) throw new Error(`git cat-file failed: ${batch.stderr.trim()}`);
  // --batch answers each request with "<oid> <type> <size>\n<content>\n", in order.
  const files: Array<{ path: string; text: string }> = [];
  let at = 0;
  for (const blob of blobs) {
    const eol = batch.stdout.indexOf(0x0a, at);
    const size = Number(batch.stdout.subarray(at, eol).toString('utf8').split(' ')[2]);
    files.push({ path: blob.path, text: batch.stdout.subarray(eol + 1, eol + 1 + size).toString('utf8') });
    at = eol + 1 + size + 1;
  }
  return files;
}

async function isAncestor(ancestor: string, descendant: string): Promise<boolean> {
  return (await gitOut(['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
}

/**
 * Why a push must be refused, one line each, or nothing. Only `main` exists (contract §2); it may move only
 * forward (the log is the audit trail) and only to a commit whose every file is valid, so nothing invalid
 * ever lands through a push.
 */
export async function checkPush(updates: readonly RefUpdate[]): Promise<string[]> {
  const problems: string[] = [];
  for (const { oldOid, newOid, ref } of updates) {
    if (ref !== MAIN) {
      problems.push(`${ref}: only ${MAIN} can be pushed; open changes against main`);
      continue;
    }
    if (newOid === ZERO_OID) {
      problems.push(`${ref}: main cannot be deleted; the git log is the audit trail`);
      continue;
    }
    if (oldOid !== ZERO_OID && !(await isAncestor(oldOid, newOid))) {
      problems.push(`${ref}: non-fast-forward push refused; fetch, rebase on main and push again`);
      continue;
    }
    const { issues } = readRepositoryFiles(await readPushedFiles(newOid), newOid);
    for (const issue of issues) problems.push(formatIssue(issue));
  }
  return problems;
}
