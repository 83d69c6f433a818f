import path from 'node:path';
import { isEnvironmentName } from '@flagops/core';
import type { TriggerRecord, TriggerStore } from '../trigger-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { JsonStateFile } from './json-state-file.js';

interface TriggerFileContent {
  version: 1;
  triggers: TriggerRecord[];
}

export const TRIGGER_FILE = 'triggers.json';

const TRIGGER_FILE_HINT =
  '; it holds the triggers: restore it from a backup, or remove it to start without triggers (their URLs stop working)';

/** Triggers in `<stateDir>/triggers.json`, mode 0600, never in the flags repository. */
export class FileTriggerStore implements TriggerStore {
  private readonly file: JsonStateFile<TriggerFileContent>;

  constructor(stateDir: string) {
    this.file = new JsonStateFile(path.join(stateDir, TRIGGER_FILE), { parse: checkContent, hint: TRIGGER_FILE_HINT });
  }

  async list(): Promise<TriggerRecord[]> {
    return structuredClone((await this.file.read()).triggers);
  }

  create(record: TriggerRecord): Promise<boolean> {
    return this.file.change((next) => {
      if (next.triggers.some((t) => t.id === record.id)) return false;
      next.triggers.push({ ...record });
      return true;
    });
  }

  remove(org: string, id: string): Promise<TriggerRecord | undefined> {
    return this.file.change((next) => {
      const index = next.triggers.findIndex((t) => t.id === id && t.org === org);
      return index < 0 ? undefined : next.triggers.splice(index, 1)[0];
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.file.onChange(listener);
  }
}

function checkContent(data: unknown, file: string): TriggerFileContent {
  if (data === undefined) return { version: 1, triggers: [] };
  const fail = (where: string, what: string): never => {
    throw new Error(`${file}: ${where}: ${what}`);
  };
  const content = data as Partial<TriggerFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1) return fail('version', 'expected 1');
  if (!Array.isArray(content.triggers)) return fail('triggers', 'expected an array');
  content.triggers.forEach((t, i) => {
    const ok =
      t !== null &&
      typeof t === 'object' &&
      ['id', 'org', 'flagId', 'name', 'secretHash', 'createdAt'].every(
        (f) => typeof (t as unknown as Record<string, unknown>)[f] === 'string',
      ) &&
      isEnvironmentName(t.environment) &&
      t.action === 'kill';
    if (!ok) fail(`triggers[${i}]`, 'expected { id, org, flagId, environment, name, action: "kill", secretHash, createdAt }');
  });
  return content as TriggerFileContent;
}
