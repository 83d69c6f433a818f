import { isEnvironmentName } from '@flagops/core';
import { readJsonStateFile, writeJsonStateFile } from '../state-files/state-files.js';
import { isKeyKind, isOrgName } from './key-format.js';
import type { KeyRecord, Organisation } from './principal.js';

/** `<dataDir>/state/keys.json`: runtime state, never part of the flags repository. */
export interface KeyFileContent {
  version: 1;
  organisations: Organisation[];
  keys: KeyRecord[];
}

export const KEY_FILE = 'keys.json';

export function emptyKeyFile(): KeyFileContent {
  return { version: 1, organisations: [], keys: [] };
}

/** The file's content, or null when it does not exist yet (first start). */
export async function readKeyFile(file: string): Promise<KeyFileContent | null> {
  const data = await readJsonStateFile(file);
  return data === undefined ? null : checkContent(file, data);
}

export async function writeKeyFile(file: string, content: KeyFileContent): Promise<void> {
  await writeJsonStateFile(file, content);
}

function checkContent(file: string, data: unknown): KeyFileContent {
  const fail = (where: string, what: string): never => {
    throw new Error(`${file}: ${where}: ${what}`);
  };
  if (!isObject(data) || data.version !== 1) return fail('version', 'expected 1');
  if (!Array.isArray(data.organisations)) return fail('organisations', 'expected an array');
  if (!Array.isArray(data.keys)) return fail('keys', 'expected an array');
  data.organisations.forEach((org, i) => {
    if (!isObject(org) || !isOrgName(org.name) || typeof org.createdAt !== 'string')
      fail(`organisations[${i}]`, 'expected { name, createdAt }');
  });
  data.keys.forEach((key, i) => {
    const problem = recordProblem(key);
    if (problem) fail(`keys[${i}]`, problem);
  });
  return data as unknown as KeyFileContent;
}

function recordProblem(value: unknown): string | null {
  if (!isObject(value)) return 'expected an object';
  for (const field of ['id', 'name', 'prefix', 'hash', 'createdAt'] as const) {
    if (typeof value[field] !== 'string') return `${field} must be a string`;
  }
  if (!isOrgName(value.org)) return 'org is not a valid organisation name';
  if (!isKeyKind(value.kind)) return 'kind must be admin, agent or sdk';
  if (value.kind === 'sdk' && (typeof value.projectId !== 'string' || !isEnvironmentName(value.environment))) {
    return 'an sdk key needs projectId and environment';
  }
  if (value.revokedAt !== undefined && typeof value.revokedAt !== 'string') return 'revokedAt must be a string';
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
