import type { EnvironmentConfig } from '@flagops/core';
import { describe, expect, it } from 'vitest';
import {
  diffStates,
  formatChanges,
  parseRepositoryFile,
  readRepositoryFiles,
  serializeRepositoryFile,
} from '../../src/foundations/repository/index.js';
import { type EntryChange, ProjectAssembler } from '../../src/foundations/repository/project-assembler.js';
import { configReferenceIssues, MAX_PREREQUISITE_CHAIN, segmentUsage } from '../../src/foundations/repository/project-checks.js';
import { entries, validRepository } from './repo-fixture.js';

const ENVS = ['dev', 'staging', 'prod'] as const;

function read(files: Record<string, string>) {
  return readRepositoryFiles(entries(files), 'c0ffee', { locate: true });
}

/** Sets checkout-v2's config in every environment to `extra` below the four usual fields. */
function withConfig(files: Record<string, string>, extra: string, key = 'checkout-v2', envs: readonly string[] = ENVS) {
  for (const env of envs)
    files[`projects/shop/environments/${env}/${key}.yaml`] = `enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\n${extra}`;
  return files;
}

const flagKeys = (files: Record<string, string>) => [...(read(files).state.projects.get('shop')?.flags.keys() ?? [])];

const AB = 'variants:\n  - name: blue\n    value: true\n    weight: 50\n  - name: green\n    value: false\n    weight: 50\n';

describe('variants in a config', () => {
  it('are typed and served when their weights add up to 100', () => {
    const { state, issues } = read(withConfig(validRepository(), AB));
    expect(issues).toEqual([]);
    expect(state.projects.get('shop')!.flags.get('checkout-v2')!.environments.prod.variants).toEqual([
      { name: 'blue', value: true, weight: 50 },
      { name: 'green', value: false, weight: 50 },
    ]);
  });

  it('whose weights do not add up to 100 hold back the flag, with file:line:col', () => {
    const files = withConfig(validRepository(), AB.replace('weight: 50\n  - name: green', 'weight: 40\n  - name: green'), 'checkout-v2', [
      'prod',
    ]);
    const { issues } = read(files);
    expect(issues).toEqual([
      {
        file: 'projects/shop/environments/prod/checkout-v2.yaml',
        line: 6,
        column: 3,
        path: '/variants',
        message: 'weights must add up to exactly 100 (blue 40 + green 50 = 90)',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
  });

  it('refuse more than two decimals, duplicate and reserved names, values of another kind', () => {
    const variants = [
      '  - name: blue\n    value: true\n    weight: 33.333\n',
      '  - name: blue\n    value: "yes"\n    weight: 33.333\n',
      '  - name: default\n    value: false\n    weight: 33.334\n',
    ].join('');
    const { issues } = read(withConfig(validRepository(), `variants:\n${variants}`, 'checkout-v2', ['dev']));
    expect(issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      '12:11 /variants/2/name: must not be on, off or default, which are the fixed variations',
    ]);
    // The reserved name is the schema's; with it fixed, the checks across the file speak.
    const fixed = read(withConfig(validRepository(), `variants:\n${variants.replace('default', 'red')}`, 'checkout-v2', ['dev']));
    expect(fixed.issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      '8:13 /variants/0/weight: must have at most two decimals (found 33.333)',
      '9:11 /variants/1/name: "blue" is already the name of variant 0; variant names must be unique',
      "10:12 /variants/1/value: must be true or false, as the flag's kind is boolean",
      '11:13 /variants/1/weight: must have at most two decimals (found 33.333)',
      '14:13 /variants/2/weight: must have at most two decimals (found 33.334)',
    ]);
  });

  it('an empty list is refused: in a file, leaving the field out is what removes them', () => {
    const { issues } = read(withConfig(validRepository(), 'variants: []\n', 'checkout-v2', ['dev']));
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      '/variants: must list at least one variant (to remove them, leave the field out)',
    ]);
  });

  it('a rule serving a variant the config does not have holds back the flag', () => {
    const rules = 'rules:\n  - id: r1\n    serve: purple\n    conditions: []\n';
    const { issues } = read(withConfig(validRepository(), AB + rules, 'checkout-v2', ['staging']));
    expect(issues).toEqual([
      {
        file: 'projects/shop/environments/staging/checkout-v2.yaml',
        line: 14,
        column: 12,
        path: '/rules/0/serve',
        message: 'serves variant "purple", which this config does not have; its variants are blue, green',
      },
    ]);
  });

  it('a rule serving a variant by name is valid', () => {
    const rules = 'rules:\n  - id: r1\n    serve: green\n    conditions: []\n';
    expect(read(withConfig(validRepository(), AB + rules)).issues).toEqual([]);
  });

  it('round-trip through serialization, variants and prerequisites after the rules', () => {
    const text = withConfig({}, `rules: []\n${AB}prerequisites:\n  - flag: search\n    variation: "on"\n`)[
      'projects/shop/environments/dev/checkout-v2.yaml'
    ];
    const parsed = parseRepositoryFile('projects/shop/environments/dev/checkout-v2.yaml', text);
    expect(parsed.issues).toEqual([]);
    const written = serializeRepositoryFile(parsed.file!);
    expect(written).toMatch(/rules: \[\]\nvariants:\n {2}- name: blue\n/);
    expect(written).toMatch(/prerequisites:\n {2}- flag: search\n {4}variation: on\n$/);
    expect(parseRepositoryFile('projects/shop/environments/dev/checkout-v2.yaml', written).file).toEqual(parsed.file);
  });
});

