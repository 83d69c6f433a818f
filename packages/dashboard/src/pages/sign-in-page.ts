import { type Api, ApiError, errorText } from '../api.js';
import { h } from '../dom.js';
import type { SessionInfo, SignInOptions } from '../types.js';

/** Where the page was (its hash) before single sign-on left it; shown again once signed in. */
export const RETURN_TO_KEY = 'flagops:return-to';

/** After sign-out: what else to offer (the provider's own sign-out, for a single sign-on session). */
export interface SignInNotice {
  text?: string;
  providerSignOutUrl?: string;
}

/** Single sign-on's part of the form: a link to /auth/oidc/login, disabled with the reason while it cannot work. */
function ssoChoice(sso: NonNullable<SignInOptions['sso']>): HTMLElement {
  const name = `Sign in with ${sso.label}`;
  if (!sso.available) {
    return h(
      'div',
      { class: 'sso' },
      h('p', { class: 'or' }, 'or'),
      h('button', { type: 'button', class: 'secondary', disabled: true }, name),
      h('p', { class: 'hint' }, 'Single sign-on is unavailable at the moment; see /healthz. Passwords still work.'),
    );
  }
  const link = h('a', { class: 'button secondary', href: sso.loginUrl }, name);
  // The hash is the page's own state and never reaches the server: kept here for the way back.
  link.addEventListener('click', () => sessionStorage.setItem(RETURN_TO_KEY, location.hash));
  return h('div', { class: 'sso' }, h('p', { class: 'or' }, 'or'), link);
}

/** The sign-in form. `notice` explains why it is shown again (a session that ended, a sign-out). */
export function signInPage(api: Api, onSignedIn: (session: SessionInfo) => void, notice: SignInNotice = {}): HTMLElement {
  const username = h('input', { name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const message = h('p', { class: 'form-error', role: 'alert' }, notice.text ?? '');
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
  // Named as the sign-in button names the provider (its issuer's host), once the options say it; until then,
  // by the host the link goes to, which is the provider's too.
  const providerSignOut = notice.providerSignOutUrl
    ? h('a', { href: notice.providerSignOutUrl, rel: 'noreferrer' }, `Also sign out of ${new URL(notice.providerSignOutUrl).host}`)
    : undefined;
  if (providerSignOut) form.append(h('p', null, providerSignOut));
  api.get<SignInOptions>('/dashboard/api/sign-in-options').then(
    (options) => {
      if (options.sso) form.append(ssoChoice(options.sso));
      if (options.sso && providerSignOut) providerSignOut.textContent = `Also sign out of ${options.sso.label}`;
    },
    () => undefined, // the password form works without it
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    button.disabled = true;
    message.textContent = '';
    try {
      onSignedIn(await api.send<SessionInfo>('POST', '/dashboard/api/session', { username: username.value, password: password.value }));
    } catch (err) {
      // Throttled per address and username (docs/dashboard.md): said once, in the page's own words.
      const throttled =
        err instanceof ApiError && err.status === 429
          ? `Too many failed sign-ins for this username from here. Wait ${err.retryAfterSeconds ?? 1} s, then try again.`
          : undefined;
      message.textContent =
        err instanceof ApiError && err.status === 401 ? 'Unknown username or wrong password.' : (throttled ?? errorText(err));
      password.value = '';
      password.focus();
    } finally {
      button.disabled = false;
    }
  });
  return h('main', { class: 'sign-in-page' }, form);
}
