import type { EvaluationContext, EvaluationResult, SnapshotFlag } from '../model/index.js';
import { CompiledFlag } from './compiled-flag.js';
import { evaluateFlag } from './evaluate-flag.js';

const EMPTY_CONTEXT: EvaluationContext = Object.freeze({});

/** An environment's flags compiled once per snapshot; evaluating is then read-only and allocates only the result. */
export class CompiledEnvironment {
  private readonly flags: ReadonlyMap<string, CompiledFlag>;
  /** Every flag key of the snapshot, in snapshot order. */
  readonly keys: readonly string[];

  constructor(flags: Record<string, SnapshotFlag>) {
    const compiled = new Map<string, CompiledFlag>();
    for (const key of Object.keys(flags)) compiled.set(key, new CompiledFlag(key, flags[key]));
    this.flags = compiled;
    this.keys = Object.freeze([...compiled.keys()]);
  }

  has(flagKey: string): boolean {
    return this.flags.has(flagKey);
  }

  /**
   * Evaluates one flag (contract §4). `killedKeys` is the kill overlay the server swaps independently of the
   * snapshot: when given it alone decides "killed"; when absent, the snapshot's own `killed` field does (SDKs).
   */
  evaluate(flagKey: string, context: EvaluationContext, killedKeys?: ReadonlySet<string>): EvaluationResult {
    const flag = this.flags.get(flagKey);
    if (flag === undefined) return { value: null, reason: 'flag_not_found' };
    const killed = killedKeys === undefined ? flag.killed : killedKeys.has(flagKey);
    return evaluateFlag(flag, context ?? EMPTY_CONTEXT, killed);
  }
}

/** Compiles a snapshot's flags (contract §4) for repeated evaluation. Later changes to the input have no effect. */
export function compileEnvironment(flags: Record<string, SnapshotFlag>): CompiledEnvironment {
  return new CompiledEnvironment(flags);
}
