import { type Api, ApiError, errorText } from '../api.js';
import { h } from '../dom.js';
import type { SessionInfo } from '../types.js';

/** The sign-in form. `notice` explains why it is shown again (a session that ended). */
export function signInPage(api: Api, onSignedIn: (session: SessionInfo) => void, notice?: string): HTMLElement {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const message = h('p', { class: 'form-error', role: 'alert' }, notice ?? '');
  const button = h('button', { type: 'submit', class: 'primary' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', 'aria-label': 'Sign in' },
    h('h1', null, 'flagops'),
    h('label', null, 'Username', username),
    h('label', null, 'Password', password),
    message,
    button,
    h('p', { class: 'hint' }, 'No account yet? An administrator creates one: see docs/dashboard.md.'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    message.textContent = '';
    try {
      onSignedIn(await api.send<SessionInfo>('POST', '/dashboard/api/session', { username: username.value, password: password.value }));
    } catch (err) {
      const wait = err instanceof ApiError && err.status === 429 && err.retryAfterSeconds ? ` Wait ${err.retryAfterSeconds} s.` : '';
      message.textContent =
        err instanceof ApiError && err.status === 401 ? 'Unknown username or wrong password.' : `${errorText(err)}${wait}`;
      password.value = '';
      password.focus();
    } finally {
      button.disabled = false;
    }
  });
  return h('main', { class: 'sign-in-page' }, form);
}
