import path from 'node:path';
import { isEnvironmentName } from '@flagops/core';
import { isKeyKind, isOrgName } from '../../auth/key-format.js';
import { PEPPER_FILE } from '../../auth/key-hash.js';
import { StateFileError } from '../../state-files/state-files.js';
import type { KeyAdditions, KeyRecord, KeySet, KeyStore } from '../key-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { JsonStateFile } from './json-state-file.js';

/** `<dataDir>/state/keys.json`: runtime state, never part of the flags repository. */
interface KeyFileContent extends KeySet {
  version: 1;
  /** The fingerprint of the pepper the keys are hashed with (absent in a file written before it was recorded). */
  pepperCheck?: string;
}

export const KEY_FILE = 'keys.json';

const KEY_FILE_HINT =
  '; it holds every organisation and key: restore it from a backup (removing it starts a new organisation with a new admin key, and every key made before stops working)';

/** Keys and organisations in `<stateDir>/keys.json`, read once and kept in memory. */
export class FileKeyStore implements KeyStore {
  private readonly file: JsonStateFile<KeyFileContent>;

  constructor(private readonly stateDir: string) {
    this.file = new JsonStateFile(path.join(stateDir, KEY_FILE), { parse: checkContent, hint: KEY_FILE_HINT });
  }

  async list(): Promise<KeySet> {
    const { organisations, keys } = await this.file.read();
    return structuredClone({ organisations, keys });
  }

  add<T>(plan: (current: Readonly<KeySet>) => KeyAdditions<T>): Promise<T> {
    return this.file.change((next) => {
      const { organisations = [], keys = [], result } = plan(next);
      for (const org of organisations) if (!next.organisations.some((o) => o.name === org.name)) next.organisations.push({ ...org });
      next.keys.push(...keys.map((k) => ({ ...k })));
      return result;
    });
  }

  revoke(org: string, id: string, at: string): Promise<KeyRecord | undefined> {
    return this.file.change((next) => {
      const record = next.keys.find((k) => k.id === id && k.org === org);
      if (record) record.revokedAt ??= at;
      return record && { ...record };
    });
  }

  rotate(
    org: string,
    id: string,
    plan: (old: Readonly<KeyRecord>, current: Readonly<KeySet>) => { replacement: KeyRecord; rotatedAt: string; graceEndsAt: string },
  ): Promise<{ old: KeyRecord; replacement: KeyRecord } | undefined> {
    return this.file.change((next) => {
      const record = next.keys.find((k) => k.id === id && k.org === org);
      if (!record) return undefined;
      const { replacement, rotatedAt, graceEndsAt } = plan({ ...record }, next);
      Object.assign(record, { rotatedAt, replacedBy: replacement.id, graceEndsAt });
      next.keys.push({ ...replacement });
      return { old: { ...record }, replacement: { ...replacement } };
    });
  }

  async matchPepper(check: string): Promise<void> {
    if ((await this.file.read()).pepperCheck === check) return;
    await this.file.change((next) => {
      if (next.pepperCheck !== undefined && next.pepperCheck !== check && next.keys.length > 0) {
        throw new StateFileError(
          `${path.join(this.stateDir, PEPPER_FILE)} is not the pepper the keys in ${this.file.file} were hashed with (damaged, or from another backup): every key would be refused; restore both files from one backup of the state directory, or remove both to start with no keys`,
        );
      }
      next.pepperCheck = check;
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.file.onChange(listener);
  }
}

function checkContent(data: unknown, file: string): KeyFileContent {
  if (data === undefined) return { version: 1, organisations: [], keys: [] };
  const fail = (where: string, what: string): never => {
    throw new Error(`${file}: ${where}: ${what}`);
  };
  if (!isObject(data) || data.version !== 1) return fail('version', 'expected 1');
  if (!Array.isArray(data.organisations)) return fail('organisations', 'expected an array');
  if (!Array.isArray(data.keys)) return fail('keys', 'expected an array');
  if (data.pepperCheck !== undefined && !(typeof data.pepperCheck === 'string' && /^hmac-sha256:[0-9a-f]{64}$/.test(data.pepperCheck)))
    return fail('pepperCheck', 'expected hmac-sha256: and 64 hexadecimal digits');
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
  for (const field of ['revokedAt', 'expiresAt', 'rotatedAt', 'replacedBy', 'graceEndsAt', 'rotatedFrom', 'createdBy'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string') return `${field} must be a string`;
  }
  if (value.projects !== undefined && !(Array.isArray(value.projects) && value.projects.every((p) => typeof p === 'string')))
    return 'projects must be an array of project ids';
  if (value.environments !== undefined && !(Array.isArray(value.environments) && value.environments.every(isEnvironmentName)))
    return 'environments must be an array of dev, staging and prod';
  return null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
