import type { RefsScan } from './find-refs.js';

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** The summary names at most this many flags; the list above names them all. */
const NAMED = 10;

function names(list: string[]): string {
  return list.length <= NAMED ? list.join(', ') : `${list.slice(0, NAMED).join(', ')} and ${list.length - NAMED} more`;
}

/**
 * `flagops refs` as text: each flag with its status and its references as `file:line` (what editors and CI
 * logs link), then the unknown keys, then a summary naming the flags that are not active but still referenced
 * (the code to clean up).
 */
export function formatRefs({ report, filesScanned }: RefsScan): string {
  const lines: string[] = [];
  for (const flag of report.flags) {
    const count = flag.references.length;
    lines.push(`${flag.key} (${flag.status}): ${count === 0 ? 'no references' : plural(count, 'reference')}`);
    for (const ref of flag.references) lines.push(`  ${ref.file}:${ref.line}`);
  }
  if (report.unknownKeys.length > 0) {
    lines.push('', 'Unknown keys (passed to an SDK evaluation call, but no flag has them):');
    for (const u of report.unknownKeys) lines.push(`  ${u.key}  ${u.file}:${u.line}`);
  }
  const referenced = report.flags.filter((f) => f.references.length > 0);
  const notActive = referenced.filter((f) => f.status !== 'active');
  const summary = [
    `${plural(report.flags.length, 'flag')}, ${referenced.length} referenced`,
    notActive.length === 0
      ? 'no stale flag referenced'
      : `${plural(notActive.length, 'flag')} not active but still referenced: ${names(notActive.map((f) => `${f.key} (${f.status})`))}`,
    plural(report.unknownKeys.length, 'unknown key'),
    `${plural(filesScanned, 'file')} scanned`,
  ];
  lines.push('', `${summary.join('; ')}`);
  return `${lines.join('\n')}\n`;
}
