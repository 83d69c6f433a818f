import { StorageFaultError } from '../errors/kinds.js';
import type { Logger } from '../log/logger.js';

/** A fault an organisation's repository has now, as /healthz and the metrics report it. */
export interface StorageFaultState {
  kind: 'read' | 'write';
  message: string;
  /** When it was first seen (ISO-8601). */
  since: string;
}

/**
 * The faults one repository has now: a read fault from the last failed read of what main serves, until one
 * succeeds; a write fault from the last failed write, until a write (or a probe of the object directory)
 * succeeds. Each is logged when it appears and when it goes.
 */
export class StorageFaults {
  private readonly current = new Map<'read' | 'write', StorageFaultState>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records `err` when it is a storage fault; anything else is not this tracker's business. */
  note(err: unknown): void {
    if (!(err instanceof StorageFaultError)) return;
    const known = this.current.get(err.kind);
    if (known?.message === err.fault) return;
    this.current.set(err.kind, { kind: err.kind, message: err.fault, since: known?.since ?? this.now().toISOString() });
    this.logger.error(`the flags repository cannot be ${err.kind === 'read' ? 'read' : 'written'}`, { fault: err.fault });
  }

  clear(kind: 'read' | 'write'): void {
    const known = this.current.get(kind);
    if (!known) return;
    this.current.delete(kind);
    this.logger.info(`the flags repository can be ${kind === 'read' ? 'read' : 'written'} again`, {
      fault: known.message,
      since: known.since,
    });
  }

  /** The fault to report: a read fault (nothing new can be served) before a write fault (nothing can change). */
  get(): StorageFaultState | undefined {
    return this.current.get('read') ?? this.current.get('write');
  }
}
