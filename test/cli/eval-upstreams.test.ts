import { describe, expect, it } from 'vitest';
import { parseUpstreamList } from '../../src/apps/cli/upstream-list.js';
import { flagops } from './cli-harness.js';

describe('flagops eval --upstream', () => {
  it('takes a comma-separated list of control-plane origins, in order', () => {
    expect(parseUpstreamList('http://a.internal:4000, https://b.internal/,http://10.0.0.3:4000')).toEqual([
      'http://a.internal:4000',
      'https://b.internal',
      'http://10.0.0.3:4000',
    ]);
  });

  it.each([
    ['an empty entry', 'http://a:4000,', '"" is not a control-plane origin'],
    ['another scheme', 'http://a:4000,ftp://b:21', '"ftp://b:21" is not a control-plane origin'],
    ['a path', 'http://a:4000/api', '"http://a:4000/api" is not a control-plane origin'],
    ['credentials', 'http://user:pw@a:4000', 'is not a control-plane origin'],
    ['no scheme', 'a:4000', '"a:4000" is not a control-plane origin'],
    ['one twice', 'http://a:4000,http://a:4000/', 'http://a:4000 is listed twice'],
    ['nothing', '', '--upstream takes control-plane origins'],
  ])('refuses %s with a usage error (exit 2) before starting anything', async (_, list, message) => {
    const result = await flagops(['eval', '--upstream', list, '--token', 'svc_adm_x', '--data-dir', '/nonexistent/replica']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).toContain('Usage: flagops eval');
  });
  it.each([
    ['an sdk key', 'svc_sdk_0123456789abcdefABCDEF0123456789', 'is an sdk key (svc_sdk_…), which the SDKs send to the replica'],
    ['an agent key', 'svc_agt_0123456789abcdefABCDEF0123456789', 'is an agent key (svc_agt_…)'],
    ['no key at all', 'hello', 'is no flagops key'],
  ])('refuses %s as its token with a usage error (exit 2) naming the kind it needs, before starting anything', async (_, token, given) => {
    for (const [args, env] of [
      [['--token', token], {}],
      [[], { FLAGOPS_REPLICA_TOKEN: token }],
    ] as const) {
      const result = await flagops(
        ['eval', '--upstream', 'http://127.0.0.1:9', ...args, '--data-dir', '/nonexistent/replica'],
        undefined,
        env,
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`--token (or FLAGOPS_REPLICA_TOKEN) ${given}`);
      expect(result.stderr).toContain('a replica follows the control plane with an admin key (svc_adm_…)');
      expect(result.stderr).not.toContain(token);
    }
  });

  it('refuses a FLAGOPS_LOG_LEVEL that is no level, as the service does (exit 2), before starting anything', async () => {
    for (const level of ['bogus', 'INFO']) {
      const result = await flagops(
        ['eval', '--upstream', 'http://127.0.0.1:9', '--token', 'svc_adm_x', '--data-dir', '/nonexistent/replica'],
        undefined,
        {
          FLAGOPS_LOG_LEVEL: level,
        },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('FLAGOPS_LOG_LEVEL must be debug, info, warn or error');
    }
  });
});
