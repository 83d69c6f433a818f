import type { SdkLogger } from './types.js';

type Listener<T> = (event: T) => void;

/**
 * A small typed event emitter, so the SDK needs no EventTarget or Node events. A listener that throws is logged
 * and the others still run: an application's handler must not break flag delivery.
 */
export class Emitter<Events extends object> {
  private readonly listeners = new Map<keyof Events, Set<Listener<never>>>();

  constructor(private readonly logger: SdkLogger) {}

  on<E extends keyof Events>(event: E, listener: Listener<Events[E]>): () => void {
    let set = this.listeners.get(event);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener as Listener<never>);
    return () => this.off(event, listener);
  }

  off<E extends keyof Events>(event: E, listener: Listener<Events[E]>): void {
    this.listeners.get(event)?.delete(listener as Listener<never>);
  }

  emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    const set = this.listeners.get(event);
    if (set === undefined) return;
    for (const listener of [...set]) {
      try {
        (listener as Listener<Events[E]>)(payload);
      } catch (err) {
        this.logger.error(`a ${String(event)} listener threw`, { error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}
