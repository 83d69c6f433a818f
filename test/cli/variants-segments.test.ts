import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { flagops, sampleCopy } from './cli-harness.js';

const CONFIG = 'projects/shop/environments/prod/checkout-v2.yaml';
const VARIANTS = 'variants:\n  - name: blue\n    value: true\n    weight: 50\n  - name: green\n    value: false\n    weight: 50\n';

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Alice', '-c', 'user.email=alice@example.com', '-c', 'commit.gpgsign=false', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: dir, GIT_CONFIG_NOSYSTEM: '1' },
  }).trim();
}

describe('flagops validate and diff with variants, segments and prerequisites', () => {
  let copy: { dir: string; remove: () => void } | undefined;
  afterEach(() => copy?.remove());

  /** checkout-v2's staff rule in staging, made to test the segment "staff" instead of the email. */
  const staffRuleOnSegment = () => {
    const staging = join(copy!.dir, 'projects/shop/environments/staging/checkout-v2.yaml');
    const text = readFileSync(staging, 'utf8');
    writeFileSync(
      staging,
      text.replace(
        '      - attribute: email\n        op: contains\n        value: "@example.com"',
        '      - op: in_segment\n        value: staff',
      ),
    );
  };
  const append = (path: string, text: string) => writeFileSync(join(copy!.dir, path), readFileSync(join(copy!.dir, path), 'utf8') + text);

  it('prints the checks across files as file:line:column: path: message', async () => {
    copy = sampleCopy();
    append(CONFIG, VARIANTS.replace('weight: 50\n  - name: green', 'weight: 40\n  - name: green'));
    append('projects/shop/environments/dev/search-ranking.yaml', 'prerequisites:\n  - flag: no-such-flag\n    variation: "on"\n');
    const result = await flagops(['validate', copy.dir]);
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines).toContain(`${copy.dir}/${CONFIG}:29:3: /variants: weights must add up to exactly 100 (blue 40 + green 50 = 90)`);
    expect(lines.find((l) => l.includes('dev/search-ranking.yaml'))).toMatch(
      /dev\/search-ranking\.yaml:\d+:11: \/prerequisites\/0\/flag: names flag "no-such-flag", which project "shop" does not have$/,
    );
  });

  it('names an unknown segment at its line and column', async () => {
    copy = sampleCopy();
    staffRuleOnSegment();
    const result = await flagops(['validate', copy.dir]);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n').find((l) => l.includes('staging/checkout-v2.yaml'))).toMatch(
      /staging\/checkout-v2\.yaml:\d+:16: \/rules\/\d\/conditions\/0\/value: names segment "staff", which project "shop" does not have/,
    );
  });

  it('accepts a segment file and a rule that uses it', async () => {
    copy = sampleCopy();
    mkdirSync(join(copy.dir, 'projects/shop/segments'));
    writeFileSync(join(copy.dir, 'projects/shop/segments/staff.yaml'), 'key: staff\nuserIds: [ana]\n');
    staffRuleOnSegment();
    const result = await flagops(['validate', copy.dir]);
    expect(result.stdout).toContain(': valid (1 valid project, 4 valid flags, 20 files checked)');
  });

  it('says what changed in words: variant weights, segment user ids, prerequisites', async () => {
    copy = sampleCopy();
    mkdirSync(join(copy.dir, 'projects/shop/segments'));
    writeFileSync(join(copy.dir, 'projects/shop/segments/beta-testers.yaml'), 'key: beta-testers\nuserIds: [ana]\n');
    append(CONFIG, VARIANTS);
    git(copy.dir, 'init', '-q', '-b', 'main');
    git(copy.dir, 'add', '.');
    git(copy.dir, 'commit', '-q', '-m', 'sample');
    const config = readFileSync(join(copy.dir, CONFIG), 'utf8');
    writeFileSync(
      join(copy.dir, CONFIG),
      config.replace('weight: 50\n  - name: green', 'weight: 30\n  - name: green').replace(/weight: 50\n$/, 'weight: 70\n'),
    );
    writeFileSync(join(copy.dir, 'projects/shop/segments/beta-testers.yaml'), 'key: beta-testers\nuserIds: [ana, bo, chen, dana]\n');
    append('projects/shop/environments/dev/checkout-v2.yaml', 'prerequisites:\n  - flag: search-ranking\n    variation: "on"\n');
    git(copy.dir, 'commit', '-q', '-am', 'change');
    expect((await flagops(['diff', 'HEAD~1', 'HEAD', '--repo', copy.dir])).stdout).toBe(
      [
        'shop: segment beta-testers: 3 user ids added',
        'shop/checkout-v2 dev: prerequisite search-ranking = on added',
        'shop/checkout-v2 prod: variants blue 50 → 30, green 50 → 70',
        '',
      ].join('\n'),
    );
  });
});
