import { ApiError, errorText } from '../api.js';
import { localTimeWithZone } from '../logic/text.js';
import type { KeyView } from '../types.js';

/** The grace periods the page offers for a rotation (the API takes 0 to 604,800 seconds). */
export const GRACE_CHOICES: readonly { seconds: number; label: string }[] = [
  { seconds: 0, label: 'None: the old key stops at once' },
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 604_800, label: '7 days' },
];

/** Applications hold SDK keys, so their rotation offers time to deploy the new one; other keys end at once. */
export function defaultGrace(key: Pick<KeyView, 'kind'>): number {
  return key.kind === 'sdk' ? 86_400 : 0;
}

/** Where a key stands now. A rotated key is `grace` until its grace ends, then `replaced`. */
export type KeyState =
  | { state: 'active' }
  | { state: 'grace'; until: string }
  | { state: 'replaced'; at: string }
  | { state: 'revoked'; at: string }
  | { state: 'expired'; at: string };

export function keyState(key: KeyView, now: number): KeyState {
  if (key.revokedAt) return { state: 'revoked', at: key.revokedAt };
  if (key.rotatedAt) {
    const ends = key.graceEndsAt ?? key.rotatedAt;
    return Date.parse(ends) > now ? { state: 'grace', until: ends } : { state: 'replaced', at: ends };
  }
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return { state: 'expired', at: key.expiresAt };
  return { state: 'active' };
}

/** Whether the key still answers: active, or rotated and still in its grace. */
export function isLive(state: KeyState): boolean {
  return state.state === 'active' || state.state === 'grace';
}

/** The status cell, in words. */
export function stateText(state: KeyState, time: (iso: string) => string = localTimeWithZone): string {
  switch (state.state) {
    case 'active':
      return 'active';
    case 'grace':
      return `rotated: still valid until ${time(state.until)}, then only its replacement`;
    case 'replaced':
      return `rotated: stopped at ${time(state.at)}`;
    case 'revoked':
      return `revoked at ${time(state.at)}`;
    case 'expired':
      return `expired at ${time(state.at)}`;
  }
}

/** Only a live key that was not rotated yet may be rotated (the API answers 409 otherwise); any unrevoked key may be revoked. */
export function mayRotate(key: KeyView, now: number): boolean {
  return keyState(key, now).state === 'active';
}

export function mayRevoke(key: KeyView): boolean {
  return key.revokedAt === undefined;
}

/** Keys that still answer first, then the ended ones; newest first within each. */
export function sortKeys(keys: readonly KeyView[], now: number): KeyView[] {
  const rank = (key: KeyView) => (isLive(keyState(key, now)) ? 0 : 1);
  return [...keys].sort((a, b) => rank(a) - rank(b) || b.createdAt.localeCompare(a.createdAt));
}

/** What a key may reach: an SDK key's project and environment, an admin or agent key's limits. */
export function scopeText(key: KeyView, projectName: (id: string) => string): string {
  if (key.kind === 'sdk') return `${key.projectId ? projectName(key.projectId) : '?'} / ${key.environment ?? '?'}`;
  const projects = key.projects ? `projects ${key.projects.map(projectName).join(', ')}` : 'every project';
  const environments = key.environments ? `environments ${key.environments.join(', ')}` : 'every environment';
  return `${projects}; ${environments}`;
}

/** The sentence under a rotation's new key: what happens to the old one, and what to do now. */
export function rotationOutcome(old: KeyView | undefined, now: number, time: (iso: string) => string = localTimeWithZone): string {
  const state = old ? keyState(old, now) : undefined;
  if (state?.state === 'grace') return `Both keys are valid until ${time(state.until)}; deploy the new key, then the old one stops.`;
  return 'The old key stopped working at once: only the new key is valid. Deploy it now.';
}

/**
 * A pasted key that the key routes refuse, in words: the API's own message, and what to paste instead. An agent
 * key gets 403 (it may not manage keys), an SDK key 401 (not a control-plane credential at all).
 */
export function refusalText(err: unknown): string {
  if (!(err instanceof ApiError)) return errorText(err);
  if (err.status === 403)
    return `This key may not manage keys (403 ${err.code}: ${err.message}). Paste an admin key, one that starts with svc_adm_.`;
  if (err.status === 401)
    return `This key was refused (401 ${err.code}: ${err.message}). Paste a valid admin key, one that starts with svc_adm_.`;
  return `${err.status} ${err.code}: ${err.message}`;
}

/** The pasted key worked, then got 401: it was revoked, rotated or expired since (the API's message says which, where it can). */
export function endedKeyText(prefix: string, err: ApiError): string {
  return `The admin key ${prefix}… stopped working (401 ${err.code}: ${err.message}); it was revoked, rotated or expired since it was pasted. Paste another one to go on.`;
}

/** A failed action, in words: what failed, the API's message, and its status and code, so nothing is lost. */
export function failureText(what: string, err: unknown): string {
  if (err instanceof ApiError) return `${what}: ${err.message} (${err.status} ${err.code})`;
  return `${what}: ${errorText(err)}`;
}

/** One step of the rotation workflow done with curl, for when no admin key is pasted here. */
export interface CurlStep {
  title: string;
  text: string;
  command?: string;
}

/**
 * The SDK key rotation of docs/credentials.md ("Rotating an SDK key"), word for word but for the origin: the
 * docs use http://127.0.0.1:4000, the page the control plane it was loaded from. A test holds the two together.
 */
export function rotationSteps(origin: string): CurlStep[] {
  const auth = '-H "Authorization: Bearer $ADMIN_KEY"';
  return [
    {
      title: 'Find the SDK key',
      text: "List the organisation's keys and note the id of the SDK key to rotate (its prefix, projectId and environment say which it is).",
      command: `curl -s ${origin}/api/v1/keys ${auth}`,
    },
    {
      title: 'Or create one',
      text: 'A new application gets its own SDK key, for one project and one environment. The answer holds key, shown this once.',
      command: [
        `curl -s -X POST ${origin}/api/v1/keys \\`,
        `  ${auth} -H 'Content-Type: application/json' \\`,
        `  -d "{\\"kind\\":\\"sdk\\",\\"name\\":\\"web shop\\",\\"projectId\\":\\"$PROJECT_ID\\",\\"environment\\":\\"prod\\"}"`,
      ].join('\n'),
    },
    {
      title: 'Rotate it with a grace period',
      text: 'A grace long enough to deploy everywhere, here a day (3600 is an hour, 604800 a week, the most). The answer is the new key, shown this once; both keys are valid until the grace ends.',
      command: [
        `curl -s -X POST ${origin}/api/v1/keys/$SDK_KEY_ID/rotate \\`,
        `  ${auth} -H 'Content-Type: application/json' -d '{"graceSeconds":86400}'`,
      ].join('\n'),
    },
    {
      title: 'Deploy the new key',
      text: "Put the new key into the applications' configuration (the SDK's sdkKey, the secret manager) and deploy. Both keys evaluate the same project and environment meanwhile.",
    },
    {
      title: 'Let the old key stop',
      text: 'When the grace ends, the old key gets 401. To end it sooner, revoke it.',
      command: `curl -s -X DELETE ${origin}/api/v1/keys/$SDK_KEY_ID ${auth}`,
    },
  ];
}
