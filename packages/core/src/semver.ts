/**
 * Semantic versions per semver.org 2.0.0, for the semver_eq, semver_gt and semver_lt operators.
 * Condition values are parsed once at compile time; context attributes are compared by scanning the
 * string in place, so the hot path allocates nothing. Strictly semver.org's grammar: no leading "v", no
 * surrounding spaces, no leading zeros in numeric identifiers; build metadata is validated and ignored.
 */

/** A prerelease identifier: numeric ones compare as numbers, the rest in ASCII order (spec item 11). */
export interface PrereleaseId {
  readonly numeric: boolean;
  readonly text: string;
}

/**
 * A parsed version. The core numbers are kept as digit strings, so versions beyond 2^53 still compare
 * exactly, and as numbers for the common case of at most 15 digits.
 */
export interface Semver {
  readonly major: string;
  readonly minor: string;
  readonly patch: string;
  readonly prerelease: readonly PrereleaseId[];
  /** major, minor, patch as numbers; exact because a part of up to 15 digits is below 2^53. */
  readonly core: readonly [number, number, number];
}

/** Digit counts up to which a numeric identifier is compared as a double. */
const EXACT_DIGITS = 15;

const DOT = 46;
const HYPHEN = 45;
const PLUS = 43;
const ZERO = 48;

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isIdentifierChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === HYPHEN;
}

/** Compares s[start, end), a numeric identifier without leading zeros, with the digit string `t`. */
function compareNumeric(s: string, start: number, end: number, t: string): number {
  const len = end - start;
  if (len !== t.length) return len < t.length ? -1 : 1;
  for (let j = 0; j < len; j++) {
    const a = s.charCodeAt(start + j);
    const b = t.charCodeAt(j);
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

/** Compares s[start, end) with the identifier `t` in ASCII order, a shorter prefix first. */
function compareAscii(s: string, start: number, end: number, t: string): number {
  const len = end - start;
  const common = Math.min(len, t.length);
  for (let j = 0; j < common; j++) {
    const a = s.charCodeAt(start + j);
    const b = t.charCodeAt(j);
    if (a !== b) return a < b ? -1 : 1;
  }
  return len === t.length ? 0 : len < t.length ? -1 : 1;
}

function compareIdentifier(s: string, start: number, end: number, numeric: boolean, t: PrereleaseId): number {
  if (numeric !== t.numeric) return numeric ? -1 : 1; // spec 11.4.3: numeric identifiers rank lower
  return numeric ? compareNumeric(s, start, end, t.text) : compareAscii(s, start, end, t.text);
}

/**
 * Precedence of the version written in `s` relative to `v`: -1, 0 or 1, or NaN when `s` is not a
 * valid semantic version (so every comparison with the result is false: fail closed).
 */
export function compareSemver(s: string, v: Semver): number {
  const end = s.length;
  let i = 0;
  let cmp = 0;
  for (let part = 0; part < 3; part++) {
    if (part > 0) {
      if (i >= end || s.charCodeAt(i) !== DOT) return Number.NaN;
      i++;
    }
    // One read per char: the digits are accumulated as they are validated.
    const start = i;
    let value = 0;
    while (i < end) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      value = value * 10 + (c - 48);
      i++;
    }
    const len = i - start;
    if (len === 0 || (len > 1 && s.charCodeAt(start) === ZERO)) return Number.NaN; // empty, or a leading zero
    if (cmp === 0) {
      const t = part === 0 ? v.major : part === 1 ? v.minor : v.patch;
      if (len !== t.length)
        cmp = len < t.length ? -1 : 1; // no leading zeros: more digits, larger number
      else if (len <= EXACT_DIGITS) cmp = value === v.core[part] ? 0 : value < v.core[part] ? -1 : 1;
      else cmp = compareNumeric(s, start, i, t);
    }
  }

  let count = 0; // prerelease identifiers in s
  let preCmp = 0; // first difference among the identifiers both versions have
  if (i < end && s.charCodeAt(i) === HYPHEN) {
    do {
      i++; // past "-" or "."
      const start = i;
      let numeric = true;
      while (i < end) {
        const c = s.charCodeAt(i);
        if (!isIdentifierChar(c)) break;
        if (!isDigit(c)) numeric = false;
        i++;
      }
      if (i === start || (numeric && i - start > 1 && s.charCodeAt(start) === ZERO)) return Number.NaN;
      if (preCmp === 0 && count < v.prerelease.length) preCmp = compareIdentifier(s, start, i, numeric, v.prerelease[count]);
      count++;
    } while (i < end && s.charCodeAt(i) === DOT);
  }

  if (i < end && s.charCodeAt(i) === PLUS) {
    do {
      i++;
      const start = i;
      while (i < end && isIdentifierChar(s.charCodeAt(i))) i++;
      if (i === start) return Number.NaN;
    } while (i < end && s.charCodeAt(i) === DOT);
  }
  if (i !== end) return Number.NaN;

  if (cmp !== 0) return cmp;
  const other = v.prerelease.length;
  if (count === 0 || other === 0) return count === other ? 0 : count === 0 ? 1 : -1; // spec 11.3: a release outranks its prereleases
  if (preCmp !== 0) return preCmp;
  return count === other ? 0 : count < other ? -1 : 1;
}

const ORIGIN: Semver = { major: '0', minor: '0', patch: '0', prerelease: [], core: [0, 0, 0] };

/** Parses a version for later comparison; null when it is not a valid semantic version. */
export function parseSemver(s: unknown): Semver | null {
  if (typeof s !== 'string' || Number.isNaN(compareSemver(s, ORIGIN))) return null;
  const plus = s.indexOf('+');
  const version = plus === -1 ? s : s.slice(0, plus);
  const hyphen = version.indexOf('-');
  const [major, minor, patch] = (hyphen === -1 ? version : version.slice(0, hyphen)).split('.');
  const prerelease =
    hyphen === -1
      ? []
      : version
          .slice(hyphen + 1)
          .split('.')
          .map((text) => ({ numeric: /^[0-9]+$/.test(text), text }));
  return { major, minor, patch, prerelease, core: [Number(major), Number(minor), Number(patch)] };
}
