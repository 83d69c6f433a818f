import { InvalidContentError, InvalidInputError } from '../../errors/kinds.js';
import { formatIssue, type ValidationIssue } from '../../validation/issue.js';
import { hashObject } from '../git/git-objects.js';
import type { ObjectStore, WriteBatch } from '../git/object-store.js';
import { writeTreeChanges } from '../git/tree-writer.js';
import { type FileNode, type ParseFile, parsedFileNode } from './tree-reader.js';

/** One file to write: its repository path and new content, or null to delete it. */
export interface FileChange {
  path: string;
  content: string | null;
}

/** Issues shown in one error message; the rest are counted. */
const MAX_LISTED_ISSUES = 5;

/** Relative, `/`-separated, no empty, `.` or `..` segments, nothing inside `.git`. */
export function assertRepositoryPath(path: string): void {
  const parts = path.split('/');
  const bad =
    path === '' ||
    path.includes('\\') ||
    path.includes('\0') ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p.toLowerCase() === '.git');
  if (bad) throw new InvalidInputError(`${JSON.stringify(path)} is not a valid repository path`, path);
}

export function issuesError(issues: readonly ValidationIssue[]): InvalidContentError {
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map(formatIssue);
  if (issues.length > MAX_LISTED_ISSUES) listed.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  return new InvalidContentError(`invalid repository content: ${listed.join('; ')}`, issues[0]?.file);
}

/**
 * Validates every changed file (any issue: InvalidInputError, nothing written), then adds the blobs and the
 * trees on their paths to `batch`, and returns the new root tree with the parsed files, so that the new
 * commit's state is assembled without reading them back. The caller awaits the batch before moving a ref.
 */
export async function writeChange(
  objects: ObjectStore,
  batch: WriteBatch,
  parse: ParseFile,
  baseTree: string | null,
  changes: readonly FileChange[],
): Promise<{ tree: string; known: Map<string, FileNode> }> {
  const byPath = new Map<string, string | null>();
  for (const change of changes) {
    assertRepositoryPath(change.path);
    if (byPath.has(change.path)) throw new InvalidInputError(`${change.path} is changed twice in one commit`, change.path);
    byPath.set(change.path, change.content);
  }
  const known = new Map<string, FileNode>();
  const issues: ValidationIssue[] = [];
  const blobs = new Map<string, Buffer>();
  for (const [path, content] of byPath) {
    if (content === null) continue;
    const parsed = parse(path, content);
    issues.push(...parsed.issues);
    const bytes = Buffer.from(content, 'utf8');
    const oid = hashObject('blob', bytes);
    blobs.set(path, bytes);
    known.set(path, parsedFileNode(path, oid, parsed));
  }
  if (issues.length > 0) throw issuesError(issues);
  const oids = new Map<string, string | null>();
  for (const path of byPath.keys()) {
    const bytes = blobs.get(path);
    oids.set(path, bytes ? batch.write('blob', bytes) : null);
  }
  return { tree: await writeTreeChanges(objects, batch, baseTree, oids), known };
}
