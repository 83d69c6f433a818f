import type { DraftIssue } from '../types.js';

/** Where the editor shows a message: under the field it is about. */
export type FieldSlot = 'enabled' | 'rolloutPct' | 'valueOn' | 'valueOff' | 'rules' | 'form';

export type SlotMessages = Record<FieldSlot, string[]>;

export function emptyMessages(): SlotMessages {
  return { enabled: [], rolloutPct: [], valueOn: [], valueOff: [], rules: [], form: [] };
}

function slotOf(field: string): FieldSlot {
  const head = field.split(/[.[]/, 1)[0];
  return head === 'enabled' || head === 'rolloutPct' || head === 'valueOn' || head === 'valueOff' || head === 'rules' ? head : 'form';
}

/**
 * Server issues as lines under their fields. Inside the rules the line number of the YAML text comes first
 * and the field path stays (`line 7: rules[1].conditions[0].value: must be a number for op "gt"`), since
 * the rules box holds many fields; elsewhere the place already says which field it is.
 */
export function draftMessages(issues: DraftIssue[], local: Partial<Record<FieldSlot, string>> = {}): SlotMessages {
  const out = emptyMessages();
  for (const [slot, message] of Object.entries(local) as Array<[FieldSlot, string | undefined]>) if (message) out[slot].push(message);
  for (const issue of issues) {
    const slot = slotOf(issue.field);
    // A field whose text did not even parse keeps its local message; the server saw no value for it.
    if (local[slot]) continue;
    if (slot !== 'rules') {
      out[slot].push(slot === 'form' && issue.field !== '' ? `${issue.field}: ${issue.message}` : issue.message);
      continue;
    }
    const where = issue.line === undefined ? '' : `line ${issue.line}${issue.column === undefined ? '' : `, column ${issue.column}`}: `;
    const field = issue.field === 'rules' ? '' : `${issue.field}: `;
    out.rules.push(`${where}${field}${issue.message}`);
  }
  return out;
}

export function hasMessages(messages: SlotMessages): boolean {
  return Object.values(messages).some((list) => list.length > 0);
}
