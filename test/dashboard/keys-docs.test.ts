import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { runBlock } from '../readme/doc-blocks.js';

/** docs/credentials.md, "Rotating an SDK key": every curl command of the workflow, run as written (on this test's ports). */
const DOC = readFileSync(new URL('../../docs/credentials.md', import.meta.url), 'utf8');

function rotationBlocks(): string[] {
  const start = DOC.indexOf('### Rotating an SDK key');
  const section = DOC.slice(start, DOC.indexOf('\n## ', start));
  return [...section.matchAll(/```sh\n([\s\S]*?)\n\s*```/g)].map((m) => m[1].replace(/^ {3}/gm, ''));
}

describe('docs/credentials.md: rotating an SDK key with curl', () => {
  let svc: TestService;
  let project: Json;
  let blocks: string[];

  /** Runs a block on this test's ports with the variables the docs name. */
  const run = async (block: string, vars: Record<string, string> = {}) => {
    const script = block.replaceAll('http://127.0.0.1:4000', svc.controlUrl).replaceAll('http://127.0.0.1:4001', svc.evalUrl);
    const { code, out } = await runBlock(script, process.cwd(), { PATH: process.env.PATH ?? '', ADMIN_KEY: svc.admin, ...vars });
    expect(code, out).toBe(0);
    return out;
  };
  const json = (out: string): Json => JSON.parse(out);

  beforeAll(async () => {
    svc = await startTestService();
    const admin = httpClient(svc.controlUrl, svc.admin);
    project = await createProject(admin, 'shop', 'Shop');
    await createFlag(admin, project.id, { key: 'checkout' });
    blocks = rotationBlocks();
  }, 60_000);
  afterAll(() => svc?.stop());

  it('creates, lists, rotates with a day of grace (both keys evaluate), and revokes the old key', async () => {
    const [list, create, rotate, check, revoke] = blocks;
    expect(blocks).toHaveLength(5);

    const created = json(await run(create, { PROJECT_ID: project.id }));
    expect(created).toMatchObject({ kind: 'sdk', name: 'web shop', projectId: project.id, environment: 'prod' });
    expect(json(await run(list)).keys.map((k: Json) => k.id)).toContain(created.id);

    const rotated = json(await run(rotate, { SDK_KEY_ID: created.id }));
    expect(rotated).toMatchObject({ kind: 'sdk', name: 'web shop', projectId: project.id, environment: 'prod', rotatedFrom: created.id });
    const old = json(await run(list)).keys.find((k: Json) => k.id === created.id);
    expect(Date.parse(old.graceEndsAt) - Date.parse(old.rotatedAt)).toBe(86_400_000);

    // The check the docs give, with the new key, and with the old one: both answer during the grace.
    expect((await run(check, { NEW_SDK_KEY: rotated.key })).trim()).toBe('200');
    expect((await run(check, { NEW_SDK_KEY: created.key })).trim()).toBe('200');

    expect(json(await run(revoke, { SDK_KEY_ID: created.id })).revokedAt).toEqual(expect.any(String));
    expect((await run(check, { NEW_SDK_KEY: created.key })).trim()).toBe('401');
    expect((await run(check, { NEW_SDK_KEY: rotated.key })).trim()).toBe('200');
  });
});
