import { followedRemote } from '../../features/remote/followed-remote.js';
import { redact } from '../../features/remote/redact.js';
import { ConfigError, gitRemoteSettings, parseBootstrapKeys } from '../../foundations/config/config.js';
import { ImportRefused } from './prepare-import.js';

export interface ImportRemote {
  url: string;
  pushTimeoutSeconds?: number;
}

/**
 * The git remote an import into `org` must reach before main moves (remote mode), as the service's changes do;
 * null when the organisation's repository follows none. Which repository follows a remote is recorded by the
 * service; the remote's URL, credentials included, comes from the same environment the service has
 * (FLAGOPS_GIT_REMOTE, FLAGOPS_GIT_REMOTE_ORG, FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS). Throws ImportRefused when the
 * repository follows a remote the environment does not name.
 */
export async function importRemote(gitdir: string, org: string, env: NodeJS.ProcessEnv): Promise<ImportRemote | null> {
  const followed = await followedRemote(gitdir);
  const url = env.FLAGOPS_GIT_REMOTE || undefined;
  if (url === undefined) {
    if (followed === null) return null;
    throw new ImportRefused(
      `organisation ${org} follows the git remote ${followed} (remote mode): set FLAGOPS_GIT_REMOTE as the service has it, so the import reaches the remote before main moves`,
    );
  }
  let settings: ReturnType<typeof gitRemoteSettings>;
  try {
    settings = gitRemoteSettings(env, url);
  } catch (err) {
    if (err instanceof ConfigError) throw new ImportRefused(err.message);
    throw err;
  }
  const remote = { url, ...(settings.pushTimeoutSeconds === undefined ? {} : { pushTimeoutSeconds: settings.pushTimeoutSeconds }) };
  if (followed !== null) {
    if (followed !== redact(url))
      throw new ImportRefused(`FLAGOPS_GIT_REMOTE is ${redact(url)}, but organisation ${org} follows the git remote ${followed}`);
    return remote;
  }
  // The service has not started in remote mode yet: the organisation it would give the remote.
  let remoteOrg = settings.org;
  try {
    remoteOrg ??= parseBootstrapKeys(env.FLAGOPS_BOOTSTRAP_KEYS)[0]?.org;
  } catch (err) {
    if (err instanceof ConfigError) throw new ImportRefused(err.message);
    throw err;
  }
  return remoteOrg === org ? remote : null;
}
