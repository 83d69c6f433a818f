import { ENVIRONMENTS } from '@flagops/core';
import { ApiError } from '../api.js';
import { type Child, h, replace } from '../dom.js';
import { localTimeWithZone, utcTime } from '../logic/text.js';
import type { Page, PageContext } from '../route.js';
import type { CreatedKey, EnvironmentName, KeyView, Project } from '../types.js';
import { confirmDialog } from '../ui/confirm-dialog.js';
import { type KeyApi, keyApi } from './key-api.js';
import {
  defaultGrace,
  endedKeyText,
  failureText,
  GRACE_CHOICES,
  keyState,
  mayRevoke,
  mayRotate,
  refusalText,
  rotationOutcome,
  rotationSteps,
  scopeText,
  sortKeys,
  stateText,
} from './key-model.js';

const KIND_LABEL: Record<KeyView['kind'], string> = { admin: 'admin', agent: 'agent', sdk: 'SDK' };

/**
 * `#/keys`: key management with an admin key pasted into the page, since a session (of any role) may not manage
 * keys. The key is held in this page's closure only: never stored, sent only to this origin's /api/v1 as a bearer
 * token, and gone when the person leaves the page, reloads or closes the tab. Without a key the page shows the
 * same workflow as the curl commands of docs/credentials.md, with this control plane's origin.
 */
