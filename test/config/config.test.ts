import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/foundations/config/config.js';

describe('configuration from the environment', () => {
  it('works with nothing set', () => {
    expect(loadConfig({})).toEqual({
      dataDir: path.resolve('./data'),
      host: '127.0.0.1',
      controlPort: 4000,
      evalPort: 4001,
      bootstrapKeys: [],
      planProjectLimit: 25,
      gitGcCommits: 1000,
      logLevel: 'info',
      gitProcesses: { max: 4, queue: 16 },
      trustProxy: 0,
      metrics: { enabled: true },
    });
  });

  it('reads every setting', () => {
    const config = loadConfig({
      FLAGOPS_DATA_DIR: '/srv/flagops',
      FLAGOPS_HOST: '0.0.0.0',
      FLAGOPS_CONTROL_PORT: '8000',
      FLAGOPS_EVAL_PORT: '8001',
      FLAGOPS_BOOTSTRAP_KEYS: 'acme:svc_adm_aaaaaaaaaaaa, globex:svc_agt_bbbbbbbbbbbb',
      FLAGOPS_PLAN_PROJECT_LIMIT: '3',
      FLAGOPS_GIT_GC_COMMITS: '0',
      FLAGOPS_LOG_LEVEL: 'debug',
      FLAGOPS_GIT_REMOTE: 'https://git.example/flags.git',
      FLAGOPS_GIT_POLL_SECONDS: '5',
      FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS: '4',
      FLAGOPS_COMMIT_SIGNING_KEY: 'shared-by-every-control-plane-0123456789',
      FLAGOPS_GIT_MAX_PROCESSES: '2',
      FLAGOPS_GIT_QUEUE: '0',
    });
    expect(config).toMatchObject({
      dataDir: '/srv/flagops',
      host: '0.0.0.0',
      controlPort: 8000,
      evalPort: 8001,
      bootstrapKeys: [
        { org: 'acme', key: 'svc_adm_aaaaaaaaaaaa' },
        { org: 'globex', key: 'svc_agt_bbbbbbbbbbbb' },
      ],
      planProjectLimit: 3,
      gitGcCommits: 0,
      logLevel: 'debug',
      gitRemote: { url: 'https://git.example/flags.git', pollSeconds: 5, pushTimeoutSeconds: 4 },
      commitSigningKey: 'shared-by-every-control-plane-0123456789',
      gitProcesses: { max: 2, queue: 0 },
    });
  });

  const bad: Array<[string, string, RegExp]> = [
    ['FLAGOPS_CONTROL_PORT', '70000', /FLAGOPS_CONTROL_PORT must be a port number/],
    ['FLAGOPS_EVAL_PORT', 'x', /FLAGOPS_EVAL_PORT must be a port number/],
    ['FLAGOPS_PLAN_PROJECT_LIMIT', '-1', /FLAGOPS_PLAN_PROJECT_LIMIT must be a whole number/],
    ['FLAGOPS_GIT_GC_COMMITS', '1.5', /FLAGOPS_GIT_GC_COMMITS must be a whole number/],
    ['FLAGOPS_LOG_LEVEL', 'loud', /FLAGOPS_LOG_LEVEL must be/],
    ['FLAGOPS_BOOTSTRAP_KEYS', 'svc_adm_nokeyorg', /is not org:key/],
    ['FLAGOPS_COMMIT_SIGNING_KEY', 'short', /FLAGOPS_COMMIT_SIGNING_KEY must have at least 32 characters/],
    ['FLAGOPS_GIT_MAX_PROCESSES', '0', /FLAGOPS_GIT_MAX_PROCESSES must be a whole number of at least 1/],
    ['FLAGOPS_GIT_QUEUE', '-1', /FLAGOPS_GIT_QUEUE must be a whole number of at least 0/],
    ['FLAGOPS_GIT_REMOTE', ':::', /FLAGOPS_GIT_REMOTE must be a git remote/],
    ['FLAGOPS_GIT_REMOTE', 'ftp://host/flags.git', /FLAGOPS_GIT_REMOTE must be a git remote/],
    ['FLAGOPS_GIT_REMOTE', 'https://', /FLAGOPS_GIT_REMOTE must be a git remote/],
  ];
  it('refuses a push deadline that is not above 0 s or that would outlast the 30 s a turn is held', () => {
    for (const value of ['0', '-1', 'x', '26'])
      expect(() => loadConfig({ FLAGOPS_GIT_REMOTE: 'https://git.example/flags.git', FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS: value })).toThrow(
        /FLAGOPS_GIT_PUSH_TIMEOUT_SECONDS must be a number of seconds/,
      );
  });

  it('names a malformed bootstrap entry by its place, never showing the key it holds', () => {
    const secret = 'svc_adm_Zk3pQ9vW7xY2mN8bR4tL6hJ1cF5dS0aE';
    for (const value of [`acme=${secret}`, `acme:svc_adm_ok0123456789abcdef0123456789ab,:${secret}`]) {
      let message = '';
      try {
        loadConfig({ FLAGOPS_BOOTSTRAP_KEYS: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^FLAGOPS_BOOTSTRAP_KEYS entry [12] is not org:key/);
      expect(message).not.toContain('Zk3pQ9vW');
    }
  });

  it('takes a git remote in any form git does', () => {
    for (const url of [
      'https://git.example/flags.git',
      'ssh://git@git.example/flags.git',
      'git@git.example:flags.git',
      '/srv/flags.git',
      'ext::ssh -p 2222 host %S flags',
    ])
      expect(loadConfig({ FLAGOPS_GIT_REMOTE: url }).gitRemote?.url).toBe(url);
  });

  for (const [name, value, message] of bad) {
    it(`refuses ${name}=${value} with a message naming it`, () => {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: value })).toThrow(message);
    });
  }

  it('takes a PostgreSQL connection string for the shared state, and never repeats a wrong one (it may hold a password)', () => {
    expect(loadConfig({ FLAGOPS_DATABASE_URL: 'postgres://flagops:s3cret@db:5432/flagops' }).databaseUrl).toBe(
      'postgres://flagops:s3cret@db:5432/flagops',
    );
    expect(() => loadConfig({ FLAGOPS_DATABASE_URL: 'mysql://flagops:s3cret@db/flagops' })).toThrow(ConfigError);
    expect(() => loadConfig({ FLAGOPS_DATABASE_URL: 'mysql://flagops:s3cret@db/flagops' })).not.toThrow(/s3cret/);
  });

  it('takes the Prometheus server guards query, and never repeats a wrong one (it may hold a password)', () => {
    expect(loadConfig({}).prometheusUrl).toBeUndefined();
    expect(loadConfig({ FLAGOPS_PROMETHEUS_URL: 'http://prometheus:9090' }).prometheusUrl).toBe('http://prometheus:9090');
    expect(loadConfig({ FLAGOPS_PROMETHEUS_URL: 'https://u:s3cret@metrics.example/prom' }).prometheusUrl).toBe(
      'https://u:s3cret@metrics.example/prom',
    );
    for (const wrong of ['prometheus:9090/s3cret', 'ftp://u:s3cret@prometheus']) {
      expect(() => loadConfig({ FLAGOPS_PROMETHEUS_URL: wrong })).toThrow(/^FLAGOPS_PROMETHEUS_URL must be an http\(s\) URL/);
      expect(() => loadConfig({ FLAGOPS_PROMETHEUS_URL: wrong })).not.toThrow(/s3cret/);
    }
  });
});
