import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ParsedFile, parseRepositoryFile, serializeRepositoryFile } from '../../src/foundations/repository/index.js';

const SAMPLE = new URL('../../flags/', import.meta.url).pathname;

function sampleFiles(dir = join(SAMPLE, 'projects')): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    return statSync(full).isDirectory() ? sampleFiles(full) : [relative(SAMPLE, full)];
  });
}

const CONFIG: ParsedFile = {
  kind: 'config',
  value: {
    enabled: true,
    rolloutPct: 10,
    valueOn: { layout: 'grid', columns: [2, 3] },
    valueOff: null,
    version: 7,
    rules: [
      {
        id: 'beta-users',
        description: 'Beta: opted in',
        serve: 'on',
        rolloutPct: 50,
        conditions: [
          { attribute: 'plan', op: 'in', value: ['beta', 'yes', '1.0', null] },
          { attribute: 'appVersion', op: 'semver_gt', value: '4.2.0' },
          { attribute: 'email', op: 'contains', value: '@example.com' },
        ],
      },
    ],
  },
};

describe('serializing a repository file', () => {
  it('writes a config with a fixed key order and short lists inline, for readable reviews', () => {
    expect(serializeRepositoryFile(CONFIG)).toBe(
      [
        'enabled: true',
        'rolloutPct: 10',
        'valueOn:',
        '  layout: grid',
        '  columns: [2, 3]',
        'valueOff: null',
        'version: 7',
        'rules:',
        '  - id: beta-users',
        '    description: "Beta: opted in"',
        '    serve: on',
        '    rolloutPct: 50',
        '    conditions:',
        '      - attribute: plan',
        '        op: in',
        '        value: [beta, yes, "1.0", null]',
        '      - attribute: appVersion',
        '        op: semver_gt',
        '        value: 4.2.0',
        '      - attribute: email',
        '        op: contains',
        '        value: "@example.com"',
        '',
      ].join('\n'),
    );
  });

  it("writes negative zero, from JSON's -0 in any number of the file, as 0", () => {
    const config = JSON.parse('{"enabled":true,"rolloutPct":-0,"valueOn":{"x":-0,"list":[-0]},"valueOff":-0,"version":1,"rules":[]}');
    const text = serializeRepositoryFile({ kind: 'config', value: config });
    expect(text).not.toContain('-0');
    expect(text).toContain('rolloutPct: 0\n');
    const back = parseRepositoryFile('projects/shop/environments/prod/x.yaml', text).file?.value as unknown as Record<string, unknown>;
    expect(Object.is(back.rolloutPct, 0)).toBe(true);
    expect(back.valueOn).toEqual({ x: 0, list: [0] });
  });

  it('orders fields the same whatever order the object was built in', () => {
    const shuffled: ParsedFile = { kind: 'project', value: { slug: 'shop', name: 'Shop', id: 'prj_1' } };
    expect(serializeRepositoryFile(shuffled)).toBe('id: prj_1\nname: Shop\nslug: shop\n');
  });

  it('writes a flag with its defaults spelled out and optional fields only when set', () => {
    expect(serializeRepositoryFile({ kind: 'flag', value: { id: 'flg_1', key: 'k', kind: 'boolean', archivedAt: null } })).toBe(
      'id: flg_1\nkey: k\nkind: boolean\narchivedAt: null\n',
    );
  });

  it('writes a lifecycle after the flag fields, type spelled out, owner and expiry only when set', () => {
    const flag: ParsedFile = {
      kind: 'flag',
      value: {
        lifecycle: { expiresAt: '2027-03-31', owner: 'team-checkout' } as never,
        archivedAt: null,
        kind: 'boolean',
        key: 'k',
        id: 'flg_1',
      },
    };
    expect(serializeRepositoryFile(flag)).toBe(
      'id: flg_1\nkey: k\nkind: boolean\narchivedAt: null\nlifecycle:\n  type: release\n  owner: team-checkout\n  expiresAt: 2027-03-31\n',
    );
  });

  it('writes kills sorted by flag key, and no kills as `kills: {}`', () => {
    const kills: ParsedFile = {
      kind: 'kills',
      value: {
        kills: {
          search: { killedAt: '2025-03-02T14:05:00Z', killedBy: 'svc_agt_3kq9x2ab', reason: 'timeouts' },
          checkout: { killedAt: '2025-03-01T08:00:00Z', killedBy: 'alice' },
        },
      },
    };
    expect(serializeRepositoryFile(kills)).toBe(
      'kills:\n  checkout:\n    killedAt: 2025-03-01T08:00:00Z\n    killedBy: alice\n  search:\n    killedAt: 2025-03-02T14:05:00Z\n    killedBy: svc_agt_3kq9x2ab\n    reason: timeouts\n',
    );
    expect(serializeRepositoryFile({ kind: 'kills', value: { kills: {} } })).toBe('kills: {}\n');
  });

  describe('round trip through parseRepositoryFile', () => {
    const cases: Array<[string, ParsedFile]> = [
      ['projects/shop/environments/prod/x.yaml', CONFIG],
      ['projects/shop/project.yaml', { kind: 'project', value: { id: 'prj_1', name: 'Shop: "the" store', slug: 'shop' } }],
      [
        'projects/shop/flags/x.yaml',
        {
          kind: 'flag',
          value: {
            id: 'flg_1',
            key: 'x',
            name: 'true',
            description: 'line one\nline two',
            kind: 'string',
            defaultValue: '0123',
            archivedAt: '2025-01-15T09:30:00Z',
          },
        },
      ],
      [
        'projects/shop/flags/y.yaml',
        {
          kind: 'flag',
          value: {
            id: 'flg_2',
            key: 'y',
            kind: 'boolean',
            archivedAt: null,
            lifecycle: { type: 'kill-switch', owner: 'null', expiresAt: '2027-03-31' },
          },
        },
      ],
      [
        'projects/shop/flags/z.yaml',
        {
          kind: 'flag',
          value: {
            id: 'flg_3',
            key: 'z',
            kind: 'boolean',
            archivedAt: null,
            lifecycle: { type: 'experiment', expiresAt: '2027-03-31T12:00:00+02:00' },
          },
        },
      ],
      [
        'projects/shop/environments/dev/kills.yaml',
        { kind: 'kills', value: { kills: { x: { killedAt: '2025-03-02T14:05:00Z', killedBy: '#bot: x' } } } },
      ],
    ];

    it.each(cases)('gives the same %s back', (path, file) => {
      expect(parseRepositoryFile(path, serializeRepositoryFile(file))).toEqual({ file, issues: [] });
    });

    it('gives back values nested as deeply as the schemas allow (64 levels), "__proto__" keys included', () => {
      let value: unknown = JSON.parse('{"__proto__":[1]}');
      for (let i = 1; i < 63; i++) value = i % 2 ? [value] : { deeper: value }; // 2 + 62 levels
      const file: ParsedFile = { kind: 'config', value: { ...CONFIG.value, valueOn: value } } as ParsedFile;
      expect(parseRepositoryFile('projects/shop/environments/prod/x.yaml', serializeRepositoryFile(file))).toEqual({ file, issues: [] });
    });

    it.each([
      ['a string of only blank lines keeps its leading spaces', ' \n'],
      ['blank lines and tabs', '\t\n  \n'],
      ['a multi-line string in a short list', ['-\nx']],
      ['multi-line strings beside others in a short list', ['a', 'b\nc']],
    ])('gives back %s', (_name, valueOn) => {
      const file = { kind: 'config', value: { ...CONFIG.value, valueOn } } as ParsedFile;
      expect(parseRepositoryFile('projects/shop/environments/prod/x.yaml', serializeRepositoryFile(file))).toEqual({ file, issues: [] });
    });

    it.each(sampleFiles())('gives the same value back for the sample file %s', (path) => {
      const parsed = parseRepositoryFile(path, readFileSync(join(SAMPLE, path), 'utf8'));
      expect(parsed.issues).toEqual([]);
      const again = parseRepositoryFile(path, serializeRepositoryFile(parsed.file!));
      expect(again).toEqual(parsed);
      // Serializing twice is stable: a re-save changes no line.
      expect(serializeRepositoryFile(again.file!)).toBe(serializeRepositoryFile(parsed.file!));
    });
  });
});