export function keysPage(ctx: PageContext): Page {
  /** The pasted admin key's client, and the key's prefix; null until a key is checked. */
  let api: KeyApi | null = null;
  let heldPrefix = '';
  let projects: Project[] = [];
  let keys: KeyView[] = [];

  const body = h('div', { class: 'keys-body' });
  const refusal = h('p', { class: 'form-error', role: 'alert', 'data-testid': 'key-refusal' });
  const outcome = h('div', { class: 'key-outcome', 'data-testid': 'key-outcome', 'aria-live': 'polite' });
  const failure = h('p', { class: 'form-error', role: 'alert', 'data-testid': 'key-failure' });
  const rows = h('tbody');

  const projectName = (id: string) => {
    const project = projects.find((p) => p.id === id);
    return project ? project.slug : id;
  };

  const forget = (why?: string) => {
    api = null;
    heldPrefix = '';
    keys = [];
    projects = [];
    replace(outcome);
    failure.textContent = '';
    showPaste();
    refusal.textContent = why ?? '';
  };

  /** Runs an action of the key routes; a 401 means the key itself ended (revoked, expired, rotated): forget it. */
  const act = async (what: string, task: (client: KeyApi) => Promise<void>) => {
    if (!api) return;
    failure.textContent = '';
    try {
      await task(api);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) forget(endedKeyText(heldPrefix, err));
      else failure.textContent = failureText(what, err);
    }
  };

  const load = async (client: KeyApi) => {
    [keys, projects] = await Promise.all([client.list(), client.projects()]);
    if (api === client) showKeys();
  };

  // ---- without a key: the paste field and the curl workflow ----

  function showPaste(): void {
    const field = h('input', {
      type: 'password',
      id: 'admin-key',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'svc_adm_…',
      class: 'mono key-field',
    });
    const use = h('button', { type: 'button', class: 'primary' }, 'Use this key');
    const check = async () => {
      const candidate = field.value.trim();
      // The field never keeps the key: from here on it lives in the client's closure only.
      field.value = '';
      refusal.textContent = '';
      if (candidate === '') {
        refusal.textContent = 'Paste an admin key first.';
        return;
      }
      const client = keyApi(candidate);
      use.disabled = true;
      try {
        api = client;
        heldPrefix = candidate.slice(0, 16);
        await load(client);
      } catch (err) {
        api = null;
        heldPrefix = '';
        refusal.textContent = refusalText(err);
      } finally {
        use.disabled = false;
      }
    };
    use.addEventListener('click', () => void check());
    field.addEventListener('keydown', (event) => {
      if (event.key === 'Enter') void check();
    });
    replace(
      body,
      h(
        'div',
        { class: 'key-paste' },
        h('label', { for: 'admin-key' }, 'Admin key'),
        h('div', { class: 'inline-form' }, field, use),
        refusal,
      ),
      curlWorkflow(location.origin),
    );
  }

  // ---- with a key: the list, and the controls ----

  function showKeys(): void {
    replace(
      body,
      h(
        'p',
        { class: 'key-held', 'data-testid': 'key-held' },
        h('span', null, 'Using the admin key ', h('code', null, `${heldPrefix}…`), ', held in this tab only.'),
        h('button', { type: 'button', class: 'secondary small', onclick: () => forget() }, 'Forget the key'),
      ),
      outcome,
      failure,
      createForm(),
      h('h2', null, 'Keys this admin key manages'),
      h(
        'table',
        { class: 'grid keys-table', 'data-testid': 'keys-table' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Kind', 'Name', 'Prefix', 'Project / environment or limits', 'Expires', 'Status', ''].map((t) => h('th', null, t)),
          ),
        ),
        rows,
      ),
    );
    renderRows();
  }

  function renderRows(): void {
    const now = Date.now();
    replace(
      rows,
      sortKeys(keys, now).map((key) => keyRow(key, now)),
    );
  }

  function keyRow(key: KeyView, now: number): HTMLElement {
    const state = keyState(key, now);
    const replacement = key.replacedBy ? keys.find((k) => k.id === key.replacedBy) : undefined;
    return h(
      'tr',
      { 'data-key-id': key.id, 'data-prefix': key.prefix, class: state.state === 'active' || state.state === 'grace' ? null : 'ended' },
      h('td', null, KIND_LABEL[key.kind]),
      h('td', null, key.name),
      h('td', { class: 'mono' }, `${key.prefix}…`),
      h('td', null, scopeText(key, projectName)),
      h('td', key.expiresAt ? { title: utcTime(key.expiresAt) } : null, key.expiresAt ? localTimeWithZone(key.expiresAt) : 'never'),
      h(
        'td',
        { 'data-slot': 'status' },
        stateText(state),
        replacement ? h('span', { class: 'muted' }, ` (replaced by ${replacement.prefix}…)`) : null,
      ),
      h(
        'td',
        { class: 'nowrap' },
        mayRotate(key, now) ? h('button', { type: 'button', class: 'secondary small', onclick: () => void rotate(key) }, 'Rotate…') : null,
        ' ',
        mayRevoke(key) ? h('button', { type: 'button', class: 'secondary small', onclick: () => void revoke(key) }, 'Revoke…') : null,
      ),
    );
  }

  function createForm(): HTMLElement {
    if (projects.length === 0)
      return h('p', { class: 'muted' }, 'This admin key sees no project yet: create a project first, then its SDK keys here.');
    const project = h(
      'select',
      { name: 'project' },
      projects.map((p) => h('option', { value: p.id }, `${p.name} (${p.slug})`)),
    );
    const environment = h(
      'select',
      { name: 'environment' },
      ENVIRONMENTS.map((env) => h('option', { value: env }, env)),
    );
    const name = h('input', { name: 'name', maxlength: 100, placeholder: 'web shop' });
    const form = h(
      'form',
      { class: 'inline-form', 'aria-label': 'Create an SDK key' },
      h('label', null, 'Project', project),
      h('label', null, 'Environment', environment),
      h('label', null, 'Name (optional)', name),
      h('button', { type: 'submit', class: 'primary' }, 'Create SDK key'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void act('Creating the SDK key failed', async (client) => {
        const created = await client.createSdkKey({
          projectId: project.value,
          environment: environment.value as EnvironmentName,
          ...(name.value.trim() ? { name: name.value.trim() } : {}),
        });
        await load(client);
        showSecret(
          `New SDK key for ${projectName(project.value)} / ${environment.value}`,
          created,
          'Copy it into the application’s configuration or your secret manager now: it is shown this once.',
        );
      });
    });
    return h('section', { class: 'key-create' }, h('h2', null, 'New SDK key'), form);
  }

  async function rotate(key: KeyView): Promise<void> {
    const grace = h(
      'select',
      { name: 'grace', 'aria-label': 'Grace period' },
      GRACE_CHOICES.map((c) => h('option', { value: c.seconds, selected: c.seconds === defaultGrace(key) }, c.label)),
    );
    const answer = await confirmDialog({
      title: `Rotate ${key.name}?`,
      body: [
        h(
          'p',
          null,
          `A new ${KIND_LABEL[key.kind]} key replaces ${key.prefix}… with the same name and scope (${scopeText(key, projectName)}).`,
        ),
        h('label', null, 'The old key keeps working for', grace),
        h('p', { class: 'hint' }, 'Long enough to deploy the new key everywhere the old one is used.'),
      ],
      confirmLabel: 'Rotate',
    });
    if (!answer.confirmed) return;
    await act(`Rotating ${key.prefix}… failed`, async (client) => {
      const created = await client.rotate(key.id, Number(grace.value));
      // Rotating the key this page holds: carry on with its replacement.
      const next = key.prefix === heldPrefix ? keyApi(created.key) : client;
      if (next !== client) {
        api = next;
        heldPrefix = created.prefix;
      }
      await load(next);
      const old = keys.find((k) => k.id === key.id);
      showSecret(`New key replacing ${key.prefix}…`, created, rotationOutcome(old, Date.now()));
    });
  }

  async function revoke(key: KeyView): Promise<void> {
    const answer = await confirmDialog({
      title: `Revoke ${key.name}?`,
      body: h('p', null, `${key.prefix}… gets 401 from then on, everywhere it is used. This cannot be undone.`),
      confirmLabel: 'Revoke',
      danger: true,
    });
    if (!answer.confirmed) return;
    await act(`Revoking ${key.prefix}… failed`, async (client) => {
      await client.revoke(key.id);
      if (key.prefix === heldPrefix) {
        forget(`The admin key ${key.prefix}… was revoked: paste another one to go on.`);
        return;
      }
      await load(client);
      replace(outcome, h('p', { role: 'status' }, `Revoked ${key.name} (${key.prefix}…): it gets 401 from now on.`));
    });
  }

  /** A new key, shown this once, with a copy button; it stays until the next action or leaving the page. */
  function showSecret(title: string, created: CreatedKey, next: string): void {
    const secret = h('code', { class: 'secret', 'data-testid': 'new-key' }, created.key);
    const copied = h('span', { class: 'muted', role: 'status' });
    const copy = async () => {
      try {
        await navigator.clipboard.writeText(created.key);
        copied.textContent = 'Copied.';
      } catch {
        // No clipboard (an insecure origin, a refusal): select it for Ctrl+C instead.
        getSelection()?.selectAllChildren(secret);
        copied.textContent = 'Selected: copy it with Ctrl+C.';
      }
    };
    replace(
      outcome,
      h(
        'div',
        { class: 'new-key' },
        h('h2', null, title),
        h(
          'p',
          null,
          secret,
          ' ',
          h('button', { type: 'button', class: 'secondary small', onclick: () => void copy() }, 'Copy'),
          ' ',
          copied,
        ),
        h('p', { class: 'hint' }, `Prefix ${created.prefix}…; shown this once, the control plane keeps only its hash.`),
        h('p', { class: 'key-next', 'data-testid': 'key-next' }, next),
        h('button', { type: 'button', class: 'secondary small', onclick: () => replace(outcome) }, 'Done: hide the key'),
      ),
    );
  }

  // A rotated key's grace ends while the page is open: its status follows.
  const timer = setInterval(() => {
    if (api) renderRows();
  }, 30_000);

  showPaste();
  const element = h('section', { class: 'page keys-page' }, h('h1', null, 'Keys'), why(ctx), body);
  return {
    element,
    title: 'Keys',
    dispose: () => {
      clearInterval(timer);
      api = null;
    },
  };
}

