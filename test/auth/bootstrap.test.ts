import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyService } from '../../src/foundations/auth/key-service.js';
import { ConfigError } from '../../src/foundations/config/config.js';
import { stateIn } from '../helpers/control-state.js';
import { useTempDir } from './temp-dir.js';

const tempDir = useTempDir();
const ADMIN = 'svc_adm_Kq3v9XbT2mLp8RwZ4nYc7HdJ';
const AGENT = 'svc_agt_Vb6nM1qW8eR3tY5uI9oP2aSd';

describe('bootstrap keys', () => {
  it('make each key exist in its organisation, with its kind from its prefix', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const { warnings } = await keys.bootstrap([
      { org: 'acme', key: ADMIN },
      { org: 'globex', key: AGENT },
    ]);
    expect(warnings).toEqual([]);
    expect(keys.authenticate(ADMIN)).toMatchObject({ org: 'acme', kind: 'admin', prefix: 'svc_adm_Kq3v9XbT', name: 'bootstrap' });
    expect(keys.authenticate(AGENT)).toMatchObject({ org: 'globex', kind: 'agent' });
    expect(keys.organisations().map((o) => o.name)).toEqual(['acme', 'globex']);
  });

  it('are idempotent across restarts: the same key keeps its one record', async () => {
    const dataDir = await tempDir();
    const first = await KeyService.open({ state: await stateIn(dataDir) });
    await first.bootstrap([{ org: 'acme', key: ADMIN }]);
    const id = first.authenticate(ADMIN)?.keyId;
    const fileBefore = await readFile(path.join(dataDir, 'state', 'keys.json'), 'utf8');

    const second = await KeyService.open({ state: await stateIn(dataDir) });
    await second.bootstrap([{ org: 'acme', key: ADMIN }]);
    expect(second.authenticate(ADMIN)?.keyId).toBe(id);
    expect(second.listKeys('acme')).toHaveLength(1);
    expect(await readFile(path.join(dataDir, 'state', 'keys.json'), 'utf8')).toBe(fileBefore);
  });

  it('refuse a key that already belongs to another organisation, naming both', async () => {
    const dataDir = await tempDir();
    const first = await KeyService.open({ state: await stateIn(dataDir) });
    await first.bootstrap([{ org: 'acme', key: ADMIN }]);
    const second = await KeyService.open({ state: await stateIn(dataDir) });
    const attempt = second.bootstrap([{ org: 'globex', key: ADMIN }]);
    await expect(attempt).rejects.toThrow(ConfigError);
    await expect(attempt).rejects.toThrow(/given for organisation globex but already belongs to organisation acme/);
    expect(second.hasOrganisation('globex')).toBe(false);
  });

  it('refuse the same key listed for two organisations, writing nothing', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    await expect(
      keys.bootstrap([
        { org: 'acme', key: ADMIN },
        { org: 'globex', key: ADMIN },
      ]),
    ).rejects.toThrow(/already belongs to organisation acme/);
    expect(keys.authenticate(ADMIN)).toBeNull();
  });

  it('refuse an sdk key, a key of no known kind and a bad organisation name, without echoing the key', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    await expect(keys.bootstrap([{ org: 'acme', key: 'svc_sdk_Vb6nM1qW8eR3tY5uI9oP2aSd' }])).rejects.toThrow(
      /sdk key belongs to one project and environment/,
    );
    const unknown = keys.bootstrap([{ org: 'acme', key: 'secret-token-123' }]);
    await expect(unknown).rejects.toThrow(
      /entry 1 \(organisation acme\): the key must start with svc_adm_ \(admin\) or svc_agt_ \(agent\)/,
    );
    await expect(unknown).rejects.not.toThrow(/secret-token-123/);
    await expect(keys.bootstrap([{ org: 'Acme Corp', key: ADMIN }])).rejects.toThrow(/organisation "Acme Corp" is not a valid name/);
    await expect(keys.bootstrap([{ org: 'acme', key: 'svc_adm_has space in it, and long enough' }])).rejects.toThrow(/printable ASCII/);
  });

  it('refuse a key with fewer than 24 characters after its prefix, saying how many it needs', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    for (const key of ['svc_adm_', 'svc_adm_x', 'svc_agt_devkey42', 'svc_adm_Kq3v9XbT2mLp8RwZ4nYc7Hd']) {
      const attempt = keys.bootstrap([{ org: 'acme', key }]);
      await expect(attempt).rejects.toThrow(ConfigError);
      await expect(attempt).rejects.toThrow(
        `the key has ${key.length - 8} characters after its ${key.slice(0, 8)} prefix; a bootstrap key needs at least 24`,
      );
      if (key.length > 12) await expect(attempt).rejects.not.toThrow(key.slice(8));
    }
    expect(keys.organisations()).toEqual([]);
    await expect(keys.bootstrap([{ org: 'acme', key: 'svc_adm_Kq3v9XbT2mLp8RwZ4nYc7HdJ' }])).resolves.toEqual({ warnings: [] });
  });

  it('accept a long key typed by hand with a warning, and show only its prefix', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const { warnings } = await keys.bootstrap([{ org: 'acme', key: 'svc_adm_devkeydevkeydevkeydevkey' }]);
    expect(warnings).toEqual([expect.stringMatching(/svc_adm_devkeyde… of organisation acme uses only 5 different characters/)]);
    expect(keys.authenticate('svc_adm_devkeydevkeydevkeydevkey')?.prefix).toBe('svc_adm_devkeyde');
  });

  it('tell apart two hand-made keys that share a prefix, with a warning', async () => {
    const keys = await KeyService.open({ state: await stateIn(await tempDir()) });
    const one = 'svc_adm_localdev-admin-number-one';
    const two = 'svc_adm_localdev-admin-number-two';
    const { warnings } = await keys.bootstrap([
      { org: 'acme', key: one },
      { org: 'acme', key: two },
    ]);
    expect(warnings).toEqual([expect.stringMatching(/svc_adm_localdev… shares its prefix/)]);
    expect(keys.authenticate(one)?.keyId).not.toBe(keys.authenticate(two)?.keyId);
    expect(keys.authenticate('svc_adm_localdev-admin-number-six')).toBeNull();
  });

  it('do not bring back a revoked key on restart', async () => {
    const dataDir = await tempDir();
    const first = await KeyService.open({ state: await stateIn(dataDir) });
    await first.bootstrap([{ org: 'acme', key: AGENT }]);
    await first.revokeKey('acme', first.authenticate(AGENT)!.keyId);
    const second = await KeyService.open({ state: await stateIn(dataDir) });
    const { warnings } = await second.bootstrap([{ org: 'acme', key: AGENT }]);
    expect(second.authenticate(AGENT)).toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/was revoked; it stays revoked/)]);
  });
});
