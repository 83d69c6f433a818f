import { compareSemver, parseSemver } from '@flagops/core';
import { describe, expect, it } from 'vitest';

// The regular expression semver.org 2.0.0 publishes for valid versions: an independent check of validity.
const SEMVER_ORG =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

const VALID = [
  '0.0.0',
  '1.2.3',
  '10.20.30',
  '1.1.2-prerelease+meta',
  '1.1.2+meta',
  '1.1.2+meta-valid',
  '1.0.0-alpha',
  '1.0.0-beta',
  '1.0.0-alpha.beta',
  '1.0.0-alpha.beta.1',
  '1.0.0-alpha.1',
  '1.0.0-alpha0.valid',
  '1.0.0-alpha.0valid',
  '1.0.0-alpha-a.b-c-somethinglong+build.1-aef.1-its-okay',
  '1.0.0-rc.1+build.1',
  '2.0.0-rc.1+build.123',
  '1.2.3-beta',
  '10.2.3-DEV-SNAPSHOT',
  '1.2.3-SNAPSHOT-123',
  '2.0.0+build.1848',
  '2.0.1-alpha.1227',
  '1.0.0-alpha+beta',
  '1.2.3----RC-SNAPSHOT.12.9.1--.12+788',
  '1.2.3----R-S.12.9.1--.12+meta',
  '1.2.3----RC-SNAPSHOT.12.9.1--.12',
  '1.0.0+0.build.1-rc.10000aaa-kk-0.1',
  '99999999999999999999999.999999999999999999.99999999999999999',
  '1.0.0-0A.is.legal',
  '1.0.0+001',
];

const INVALID = [
  '',
  '1',
  '1.2',
  '1.2.3-0123',
  '1.2.3-0123.0123',
  '1.1.2+.123',
  '+invalid',
  '-invalid',
  '-invalid+invalid',
  '-invalid.01',
  'alpha',
  'alpha.beta',
  'alpha.beta.1',
  'alpha.1',
  'alpha+beta',
  'alpha_beta',
  'alpha.',
  'alpha..',
  'beta',
  '1.0.0-alpha_beta',
  '-alpha.',
  '1.0.0-alpha..',
  '1.0.0-alpha..1',
  '1.0.0-alpha...1',
  '01.1.1',
  '1.01.1',
  '1.1.01',
  '1.2.3.DEV',
  '1.2-SNAPSHOT',
  '1.2.31.2.3----RC-SNAPSHOT.12.09.1--..12+788',
  '1.2-RC-SNAPSHOT',
  '-1.0.3-gamma+b7718',
  '+justmeta',
  '9.8.7+meta+meta',
  '9.8.7-whatever+meta+meta',
  'v1.2.3',
  'V1.2.3',
  ' 1.2.3',
  '1.2.3 ',
  '1.2.3-',
  '1.2.3+',
  '1.2.3-é',
  '１.２.３',
];

describe('semantic versions (semver_*: semver.org 2.0.0)', () => {
  it.each(VALID)('accepts %s, as the semver.org grammar does', (v) => {
    expect(SEMVER_ORG.test(v)).toBe(true);
    expect(parseSemver(v)).not.toBeNull();
    expect(compareSemver(v, parseSemver(v)!)).toBe(0);
  });

  it.each(INVALID)('rejects %j, as the semver.org grammar does', (v) => {
    expect(SEMVER_ORG.test(v)).toBe(false);
    expect(parseSemver(v)).toBeNull();
    expect(compareSemver(v, parseSemver('1.0.0')!)).toBeNaN();
  });

  it('rejects a leading "v": it is a tag convention, not part of a semantic version', () => {
    expect(parseSemver('v2.0.0')).toBeNull();
  });

  it('orders versions by the precedence of spec item 11', () => {
    // The example chain of spec item 11.4, plus core ordering.
    const chain = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.1.0',
      '1.9.0',
      '1.10.0',
      '2.0.0',
      '10.0.0',
    ];
    for (let i = 0; i < chain.length; i++) {
      for (let j = 0; j < chain.length; j++) {
        expect(compareSemver(chain[i], parseSemver(chain[j])!), `${chain[i]} vs ${chain[j]}`).toBe(Math.sign(i - j));
      }
    }
  });

  it('ignores build metadata for precedence', () => {
    expect(compareSemver('1.0.0+build.2', parseSemver('1.0.0+build.1')!)).toBe(0);
    expect(compareSemver('1.0.0-rc.1+x', parseSemver('1.0.0-rc.1')!)).toBe(0);
  });

  it('compares numbers beyond 2^53 exactly', () => {
    expect(compareSemver('9007199254740993.0.0', parseSemver('9007199254740992.0.0')!)).toBe(1);
    expect(compareSemver('1.0.0-9007199254740993', parseSemver('1.0.0-9007199254740992')!)).toBe(1);
    expect(compareSemver('100000000000000000000.0.0', parseSemver('99999999999999999999.0.0')!)).toBe(1);
  });

  it('compares alphanumeric prerelease identifiers in ASCII order (uppercase before lowercase)', () => {
    expect(compareSemver('1.0.0-Beta', parseSemver('1.0.0-alpha')!)).toBe(-1);
    expect(compareSemver('1.0.0-alpha-1', parseSemver('1.0.0-alpha')!)).toBe(1);
  });
});
