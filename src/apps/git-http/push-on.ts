import { spawn } from 'node:child_process';

/** Where a push through the service must land before main moves here (remote mode): the git remote's main. */
export interface PushOnTarget {
  /** FLAGOPS_GIT_REMOTE: a URL or path, credentials included. */
  url: string;
  timeoutMs: number;
  /**
   * Why main here and the remote's main had diverged when the push came (changes are refused until an operator
   * reconciles them); null when they had not. A value, not a question: the target reaches the hook as JSON.
   */
  diverged?: string | null;
}

/** The remote's URL with any password replaced, for what the pusher reads. */
function printable(url: string): string {
  return url.replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@');
}

/**
 * What of the hook's environment belongs to the push it checks, not to the push on to the remote: git's
 * quarantine (a receive-pack that inherits it refuses every ref update), the pusher's push options and
 * certificate, the client's protocol, what http-backend was given, and what the service tells the hook
 * (FLAGOPS_*). A remote git reaches by starting its own receive-pack (a path, file://) would otherwise see
 * them. GIT_DIR and the object directories stay, to read the pushed objects from their quarantine: git keeps
 * those from the remote side itself.
 */
const RECEIVING_SIDE = /^(GIT_QUARANTINE_PATH|GIT_PUSH_OPTION_.*|GIT_PUSH_CERT.*|GIT_PROTOCOL|GIT_PROJECT_ROOT|GIT_HTTP_.*|FLAGOPS_.*)$/;

/** The environment of the push on to the remote, from the hook's. */
function pushOnEnv(hookEnv: NodeJS.ProcessEnv, url: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(hookEnv)) if (value !== undefined && !RECEIVING_SIDE.test(name)) env[name] = value;
  // The URL (credentials and all) is given as configuration in the environment, not as an argument that any
  // user of the machine could read in the process list.
  return {
    ...env,
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'remote.flagops-remote.url',
    GIT_CONFIG_VALUE_0: url,
  };
}

/** The host took the update and refused it itself (a protected branch, a hook of its own). */
const REFUSED_BY_HOST = /\[remote rejected\]/;

/** The host refused the update because its main is no longer the commit the push builds on. */
const MOVED = /\[rejected\]|non-fast-forward|fetch first|stale info/;

/**
 * Pushes `commit` to the remote's main, as a fast-forward only, from the pre-receive hook: the remote takes a
 * push through the service before main moves here, as it takes every API change, so no control plane serves
 * what the remote (and so every other control plane) will not hold. Null when the remote took it; otherwise
 * why the push is refused, nothing changed anywhere.
 */
export function pushOn(target: PushOnTarget, commit: string): Promise<string | null> {
  if (target.diverged) return Promise.resolve(`refs/heads/main: ${target.diverged}; nothing was changed`);
  return new Promise((resolve) => {
    // curl's low-speed limit ends git's HTTP helper too when the host stops answering: stopping git push at the
    // deadline leaves its helper, which would otherwise go on waiting on the host for ever.
    const seconds = String(Math.max(1, Math.ceil(target.timeoutMs / 1000)));
    const args = ['-c', 'http.lowSpeedLimit=1', '-c', `http.lowSpeedTime=${seconds}`, 'push', '--porcelain', '--quiet'];
    const child = spawn('git', [...args, 'flagops-remote', `${commit}:refs/heads/main`], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: pushOnEnv(process.env, target.url),
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      // The helper git started holds the other ends of these pipes until it ends: the push is answered now.
      child.stdout.destroy();
      child.stderr.destroy();
    }, target.timeoutMs);
    const where = `the git remote ${printable(target.url)}`;
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve(`refs/heads/main: ${where} could not be pushed to (${err.message}); nothing was changed: push again`);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) return resolve(null);
      const said = printable(out).trim().split('\n').slice(-3).join(' ').slice(0, 300);
      if (signal !== null)
        resolve(`refs/heads/main: ${where} did not answer within ${target.timeoutMs} ms; nothing was changed: push again when it answers`);
      else if (MOVED.test(out))
        resolve(
          `refs/heads/main: ${where} has changes main here does not have yet (another control plane, or a merge on the git host); nothing was changed: fetch again in a moment, rebase on main and push again`,
        );
      else if (REFUSED_BY_HOST.test(out)) {
        // The host answered and refused (a protected branch, its own hook): its words say why; pushing again will not do.
        const hostSaid = printable(out)
          .split('\n')
          .flatMap((line) => (line.startsWith('remote: ') ? [line.slice('remote: '.length).trim()] : []))
          .filter((line) => line !== '')
          .join(' ')
          .slice(0, 300);
        resolve(
          `refs/heads/main: ${where} refused the push${hostSaid ? `: ${hostSaid}` : ` (${said})`}; nothing was changed here or there`,
        );
      } else resolve(`refs/heads/main: ${where} did not take the push (${said}); nothing was changed: push again when it is back`);
    });
  });
}
