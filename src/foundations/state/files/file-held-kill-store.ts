import path from 'node:path';
import type { HeldKill, HeldKillStore } from '../held-kill-store.js';
import type { Unsubscribe } from '../unsubscribe.js';
import { JsonStateFile } from './json-state-file.js';

interface HeldKillFileContent {
  version: 1;
  kills: HeldKill[];
}

export const HELD_KILL_FILE = 'held-kills.json';

const HELD_KILL_FILE_HINT =
  '; it holds kills not yet on the git remote: restore it from a backup (removing it loses those kills: make them again once the service runs)';

/** Held kills in `<stateDir>/held-kills.json`, mode 0600. */
export class FileHeldKillStore implements HeldKillStore {
  private readonly file: JsonStateFile<HeldKillFileContent>;

  constructor(stateDir: string) {
    this.file = new JsonStateFile(path.join(stateDir, HELD_KILL_FILE), { parse: checkContent, hint: HELD_KILL_FILE_HINT });
  }

  async list(org: string, except: ReadonlySet<string> = new Set()): Promise<HeldKill[]> {
    return structuredClone((await this.file.read()).kills.filter((kill) => kill.org === org && !except.has(kill.id)));
  }

  add(kill: HeldKill): Promise<void> {
    return this.file.change((next) => {
      if (!next.kills.some((k) => k.id === kill.id && k.org === kill.org)) next.kills.push(structuredClone(kill));
    });
  }

  remove(org: string, ids: readonly string[]): Promise<void> {
    const gone = new Set(ids);
    return this.file.change((next) => {
      next.kills = next.kills.filter((kill) => kill.org !== org || !gone.has(kill.id));
    });
  }

  onChange(listener: () => void): Unsubscribe {
    return this.file.onChange(listener);
  }
}

function checkContent(data: unknown, file: string): HeldKillFileContent {
  if (data === undefined) return { version: 1, kills: [] };
  const content = data as Partial<HeldKillFileContent> | null;
  if (content === null || typeof content !== 'object' || content.version !== 1 || !Array.isArray(content.kills))
    throw new Error(`${file}: expected { version: 1, kills: [...] }`);
  content.kills.forEach((kill, i) => {
    const ok =
      kill !== null &&
      typeof kill === 'object' &&
      ['id', 'org', 'project', 'flag', 'environment', 'summary', 'heldAt'].every(
        (field) => typeof (kill as unknown as Record<string, unknown>)[field] === 'string',
      ) &&
      (kill.action === 'kill' || kill.action === 'clear_kill' || kill.action === 'guard_failed');
    if (!ok) throw new Error(`${file}: kills[${i}]: expected a held kill { id, org, project, flag, environment, action, … }`);
  });
  return content as HeldKillFileContent;
}