/** Why the page asks for an admin key, and where the key goes. */
function why(ctx: PageContext): HTMLElement {
  const role = ctx.session.role ?? 'admin';
  return h(
    'div',
    { class: 'keys-why', 'data-testid': 'keys-why' },
    h(
      'p',
      null,
      'Keys are managed with an admin key, never with a dashboard session: whatever its role, a session may not create, rotate or revoke keys. ',
      'That is by design: a key outlives the session, so a stolen or forgotten session must not be able to make one. ',
      `Your session (${role}) is no exception: paste an admin key below to manage keys here, or use the curl commands.`,
    ),
    h(
      'p',
      { class: 'muted' },
      "The key stays in this tab's memory only: it is not stored (no cookie, no local storage), it is sent only to this control plane's /api/v1 as ",
      h('code', null, 'Authorization: Bearer'),
      ', and it is forgotten when you leave this page, reload or close the tab.',
    ),
  );
}

/** The rotation workflow as curl commands for this control plane. */
function curlWorkflow(origin: string): HTMLElement {
  const steps: Child[] = rotationSteps(origin).map((step) =>
    h(
      'li',
      null,
      h('strong', null, step.title),
      h('p', null, step.text),
      step.command ? h('pre', { class: 'command mono' }, step.command) : null,
    ),
  );
  return h(
    'section',
    { class: 'key-steps', 'data-testid': 'key-steps' },
    h('h2', null, 'Rotating an SDK key with curl'),
    h(
      'p',
      null,
      'With an admin key in ',
      h('code', null, 'ADMIN_KEY'),
      ' (',
      h('code', null, 'read -rs ADMIN_KEY && export ADMIN_KEY'),
      ' reads it without echo and keeps it out of the shell history):',
    ),
    h('ol', null, steps),
  );
}
