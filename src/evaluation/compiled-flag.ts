import type { Rule, SnapshotFlag } from '../model/index.js';
import { murmur3Absorb } from './murmur3.js';
import { CompiledCondition } from './operators.js';
import { frozenCopy } from './frozen-copy.js';

export class CompiledRule {
  readonly id: string;
  readonly serveOn: boolean;
  readonly hasRollout: boolean;
  /** Meaningful only when hasRollout. */
  readonly rolloutPct: number;
  readonly conditions: readonly CompiledCondition[];

  constructor(rule: Rule) {
    this.id = rule.id;
    this.serveOn = rule.serve === 'on';
    this.hasRollout = typeof rule.rolloutPct === 'number';
    this.rolloutPct = this.hasRollout ? (rule.rolloutPct as number) : 0;
    this.conditions = (rule.conditions ?? []).map((c) => new CompiledCondition(c));
  }
}

/** One flag of a snapshot, prepared once so that evaluation only reads fields. */
export class CompiledFlag {
  readonly key: string;
  readonly killed: boolean;
  readonly archived: boolean;
  readonly enabled: boolean;
  readonly rolloutPct: number;
  readonly valueOn: SnapshotFlag['valueOn'];
  readonly valueOff: SnapshotFlag['valueOff'];
  /** Archived flags serve it; null when the flag has none (contract §4 step 2). */
  readonly defaultValue: SnapshotFlag['defaultValue'];
  readonly rules: readonly CompiledRule[];
  /** MurmurHash3 state after `"<key>/"`, kept as plain number fields so the bucket reads no nested object. */
  readonly prefixH: number;
  readonly prefixK: number;
  readonly prefixN: number;
  readonly prefixLen: number;

  constructor(key: string, flag: SnapshotFlag) {
    this.key = key;
    this.killed = flag.killed === true;
    this.archived = flag.archived === true;
    this.enabled = flag.enabled === true;
    this.rolloutPct = flag.rolloutPct;
    this.valueOn = frozenCopy(flag.valueOn);
    this.valueOff = frozenCopy(flag.valueOff);
    this.defaultValue = frozenCopy(flag.defaultValue);
    this.rules = (flag.rules ?? []).map((r) => new CompiledRule(r));
    const prefix = murmur3Absorb(key + '/');
    this.prefixH = prefix.h;
    this.prefixK = prefix.k;
    this.prefixN = prefix.n;
    this.prefixLen = prefix.len;
  }
}