describe('segments', () => {
  const BETA = 'key: beta-testers\nname: Beta testers\nuserIds: [ana, bo]\nconditions:\n  - attribute: plan\n    op: eq\n    value: beta\n';
  const IN_BETA = 'rules:\n  - id: beta\n    serve: "on"\n    conditions:\n      - op: in_segment\n        value: beta-testers\n';

  it('are read from projects/<slug>/segments/<key>.yaml into the project state', () => {
    const files = validRepository();
    files['projects/shop/segments/beta-testers.yaml'] = BETA;
    const { state, issues } = read(withConfig(files, IN_BETA));
    expect(issues).toEqual([]);
    expect(state.projects.get('shop')!.segments).toEqual(
      new Map([
        [
          'beta-testers',
          {
            key: 'beta-testers',
            name: 'Beta testers',
            version: 0,
            userIds: ['ana', 'bo'],
            conditions: [{ attribute: 'plan', op: 'eq', value: 'beta' }],
          },
        ],
      ]),
    );
    expect(flagKeys(files)).toEqual(['checkout-v2', 'search']);
  });

  it('a condition naming an unknown segment holds back its flag, not the others', () => {
    const files = withConfig(validRepository(), IN_BETA, 'checkout-v2', ['prod']);
    expect(read(files).issues).toEqual([
      {
        file: 'projects/shop/environments/prod/checkout-v2.yaml',
        line: 10,
        column: 16,
        path: '/rules/0/conditions/0/value',
        message: 'names segment "beta-testers", which project "shop" does not have (expected projects/shop/segments/beta-testers.yaml)',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
  });

  it('an invalid segment leaves out its project', () => {
    const files = validRepository();
    files['projects/shop/segments/beta-testers.yaml'] = 'key: beta-testers\nuserIds: [1]\n';
    const { state, issues } = read(files);
    expect(issues).toEqual([
      { file: 'projects/shop/segments/beta-testers.yaml', line: 2, column: 11, path: '/userIds/0', message: 'must be a string' },
    ]);
    expect(state.projects.has('shop')).toBe(false);
  });

  it('a segment whose key is not its file name leaves out its project', () => {
    const files = validRepository();
    files['projects/shop/segments/beta-testers.yaml'] = 'key: beta\n';
    const { state, issues } = read(files);
    expect(issues.map((i) => `${i.file}:${i.line}:${i.column}: ${i.path}: ${i.message}`)).toEqual([
      'projects/shop/segments/beta-testers.yaml:1:6: /key: must equal the file name (found "beta")',
    ]);
    expect(state.projects.has('shop')).toBe(false);
  });

  it('a segment condition refers to a segment, never to an attribute; a segment refers to no segment', () => {
    const attr = read(withConfig(validRepository(), IN_BETA.replace('- op: in_segment', '- attribute: plan\n        op: in_segment')));
    expect(attr.issues[0]).toMatchObject({
      path: '/rules/0/conditions/0/attribute',
      message: 'must be left out: in_segment and not_in_segment test a segment, not an attribute',
    });
    const files = validRepository();
    files['projects/shop/segments/nested.yaml'] = 'key: nested\nconditions:\n  - op: in_segment\n    value: other\n';
    expect(read(files).issues.map((i) => i.path)).toContain('/conditions/0/op');
  });

  it('over 10,000 user ids are refused with one issue', () => {
    const files = validRepository();
    files['projects/shop/segments/many.yaml'] = `key: many\nuserIds: [${Array.from({ length: 10_001 }, (_, i) => `u${i}`).join(', ')}]\n`;
    expect(read(files).issues).toMatchObject([{ path: '/userIds', message: 'must list at most 10,000 user ids' }]);
  });
});

describe('prerequisites', () => {
  const requires = (key: string) => `prerequisites:\n  - flag: ${key}\n    variation: "on"\n`;

  it('naming a flag of the project are valid', () => {
    expect(read(withConfig(validRepository(), requires('search'))).issues).toEqual([]);
  });

  it('naming a flag the project does not have hold back the flag', () => {
    const files = withConfig(validRepository(), requires('gone'), 'checkout-v2', ['dev']);
    expect(read(files).issues).toEqual([
      {
        file: 'projects/shop/environments/dev/checkout-v2.yaml',
        line: 6,
        column: 11,
        path: '/prerequisites/0/flag',
        message: 'names flag "gone", which project "shop" does not have',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
  });

  it('in a cycle hold back every flag of the cycle, in that environment', () => {
    const files = withConfig(validRepository(), requires('search'), 'checkout-v2', ['staging']);
    withConfig(files, requires('checkout-v2'), 'search', ['staging']);
    const { issues } = read(files);
    expect(issues.map((i) => `${i.file}:${i.line}:${i.column}: ${i.message}`)).toEqual([
      'projects/shop/environments/staging/checkout-v2.yaml:6:11: is part of a prerequisite cycle: checkout-v2 → search → checkout-v2',
      'projects/shop/environments/staging/search.yaml:6:11: is part of a prerequisite cycle: checkout-v2 → search → checkout-v2',
    ]);
    expect(flagKeys(files)).toEqual([]);
  });

  it('on itself is a cycle', () => {
    const files = withConfig(validRepository(), requires('search'), 'search', ['prod']);
    expect(read(files).issues.map((i) => i.message)).toEqual(['is part of a prerequisite cycle: search → search']);
  });

  it('naming a variation their flag cannot serve in that environment hold back the flag', () => {
    const files = withConfig(validRepository(), 'prerequisites:\n  - flag: search\n    variation: blue\n', 'checkout-v2', ['dev']);
    expect(read(files).issues).toEqual([
      {
        file: 'projects/shop/environments/dev/checkout-v2.yaml',
        line: 7,
        column: 16,
        path: '/prerequisites/0/variation',
        message: 'names variation "blue", which flag "search" cannot serve in dev (it serves on, off)',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
    // Once search has a variant named blue in dev, the same prerequisite can be met.
    withConfig(files, AB, 'search', ['dev']);
    expect(read(files).issues).toEqual([]);
  });

  it('naming "on" of a flag with variants in that environment hold back the flag: it serves a variant wherever it would serve on', () => {
    const files = withConfig(validRepository(), requires('search'), 'checkout-v2', ['dev']);
    withConfig(files, AB, 'search', ['dev']);
    expect(read(files).issues).toEqual([
      {
        file: 'projects/shop/environments/dev/checkout-v2.yaml',
        line: 7,
        column: 16,
        path: '/prerequisites/0/variation',
        message: 'names variation "on", which flag "search" cannot serve in dev (it serves off, blue, green)',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
    // "off" and the variants' names it can serve.
    for (const variation of ['off', 'blue', 'green']) {
      withConfig(files, `prerequisites:\n  - flag: search\n    variation: ${variation}\n`, 'checkout-v2', ['dev']);
      expect(read(files).issues, variation).toEqual([]);
    }
  });

  it('naming one flag twice hold back the flag: a flag serves one variation at a time', () => {
    const twice = 'prerequisites:\n  - flag: search\n    variation: "on"\n  - flag: search\n    variation: "off"\n';
    const files = withConfig(validRepository(), twice, 'checkout-v2', ['prod']);
    expect(read(files).issues).toEqual([
      {
        file: 'projects/shop/environments/prod/checkout-v2.yaml',
        line: 8,
        column: 11,
        path: '/prerequisites/1/flag',
        message: 'names flag "search" a second time (as /prerequisites/0): a flag serves one variation at a time, so keep one',
      },
    ]);
    expect(flagKeys(files)).toEqual(['search']);
  });

  it(`in a chain longer than ${MAX_PREREQUISITE_CHAIN} hold back the flags that start it, and the write that would make one is refused`, () => {
    // c0 requires c1, which requires c2, … up to c{n}: evaluating c0 follows n prerequisites in a row.
    const files = validRepository();
    const n = MAX_PREREQUISITE_CHAIN + 2;
    for (let i = 0; i <= n; i++) {
      files[`projects/shop/flags/c${i}.yaml`] = `key: c${i}\nkind: boolean\n`;
      for (const env of ENVS)
        files[`projects/shop/environments/${env}/c${i}.yaml`] = 'enabled: true\nrolloutPct: 100\nvalueOn: true\nvalueOff: false\n';
      if (i < n) withConfig(files, requires(`c${i + 1}`), `c${i}`, ['prod']);
    }
    const { issues } = read(files);
    expect(issues.map((i) => `${i.file} ${i.path}: ${i.message}`)).toEqual([
      `projects/shop/environments/prod/c0.yaml /prerequisites/0/flag: starts a chain of ${n} prerequisites in a row; at most ${MAX_PREREQUISITE_CHAIN} are followed`,
      `projects/shop/environments/prod/c1.yaml /prerequisites/0/flag: starts a chain of ${n - 1} prerequisites in a row; at most ${MAX_PREREQUISITE_CHAIN} are followed`,
    ]);
    expect(flagKeys(files)).not.toContain('c0');
    expect(flagKeys(files)).toContain('c2');
    // c2 starts a chain of exactly the most: a write that puts a flag on top of it is refused, naming the field.
    const project = read(files).state.projects.get('shop')!;
    const prod = project.flags.get('checkout-v2')!.environments.prod;
    expect(configReferenceIssues(project, 'checkout-v2', 'prod', { ...prod, prerequisites: [{ flag: 'c3', variation: 'on' }] })).toEqual(
      [],
    );
    expect(configReferenceIssues(project, 'checkout-v2', 'prod', { ...prod, prerequisites: [{ flag: 'c2', variation: 'on' }] })).toEqual([
      {
        path: '/prerequisites/0/flag',
        message: `starts a chain of ${MAX_PREREQUISITE_CHAIN + 1} prerequisites in a row; at most ${MAX_PREREQUISITE_CHAIN} are followed`,
      },
    ]);
  });

  it('across environments are no cycle: each environment is evaluated alone', () => {
    const files = withConfig(validRepository(), requires('search'), 'checkout-v2', ['dev']);
    withConfig(files, requires('checkout-v2'), 'search', ['prod']);
    expect(read(files).issues).toEqual([]);
  });
});

describe('the incremental assembler', () => {
  it('says what assembling every file says as segments and prerequisite flags come and go', () => {
    const files = withConfig(
      validRepository(),
      'rules:\n  - id: b\n    serve: "on"\n    conditions:\n      - op: in_segment\n        value: beta\n',
    );
    files['projects/shop/segments/beta.yaml'] = 'key: beta\nuserIds: [ana]\n';
    withConfig(files, 'prerequisites:\n  - flag: checkout-v2\n    variation: "on"\n', 'search');
    const parsed = (all: Record<string, string>) =>
      Object.keys(all)
        .sort()
        .map((path) => ({ path, file: parseRepositoryFile(path, all[path]).file }));
    const whole = (all: Record<string, string>) => {
      const { state, issues } = readRepositoryFiles(entries(all), null);
      return { state: state.projects.get('shop'), issues };
    };
    const { assembler, result } = ProjectAssembler.build('shop', parsed(files))!;
    expect(result).toEqual(whole(files));

    const steps: Array<(all: Record<string, string>) => string> = [
      (all) => {
        delete all['projects/shop/segments/beta.yaml'];
        return 'projects/shop/segments/beta.yaml';
      },
      (all) => {
        all['projects/shop/segments/beta.yaml'] = 'key: beta\nuserIds: [bo]\n';
        return 'projects/shop/segments/beta.yaml';
      },
      (all) => {
        delete all['projects/shop/flags/checkout-v2.yaml'];
        return 'projects/shop/flags/checkout-v2.yaml';
      },
    ];
    for (const step of steps) {
      const path = step(files);
      const change: EntryChange = {
        path,
        entry: files[path] === undefined ? null : { path, file: parseRepositoryFile(path, files[path]).file },
      };
      expect(assembler.apply([change])).toEqual(whole(files));
    }
  });
});

describe('the changes between two states, in words (flagops diff)', () => {
  const change = (before: Record<string, string>, after: Record<string, string>) =>
    formatChanges(diffStates(read(before).state, read(after).state));

  it('names each variant whose weight changed', () => {
    const before = withConfig(validRepository(), AB, 'checkout-v2', ['prod']);
    const after = withConfig(
      validRepository(),
      AB.replace('weight: 50', 'weight: 30').replace(/weight: 50\n$/, 'weight: 70\n'),
      'checkout-v2',
      ['prod'],
    );
    expect(change(before, after)).toBe('shop/checkout-v2 prod: variants blue 50 → 30, green 50 → 70');
  });

  it('says when variants come and go, and which prerequisites are added or removed', () => {
    const plain = validRepository();
    const withAll = withConfig(validRepository(), `${AB}prerequisites:\n  - flag: search\n    variation: "on"\n`, 'checkout-v2', ['dev']);
    expect(change(plain, withAll)).toBe('shop/checkout-v2 dev: variants added: blue 50, green 50; prerequisite search = on added');
    expect(change(withAll, plain)).toBe(
      'shop/checkout-v2 dev: variants removed (valueOn is served again); prerequisite search = on removed',
    );
  });

  it('counts the user ids added to and removed from a segment', () => {
    const before = validRepository();
    before['projects/shop/segments/beta-testers.yaml'] = 'key: beta-testers\nuserIds: [ana]\n';
    const after = validRepository();
    after['projects/shop/segments/beta-testers.yaml'] = 'key: beta-testers\nuserIds: [ana, bo, chen, dana]\n';
    expect(change(before, after)).toBe('shop: segment beta-testers: 3 user ids added');
    after['projects/shop/segments/beta-testers.yaml'] =
      'key: beta-testers\nuserIds: [bo]\nconditions:\n  - attribute: plan\n    op: eq\n    value: beta\n';
    expect(change(before, after)).toBe('shop: segment beta-testers: 1 user id added, 1 user id removed, conditions changed');
    expect(change(validRepository(), before)).toBe('shop: segment beta-testers added (1 user id, 0 conditions)');
    expect(change(before, validRepository())).toBe('shop: segment beta-testers removed');
  });
});

describe('checking one config against its project before a write', () => {
  const state = () => {
    const files = validRepository();
    files['projects/shop/segments/beta.yaml'] = 'key: beta\nuserIds: [ana]\n';
    withConfig(files, 'rules:\n  - id: b\n    serve: "on"\n    conditions:\n      - op: in_segment\n        value: beta\n', 'search', [
      'prod',
    ]);
    return read(files).state.projects.get('shop')!;
  };
  const config = (extra: Partial<EnvironmentConfig>): EnvironmentConfig => ({
    enabled: true,
    rolloutPct: 100,
    valueOn: true,
    valueOff: false,
    version: 1,
    rules: [],
    ...extra,
  });

  it('names the field of an unknown segment, an unknown prerequisite flag and a cycle', () => {
    const project = state();
    expect(
      configReferenceIssues(
        project,
        'checkout-v2',
        'dev',
        config({ rules: [{ id: 'r', serve: 'on', conditions: [{ op: 'in_segment', value: 'gone' }] }] }),
      ),
    ).toEqual([
      {
        path: '/rules/0/conditions/0/value',
        message: 'names segment "gone", which project "shop" does not have (expected projects/shop/segments/gone.yaml)',
      },
    ]);
    expect(configReferenceIssues(project, 'checkout-v2', 'dev', config({ prerequisites: [{ flag: 'nope', variation: 'on' }] }))).toEqual([
      { path: '/prerequisites/0/flag', message: 'names flag "nope", which project "shop" does not have' },
    ]);
    const withPrerequisite = read(
      withConfig(validRepository(), 'prerequisites:\n  - flag: checkout-v2\n    variation: "on"\n', 'search', ['dev']),
    ).state.projects.get('shop')!;
    expect(
      configReferenceIssues(withPrerequisite, 'checkout-v2', 'dev', config({ prerequisites: [{ flag: 'search', variation: 'on' }] })),
    ).toEqual([{ path: '/prerequisites/0/flag', message: 'is part of a prerequisite cycle: checkout-v2 → search → checkout-v2' }]);
    expect(configReferenceIssues(project, 'checkout-v2', 'dev', config({ prerequisites: [{ flag: 'search', variation: 'on' }] }))).toEqual(
      [],
    );
    expect(
      configReferenceIssues(project, 'checkout-v2', 'dev', config({ prerequisites: [{ flag: 'search', variation: 'default' }] })),
    ).toEqual([
      {
        path: '/prerequisites/0/variation',
        message: 'names variation "default", which flag "search" cannot serve in dev (it serves on, off)',
      },
    ]);
  });

  it('finds the configs that use a segment', () => {
    expect(segmentUsage(state(), 'beta')).toEqual([{ flag: 'search', environment: 'prod' }]);
    expect(segmentUsage(state(), 'other')).toEqual([]);
  });
});
