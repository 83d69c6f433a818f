import { git } from '../helpers/git-cli.js';
import type { HttpClient, Json } from '../helpers/http-client.js';

/** Creates a project through the API and returns its body; fails the test on anything but 201. */
export async function createProject(api: HttpClient, slug: string, name = `Project ${slug}`): Promise<Json> {
  const res = await api.post('/api/v1/projects', { name, slug });
  if (res.status !== 201) throw new Error(`creating project ${slug}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Creates a flag through the API and returns its body; fails the test on anything but 201. */
export async function createFlag(api: HttpClient, projectId: string, body: Record<string, unknown>): Promise<Json> {
  const res = await api.post(`/api/v1/projects/${projectId}/flags`, body);
  if (res.status !== 201) throw new Error(`creating flag ${String(body.key)}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Commits on main, counted by the git CLI (one commit per change). */
export function commitCount(gitdir: string): number {
  const head = git(gitdir, 'for-each-ref', '--format=%(objectname)', 'refs/heads/main');
  return head === '' ? 0 : Number(git(gitdir, 'rev-list', '--count', 'main'));
}

/** The commit main points at, read by the git CLI. */
export function mainHead(gitdir: string): string {
  return git(gitdir, 'rev-parse', 'refs/heads/main');
}

/** A trailer of main's newest commit (`Flagops-Action`, ...), read by the git CLI. */
export function headTrailer(gitdir: string, key: string): string {
  return git(gitdir, 'log', '-1', `--format=%(trailers:key=${key},valueonly)`, 'main');
}

/** The full message of main's newest commit. */
export function headMessage(gitdir: string): string {
  return git(gitdir, 'log', '-1', '--format=%B', 'main');
}

/** A file of main's tree, as committed. */
export function committedFile(gitdir: string, path: string): string {
  return git(gitdir, 'show', `main:${path}`);
}
