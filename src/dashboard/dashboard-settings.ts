import { ConfigError } from '../config/config.js';

export interface DashboardSettings {
  /** FLAGOPS_TRUST_PROXY: believe X-Forwarded-Proto/-Host/-For (behind a reverse proxy only). Default false. */
  trustProxy: boolean;
}

/** The dashboard's settings from the environment (docs/dashboard.md, "Behind a reverse proxy"). */
export function readDashboardSettings(env: Readonly<Record<string, string | undefined>>): DashboardSettings {
  const value = (env.FLAGOPS_TRUST_PROXY ?? '').trim().toLowerCase();
  if (value === '' || value === 'false' || value === '0') return { trustProxy: false };
  if (value === 'true' || value === '1') return { trustProxy: true };
  throw new ConfigError(`FLAGOPS_TRUST_PROXY must be true or false, got ${JSON.stringify(env.FLAGOPS_TRUST_PROXY)}`);
}
