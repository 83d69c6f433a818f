import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../packages/dashboard/src/api.js';
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
} from '../../../packages/dashboard/src/keys/key-model.js';
import type { KeyView } from '../../../packages/dashboard/src/types.js';

const now = Date.parse('2026-11-26T12:00:00Z');
const time = (iso: string) => `<${iso}>`;

function key(fields: Partial<KeyView> & { id: string }): KeyView {
  return { org: 'acme', kind: 'sdk', name: fields.id, prefix: `svc_sdk_${fields.id}`, createdAt: '2026-11-01T00:00:00Z', ...fields };
}

describe('the Keys page: where a key stands', () => {
  it('tells active, in grace, replaced, revoked and expired keys apart', () => {
    expect(keyState(key({ id: 'a' }), now)).toEqual({ state: 'active' });
    const rotated = { rotatedAt: '2026-11-26T11:00:00Z', replacedBy: 'b' };
    expect(keyState(key({ id: 'a', ...rotated, graceEndsAt: '2026-11-26T13:00:00Z' }), now)).toEqual({
      state: 'grace',
      until: '2026-11-26T13:00:00Z',
    });
    expect(keyState(key({ id: 'a', ...rotated, graceEndsAt: '2026-11-26T11:00:00Z' }), now)).toEqual({
      state: 'replaced',
      at: '2026-11-26T11:00:00Z',
    });
    // Revoking a key in its grace ends it: revoked wins.
    expect(keyState(key({ id: 'a', ...rotated, graceEndsAt: '2026-11-26T13:00:00Z', revokedAt: '2026-11-26T11:30:00Z' }), now).state).toBe(
      'revoked',
    );
    expect(keyState(key({ id: 'a', kind: 'agent', expiresAt: '2026-11-26T12:00:00Z' }), now)).toEqual({
      state: 'expired',
      at: '2026-11-26T12:00:00Z',
    });
    expect(keyState(key({ id: 'a', kind: 'agent', expiresAt: '2026-11-26T12:00:01Z' }), now).state).toBe('active');
  });

  it('says so in words, with the time the grace ends', () => {
    expect(stateText({ state: 'grace', until: 'T' }, time)).toBe('rotated: still valid until <T>, then only its replacement');
    expect(stateText({ state: 'revoked', at: 'T' }, time)).toBe('revoked at <T>');
    expect(stateText({ state: 'active' }, time)).toBe('active');
  });

  it('offers Rotate only on an active key (the API refuses the rest with 409) and Revoke on any unrevoked one', () => {
    const inGrace = key({ id: 'a', rotatedAt: '2026-11-26T11:00:00Z', graceEndsAt: '2026-11-26T13:00:00Z', replacedBy: 'b' });
    expect(mayRotate(key({ id: 'a' }), now)).toBe(true);
    expect(mayRotate(inGrace, now)).toBe(false);
    expect(mayRevoke(inGrace)).toBe(true);
    expect(mayRevoke(key({ id: 'a', revokedAt: '2026-11-26T11:00:00Z' }))).toBe(false);
    expect(mayRotate(key({ id: 'a', kind: 'admin', expiresAt: '2026-11-25T00:00:00Z' }), now)).toBe(false);
  });

  it('lists the keys that still answer first, newest first', () => {
    const keys = [
      key({ id: 'old', createdAt: '2026-11-01T00:00:00Z' }),
      key({ id: 'revoked', createdAt: '2026-11-20T00:00:00Z', revokedAt: '2026-11-21T00:00:00Z' }),
      key({ id: 'new', createdAt: '2026-11-10T00:00:00Z' }),
    ];
    expect(sortKeys(keys, now).map((k) => k.id)).toEqual(['new', 'old', 'revoked']);
  });

  it("shows an SDK key's project and environment, and an admin or agent key's limits", () => {
    const names = (id: string) => ({ prj_1: 'shop', prj_2: 'web' })[id] ?? id;
    expect(scopeText(key({ id: 'a', projectId: 'prj_1', environment: 'prod' }), names)).toBe('shop / prod');
    expect(scopeText(key({ id: 'a', kind: 'agent', projects: ['prj_1', 'prj_2'], environments: ['dev'] }), names)).toBe(
      'projects shop, web; environments dev',
    );
    expect(scopeText(key({ id: 'a', kind: 'admin' }), names)).toBe('every project; every environment');
  });
});

describe('the Keys page: rotation', () => {
  it('offers none, 1 hour, 24 hours and 7 days, a day by default for an SDK key and none for others', () => {
    expect(GRACE_CHOICES.map((c) => c.seconds)).toEqual([0, 3600, 86_400, 604_800]);
    expect(defaultGrace({ kind: 'sdk' })).toBe(86_400);
    expect(defaultGrace({ kind: 'agent' })).toBe(0);
  });

  it('says both keys are valid until the grace ends, or that the old one stopped at once', () => {
    const old = key({ id: 'a', rotatedAt: '2026-11-26T12:00:00Z', graceEndsAt: '2026-11-27T12:00:00Z', replacedBy: 'b' });
    expect(rotationOutcome(old, now, time)).toBe(
      'Both keys are valid until <2026-11-27T12:00:00Z>; deploy the new key, then the old one stops.',
    );
    expect(rotationOutcome({ ...old, graceEndsAt: old.rotatedAt }, now, time)).toMatch(/^The old key stopped working at once/);
  });
});

describe('the Keys page: refusals in words', () => {
  it("shows an agent key's 403 and an SDK key's 401 with the API's message and what to paste instead", () => {
    const forbidden = new ApiError(403, 'forbidden', 'an agent key may not manage keys');
    expect(refusalText(forbidden)).toBe(
      'This key may not manage keys (403 forbidden: an agent key may not manage keys). Paste an admin key, one that starts with svc_adm_.',
    );
    expect(refusalText(new ApiError(401, 'unauthorized', 'not a control-plane key'))).toMatch(
      /^This key was refused \(401 unauthorized: not a control-plane key\)\. Paste a valid admin key/,
    );
    expect(endedKeyText('svc_adm_12345678', new ApiError(401, 'unauthorized', 'key svc_adm_12345678 expired at T'))).toMatch(
      /^The admin key svc_adm_12345678… stopped working \(401 unauthorized: key svc_adm_12345678 expired at T\); .* Paste another one/,
    );
    expect(failureText('Rotating svc_sdk_a… failed', new ApiError(409, 'conflict', 'already rotated'))).toBe(
      'Rotating svc_sdk_a… failed: already rotated (409 conflict)',
    );
  });
});

describe('the Keys page: the curl workflow', () => {
  it("prefills this control plane's origin", () => {
    const commands = rotationSteps('https://flags.example.com').flatMap((s) => (s.command ? [s.command] : []));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    for (const command of commands) {
      expect(command).toContain('https://flags.example.com/api/v1/keys');
      expect(command).not.toContain('127.0.0.1');
    }
  });

  it('gives the commands of docs/credentials.md, "Rotating an SDK key", word for word', () => {
    const doc = readFileSync(new URL('../../../docs/credentials.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('### Rotating an SDK key'), doc.indexOf('\n## ', doc.indexOf('### Rotating an SDK key')));
    const blocks = [...section.matchAll(/```sh\n([\s\S]*?)\n\s*```/g)].map((m) => m[1].replace(/^ {3}/gm, ''));
    const commands = rotationSteps('http://127.0.0.1:4000').flatMap((s) => (s.command ? [s.command] : []));
    for (const command of commands) expect(blocks).toContain(command);
  });
});
