/**
 * The lifecycle examples of the docs, checked: the flag file of docs/flags-repository.md is valid and written back
 * as shown, and the PATCH commands of docs/api.md run word for word against a service.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRepositoryFile, serializeRepositoryFile } from '../../src/foundations/repository/index.js';
import { createFlag, createProject } from '../control-plane/fixtures.js';
import { type HttpClient, httpClient, type Json } from '../helpers/http-client.js';
import { startTestService, type TestService } from '../helpers/start-test-service.js';
import { runBlock, shellBlocks } from './doc-blocks.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (doc: string) => readFileSync(path.join(ROOT, doc), 'utf8');

describe('the lifecycle flag file of docs/flags-repository.md', () => {
  const doc = read('docs/flags-repository.md');
  const section = doc.slice(doc.indexOf('#### Lifecycle'));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)![1];

  it('is a valid flag file with the lifecycle it shows', () => {
    const { file, issues } = parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', yaml);
    expect(issues).toEqual([]);
    expect(file?.kind === 'flag' && file.value.lifecycle).toEqual({ type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' });
  });

  it('is written back by the control plane in the order shown', () => {
    const { file } = parseRepositoryFile('projects/shop/flags/checkout-v2.yaml', yaml);
    expect(serializeRepositoryFile(file!)).toContain(yaml.slice(yaml.indexOf('kind:')));
  });
});

describe('the lifecycle PATCH commands of docs/api.md, run as written', () => {
  let svc: TestService;
  let api: HttpClient;
  let flag: Json;
  let env: Record<string, string>;
  const commands = shellBlocks(read('docs/api.md'), 'Flags')
    .filter((block) => block.includes('"lifecycle"'))
    .flatMap((block) => block.split(/\n(?=curl )/));

  beforeAll(async () => {
    svc = await startTestService();
    api = httpClient(svc.controlUrl, svc.admin);
    const project = await createProject(api, 'shop');
    flag = await createFlag(api, project.id, {
      key: 'checkout-v2',
      lifecycle: { type: 'experiment', owner: 'team-checkout', expiresAt: '2027-03-31' },
    });
    env = { PATH: process.env.PATH!, FLAGOPS: svc.controlUrl, AGENT_KEY: svc.agent, FLAG: flag.id };
  });
  afterAll(() => svc.stop());

  it('change the type and owner and clear the expiry, then remove the lifecycle', async () => {
    expect(commands).toHaveLength(2);
    const changed = await runBlock(commands[0], ROOT, env);
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.out).lifecycle).toEqual({ type: 'release', owner: 'team-growth' });
    const removed = await runBlock(commands[1], ROOT, env);
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.out)).not.toHaveProperty('lifecycle');
    expect((await api.get(`/api/v1/flags/${flag.id}`)).body).not.toHaveProperty('lifecycle');
  });
});
