import { spawn } from 'node:child_process';
import { layout } from '../../foundations/repository/layout.js';
import { parseCommit } from '../../foundations/storage/git/git-objects.js';
import type { ChangedPath } from '../../foundations/storage/index.js';

/**
 * Reads of a push under check, with the git CLI in the repository the pre-receive hook runs in: the pushed
 * objects sit in git's quarantine until the push is accepted, and only git (through the environment it gives
 * the hook) can see them there.
 */

export const ZERO_OID = '0000000000000000000000000000000000000000';

interface GitOutput {
  code: number;
  stdout: Buffer;
  stderr: string;
}

function git(args: string[], input?: Buffer): Promise<GitOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 8192) err += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout: Buffer.concat(out), stderr: err }));
    child.stdin.on('error', () => {}); // git may exit before reading all of it; its exit code says why
    child.stdin.end(input);
  });
}

async function gitOk(args: string[], input?: Buffer): Promise<Buffer> {
  const result = await git(args, input);
  if (result.code !== 0) throw new Error(`git ${args[0]} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

export async function isAncestor(ancestor: string, descendant: string): Promise<boolean> {
  return (await git(['merge-base', '--is-ancestor', ancestor, descendant])).code === 0;
}

/**
 * Whether `ancestor` is on `descendant`'s first-parent line: what main's audit trail walks. A merge of main into
 * a branch pushed as main has main's old head as its second parent: the trail would lose what main held.
 */
export async function onFirstParentLine(ancestor: string, descendant: string): Promise<boolean> {
  const out = await gitOk(['rev-list', '--first-parent', '--parents', descendant, `^${ancestor}`, '--']);
  const lines = out.toString('utf8').split('\n').filter(Boolean);
  // The oldest commit of the line that main did not hold builds on main's old head, or the line went elsewhere.
  return lines.length === 0 || lines[lines.length - 1].split(' ')[1] === ancestor;
}

/** The commit `ref` points at now, or ZERO_OID when there is no such ref. */
export async function refTarget(ref: string): Promise<string> {
  const result = await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
  return result.code === 0 ? result.stdout.toString('utf8').trim() : ZERO_OID;
}

/** The contents of objects by id, through one `git cat-file --batch`. */
async function readObjects(oids: readonly string[]): Promise<Map<string, Buffer>> {
  const unique = [...new Set(oids)];
  const contents = new Map<string, Buffer>();
  if (unique.length === 0) return contents;
  const out = await gitOk(['cat-file', '--batch'], Buffer.from(`${unique.join('\n')}\n`));
  // --batch answers each request with "<oid> <type> <size>\n<content>\n", in order.
  let at = 0;
  for (const oid of unique) {
    const eol = out.indexOf(0x0a, at);
    const size = Number(out.subarray(at, eol).toString('utf8').split(' ')[2]);
    contents.set(oid, out.subarray(eol + 1, eol + 1 + size));
    at = eol + 1 + size + 1;
  }
  return contents;
}

/** The YAML files under projects/ of a pushed commit. */
export async function readPushedFiles(commit: string): Promise<Array<{ path: string; text: string }>> {
  return (await readPushedTree(commit)).files;
}

/** The YAML files under projects/ of a pushed commit, and the paths of all its entries there. */
export async function readPushedTree(commit: string): Promise<{ files: Array<{ path: string; text: string }>; paths: string[] }> {
  const listing = await gitOk(['ls-tree', '-r', '-z', '--full-tree', commit, '--', `${layout.projectsDir}/`]);
  const blobs: Array<{ oid: string; path: string }> = [];
  const paths: string[] = [];
  for (const entry of listing.toString('utf8').split('\0')) {
    const tab = entry.indexOf('\t');
    if (tab < 0) continue;
    const [, type, oid] = entry.slice(0, tab).split(' ');
    const path = entry.slice(tab + 1);
    paths.push(path);
    // Any case of the extension: a checkout.YAML is reported as out of place, never passed over.
    if (type === 'blob' && /\.ya?ml$/i.test(path)) blobs.push({ oid, path });
  }
  const contents = await readObjects(blobs.map((b) => b.oid));
  return { files: blobs.map((b) => ({ path: b.path, text: contents.get(b.oid)!.toString('utf8') })), paths };
}

/** The text of blobs by id. */
export async function readBlobs(oids: readonly string[]): Promise<Map<string, string>> {
  const contents = await readObjects(oids);
  return new Map([...contents].map(([oid, content]) => [oid, content.toString('utf8')]));
}

/** The commits a push brings onto main: reachable from `newOid` and not from `oldOid`, oldest first. */
export async function pushedCommits(oldOid: string, newOid: string): Promise<string[]> {
  const range = oldOid === ZERO_OID ? [newOid] : [newOid, `^${oldOid}`];
  const out = await gitOk(['rev-list', '--reverse', ...range, '--']);
  return out.toString('utf8').split('\n').filter(Boolean);
}

/** The commits the refs under `prefix` (`refs/heads/proposals/`) point at. */
export async function refHeads(prefix: string): Promise<Set<string>> {
  const out = await gitOk(['for-each-ref', '--format=%(objectname)', prefix]);
  return new Set(out.toString('utf8').split('\n').filter(Boolean));
}

/** The messages of commits, by id. */
export async function commitMessages(oids: readonly string[]): Promise<Map<string, string>> {
  const contents = await readObjects(oids);
  return new Map([...contents].map(([oid, content]) => [oid, parseCommit(content).message]));
}

/** A file a commit brought in: one that is in none of its parents with that content and mode. */
export interface IntroducedFile {
  commit: string;
  path: string;
  mode: string;
  oid: string;
}

/**
 * The files each commit brought in, compared with every parent (`git diff-tree -m`): a merge brings in only
 * what differs from all of its parents, since what one side had was checked when that side came in.
 */
export async function introducedFiles(commits: readonly string[]): Promise<IntroducedFile[]> {
  if (commits.length === 0) return [];
  // --always prints a commit's header for each parent even when that diff is empty, so parents are counted right.
  const args = ['diff-tree', '--stdin', '-r', '-m', '--root', '--always', '--no-renames', '--format=%H', '-z'];
  const tokens = (await gitOk(args, Buffer.from(`${commits.join('\n')}\n`))).toString('utf8').split('\0');
  // Per commit: how many parents it was compared with, and each (path, mode, oid) it shows against one.
  const seen = new Map<string, { parents: number; files: Map<string, { file: IntroducedFile; count: number }> }>();
  let current: { parents: number; files: Map<string, { file: IntroducedFile; count: number }> } | undefined;
  let commit = '';
  for (let i = 0; i < tokens.length; i++) {
    // A header is followed by a newline, which starts the next token.
    const token = tokens[i].replace(/^\n+/, '');
    if (/^[0-9a-f]{40}$/.test(token)) {
      commit = token;
      current = seen.get(commit) ?? { parents: 0, files: new Map() };
      current.parents++;
      seen.set(commit, current);
      continue;
    }
    if (!token.startsWith(':') || current === undefined) continue;
    const [, newMode, , newOid, status] = token.slice(1).split(' ');
    const path = tokens[++i];
    if (status === 'D') continue;
    const key = `${newMode} ${newOid} ${path}`;
    const known = current.files.get(key);
    if (known) known.count++;
    else current.files.set(key, { file: { commit, path, mode: newMode, oid: newOid }, count: 1 });
  }
  return [...seen.values()].flatMap(({ parents, files }) => [...files.values()].filter((f) => f.count === parents).map((f) => f.file));
}

/** The sizes of blobs, by id. */
export async function blobSizes(oids: readonly string[]): Promise<Map<string, number>> {
  const unique = [...new Set(oids)];
  if (unique.length === 0) return new Map();
  const out = await gitOk(['cat-file', '--batch-check'], Buffer.from(`${unique.join('\n')}\n`));
  const sizes = new Map<string, number>();
  for (const line of out.toString('utf8').split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (type === 'blob') sizes.set(oid, Number(size));
  }
  return sizes;
}

/**
 * The commits a push puts on main's first-parent line, oldest first, each with its first parent: the steps
 * the audit trail describes one by one.
 */
async function firstParentSteps(oldOid: string, newOid: string): Promise<Array<{ commit: string; parent: string }>> {
  const range = oldOid === ZERO_OID ? [newOid] : [newOid, `^${oldOid}`];
  const out = await gitOk(['rev-list', '--first-parent', '--parents', '--reverse', ...range, '--']);
  return out
    .toString('utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [commit, parent] = line.split(' ');
      return { commit, parent: parent ?? ZERO_OID };
    });
}

/** One `git diff-tree -z` line (`:<modes> <old> <new> <status>`) and the path after it. */
function changedPath(line: string, path: string): ChangedPath {
  const [, , oldBlob, newBlob, status] = line.slice(1).split(' ');
  if (status === 'A') return { path, change: 'added', newOid: newBlob };
  if (status === 'D') return { path, change: 'deleted', oldOid: oldBlob };
  return { path, change: 'modified', oldOid: oldBlob, newOid: newBlob };
}

/**
 * Each commit a push puts on main's first-parent line, oldest first, with the files it changes against its
 * first parent: one git process for the whole line, as a push may carry thousands of commits.
 */
export async function firstParentChanges(
  oldOid: string,
  newOid: string,
): Promise<Array<{ commit: string; parent: string; changes: ChangedPath[] }>> {
  const steps = (await firstParentSteps(oldOid, newOid)).map((step) => ({ ...step, changes: [] as ChangedPath[] }));
  if (steps.length === 0) return steps;
  // A line of "<commit> <parent>" compares the commit with that parent alone; a root commit, with the empty tree.
  const input = steps.map(({ commit, parent }) => (parent === ZERO_OID ? commit : `${commit} ${parent}`)).join('\n');
  const args = ['diff-tree', '--stdin', '-r', '--root', '--always', '--no-renames', '--format=%H', '-z'];
  const tokens = (await gitOk(args, Buffer.from(`${input}\n`))).toString('utf8').split('\0');
  const byCommit = new Map(steps.map((step) => [step.commit, step.changes]));
  let current: ChangedPath[] | undefined;
  for (let i = 0; i < tokens.length; i++) {
    // A header is followed by a newline, which starts the next token.
    const token = tokens[i].replace(/^\n+/, '');
    if (/^[0-9a-f]{40}$/.test(token)) current = byCommit.get(token);
    else if (token.startsWith(':') && current !== undefined) current.push(changedPath(token, tokens[++i]));
  }
  return steps;
}
