import { evaluatedKeys, type Language } from './call-shapes.js';

/** A quoted literal of flag-key syntax: '…', "…" or `…` (a template literal without `${`). */
const LITERAL = /(["'`])([A-Za-z0-9][A-Za-z0-9._-]{0,127})\1/g;

export interface KeyAt {
  key: string;
  /** 1-based. */
  line: number;
}

export interface TextFindings {
  /** Each known key used as a quoted literal, once per line. */
  references: KeyAt[];
  /** Each key passed to an SDK evaluation call that is not known, once per line. */
  unknown: KeyAt[];
}

/**
 * Reads one file's text: where it uses one of `known` as a quoted literal, and, when its language has SDK
 * call shapes, the literal keys it passes to evaluation calls that `known` lacks. One pass of one regular
 * expression finds every literal and a set lookup decides; lines are counted only when something was found.
 */
export function scanText(text: string, known: ReadonlySet<string>, language: Language | undefined): TextFindings {
  const hits: { key: string; index: number }[] = [];
  LITERAL.lastIndex = 0;
  for (let m = LITERAL.exec(text); m !== null; m = LITERAL.exec(text)) {
    if (known.has(m[2])) hits.push({ key: m[2], index: m.index });
  }
  const calls = language === undefined ? [] : evaluatedKeys(text, language).filter((call) => !known.has(call.key));
  if (hits.length === 0 && calls.length === 0) return { references: [], unknown: [] };
  const lineAt = lineCounter(text);
  return { references: oncePerLine(hits, lineAt), unknown: oncePerLine(calls, lineAt) };
}

function oncePerLine(found: { key: string; index: number }[], lineAt: (index: number) => number): KeyAt[] {
  const seen = new Set<string>();
  const out: KeyAt[] = [];
  for (const { key, index } of found.sort((a, b) => a.index - b.index)) {
    const line = lineAt(index);
    const id = `${line}\n${key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({ key, line });
  }
  return out;
}

/** The 1-based line of an offset, from a table of line starts built once. */
function lineCounter(text: string): (index: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (index) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}
