import { createApi } from './api.js';
import { h, replace } from './dom.js';
import { keysPage } from './keys/keys-page.js';
import { connectLive, type Live } from './live.js';
import { auditPage } from './pages/audit-page.js';
import { flagByKeyPage, flagPage } from './pages/flag-page.js';
import { flagsPage } from './pages/flags-page.js';
import { projectsPage } from './pages/projects-page.js';
import { RETURN_TO_KEY, type SignInNotice, signInPage } from './pages/sign-in-page.js';
import { proposalsPage } from './proposals/proposals-page.js';
import { hrefOf, type Page, type PageContext, parseHash, type View } from './route.js';
import { segmentPage, segmentsPage } from './targeting/segments-page.js';
import type { SessionInfo } from './types.js';
import { loadKeyNames } from './ui/actor-names.js';
import { invalidFilesBanner } from './ui/invalid-files-banner.js';

/** The dashboard's entry point: find out whether we are signed in, then show the view the hash names. */
const root = document.getElementById('app')!;
let session: SessionInfo | null = null;
let page: Page | null = null;
/** Stops the invalid-files banner's live updates. */
let stopBanner: (() => void) | null = null;
/** The server's announcements while signed in. */
let live: Live | null = null;

const api = createApi({
  csrfToken: () => session?.csrfToken ?? null,
  onUnauthorized: () => {
    if (session) showSignIn({ text: 'Your session has ended. Sign in again.' });
  },
});

function pageFor(ctx: PageContext, view: View): Page {
  switch (view.name) {
    case 'projects':
      return projectsPage(ctx);
    case 'flags':
      return flagsPage(ctx, view.projectId);
    case 'segments':
      return segmentsPage(ctx, view.projectId);
    case 'segment':
      return segmentPage(ctx, view.projectId, view.key);
    case 'flag':
      return flagPage(ctx, view.flagId, view.env);
    case 'flag-by-key':
      return flagByKeyPage(ctx, view.projectSlug, view.key);
    case 'audit':
      return auditPage(ctx, view.filters);
    case 'proposals':
      return proposalsPage(ctx);
    case 'keys':
      return keysPage(ctx);
    case 'not-found':
      return {
        element: h(
          'section',
          { class: 'page' },
          h('h1', null, 'Not found'),
          h('p', null, h('a', { href: '#/projects' }, 'Back to the projects')),
        ),
        title: 'Not found',
      };
  }
}

function showView(): void {
  if (!session || !live) return;
  page?.dispose?.();
  const ctx: PageContext = { api, session, live, navigate: (view) => (location.hash = hrefOf(view)) };
  page = pageFor(ctx, parseHash(location.hash));
  document.title = `${page.title} · flagops`;
  const main = document.getElementById('view');
  if (main) replace(main, page.element);
}

async function signOut(): Promise<void> {
  let providerSignOutUrl: string | undefined;
  try {
    ({ providerSignOutUrl } = await api.send<{ providerSignOutUrl?: string }>('DELETE', '/dashboard/api/session'));
  } finally {
    showSignIn({ text: 'Signed out.', ...(providerSignOutUrl ? { providerSignOutUrl } : {}) });
  }
}

async function showApp(signedIn: SessionInfo): Promise<void> {
  session = signedIn;
  // Back from single sign-on: where the page was before it left.
  const returnTo = sessionStorage.getItem(RETURN_TO_KEY);
  sessionStorage.removeItem(RETURN_TO_KEY);
  if (returnTo && (location.hash === '' || location.hash === '#')) history.replaceState(null, '', returnTo);
  stopBanner?.();
  live?.close();
  live = connectLive();
  await loadKeyNames(api);
  const invalidFiles = invalidFilesBanner(api, live);
  stopBanner = invalidFiles.dispose;
  replace(
    root,
    h(
      'header',
      { class: 'topbar' },
      h('a', { href: '#/projects', class: 'brand' }, 'flagops'),
      h(
        'nav',
        null,
        h('a', { href: '#/projects' }, 'Projects'),
        h('a', { href: '#/audit' }, 'Audit log'),
        h('a', { href: '#/proposals' }, 'Proposals'),
        h('a', { href: '#/keys' }, 'Keys'),
      ),
      h('span', { class: 'who', title: `${signedIn.user.username} in ${signedIn.user.org}` }, signedIn.user.name),
      h('button', { type: 'button', class: 'secondary small', onclick: () => void signOut() }, 'Sign out'),
    ),
    invalidFiles.element,
    h('main', { id: 'view' }),
  );
  showView();
}

function showSignIn(notice?: SignInNotice): void {
  page?.dispose?.();
  page = null;
  stopBanner?.();
  stopBanner = null;
  live?.close();
  live = null;
  session = null;
  document.title = 'Sign in · flagops';
  replace(
    root,
    signInPage(api, (signedIn) => void showApp(signedIn), notice),
  );
}

/** Marks when the first screen can be used, for the browser's performance timeline (and the tests' 1 s budget). */
const usable = () => performance.mark('flagops:usable');

window.addEventListener('hashchange', showView);
api
  .get<SessionInfo>('/dashboard/api/session')
  .then(showApp, () => showSignIn())
  .finally(usable);
