import {
  type EvaluationContext,
  GeneralError,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  type ResolutionDetails,
} from '@openfeature/web-sdk';
import { type ClientOptions, createClient, type LocalClient } from '../sdk/index.js';
import { toFlagopsContext } from './context.js';
import { forwardClientEvents } from './provider-events.js';
import { toResolution } from './resolution.js';

/** The SDK's options in local mode (the provider makes and owns the client), or a local-mode client of yours. */
export type FlagopsWebProviderOptions = (ClientOptions & { mode?: 'local' }) | { client: LocalClient };

/**
 * An OpenFeature web provider (@openfeature/web-sdk). The web SDK resolves flags synchronously, so this
 * provider evaluates locally from the snapshot: a context change needs no request, and every flag is
 * resolved for whatever context the application has set.
 */
export class FlagopsWebProvider implements Provider {
  readonly metadata = { name: 'flagops' } as const;
  readonly runsOn = 'client' as const;
  readonly events = new OpenFeatureEventEmitter();
  readonly client: LocalClient;
  private readonly ownsClient: boolean;
  private readonly stopForwarding: () => void;
  private initialized = false;

  constructor(options: FlagopsWebProviderOptions) {
    if ('client' in options) {
      if (options.client.mode !== 'local') throw new TypeError('flagops: the web provider needs a local-mode client');
      this.client = options.client;
    } else {
      if ((options as ClientOptions).mode === 'remote') throw new TypeError('flagops: the web provider evaluates locally; remove mode: remote');
      this.client = createClient({ ...options, mode: 'local' });
    }
    this.ownsClient = !('client' in options);
    this.stopForwarding = forwardClientEvents(this.client, (event, details) => this.events.emit(event, details), ProviderEvents, () => this.initialized);
  }

  async initialize(): Promise<void> {
    const status = await this.client.ready();
    this.initialized = true;
    if (status !== 'ready' && status !== 'stale') throw new GeneralError(`the flagops client is ${status}; it keeps retrying`);
  }

  async onClose(): Promise<void> {
    this.stopForwarding();
    if (this.ownsClient) await this.client.close();
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): ResolutionDetails<boolean> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): ResolutionDetails<string> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): ResolutionDetails<number> {
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context)));
  }

  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): ResolutionDetails<T> {
    // details() widens a literal default's type (false → boolean); an object type is left as it is.
    return toResolution(this.client.details(flagKey, defaultValue, toFlagopsContext(context))) as ResolutionDetails<T>;
  }
}
