import { createHash } from 'node:crypto';

function shortHash(input: string): string {
  return createHash('sha1').update(input, 'utf8').digest('hex').slice(0, 16);
}

/**
 * The id of a project whose project.yaml has none: `prj_` + the first 16 hex digits of sha1(slug).
 * Deterministic, so every server reading the same commit agrees on it and the API paths stay stable.
 */
export function deriveProjectId(slug: string): string {
  return `prj_${shortHash(slug)}`;
}

/** The id of a flag whose file has none: `flg_` + the first 16 hex digits of sha1("<slug>/<key>"). */
export function deriveFlagId(projectSlug: string, flagKey: string): string {
  return `flg_${shortHash(`${projectSlug}/${flagKey}`)}`;
}
