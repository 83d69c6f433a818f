import type { Api } from '../api.js';
import { h, replace } from '../dom.js';
import type { Live } from '../live.js';
import type { InvalidFile } from '../types.js';

/** `file:line — message`, as an engineer looks it up in the repository. */
export function invalidFileLine(entry: InvalidFile): string {
  return `${entry.file}${entry.line === null ? '' : `:${entry.line}`} — ${entry.message}`;
}

function banner(files: InvalidFile[]): HTMLElement | null {
  if (files.length === 0) return null;
  const distinct = new Set(files.map((entry) => entry.file)).size;
  const count = distinct === 1 ? 'An invalid file is' : `${distinct} invalid files are`;
  return h(
    'div',
    { class: 'invalid-banner', role: 'alert' },
    h('strong', null, `${count} on main. `),
    'What each belongs to (a flag, or its whole project for project.yaml and kills.yaml) keeps serving its last valid state, and changes to it other than kills are refused until the file is fixed.',
    h(
      'ul',
      null,
      files.map((entry) => h('li', { class: 'mono', 'data-file': entry.file }, invalidFileLine(entry))),
    ),
  );
}

/**
 * The banner over every page while the organisation's main holds invalid files, on its own: it reads
 * /api/v1/invalid-files whenever main moves (a push that breaks or fixes a file shows at once), redraws only
 * when the list changes, and stops when disposed (at sign-out).
 */
export function invalidFilesBanner(api: Api, live: Live): { element: HTMLElement; dispose(): void } {
  const element = h('div', { class: 'invalid-banner-slot' });
  let shown = '';
  const dispose = live.follow(async () => {
    const { invalidFiles } = await api.get<{ invalidFiles: InvalidFile[] }>('/api/v1/invalid-files');
    const fingerprint = JSON.stringify(invalidFiles);
    if (fingerprint === shown) return;
    shown = fingerprint;
    replace(element, banner(invalidFiles));
  });
  return { element, dispose };
}
