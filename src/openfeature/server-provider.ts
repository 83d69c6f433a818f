import {
  type EvaluationContext,
  GeneralError,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  type ResolutionDetails,
} from '@openfeature/server-sdk';
import { type ClientOptions, createClient, type FlagopsClient } from '../sdk/index.js';
import { toFlagopsContext } from './context.js';
import { forwardClientEvents } from './provider-events.js';
import { toResolution } from './resolution.js';

/** Either the SDK's options (the provider makes and owns a client) or a client of yours (it stays yours). */
export type FlagopsProviderOptions = ClientOptions | { client: FlagopsClient };

/**
 * An OpenFeature server provider (@openfeature/server-sdk) built on the flagops SDK, in local or remote mode.
 * Reasons map to OpenFeature's (docs/getting-started-openfeature.md); flagops' own reason, rule, bucket and
 * kill travel in the flag metadata.
 */
export class FlagopsProvider implements Provider {
  readonly metadata = { name: 'flagops' } as const;
  readonly runsOn = 'server' as const;
  readonly events = new OpenFeatureEventEmitter();
  readonly client: FlagopsClient;
  private readonly ownsClient: boolean;
  private readonly stopForwarding: () => void;
  private initialized = false;

  constructor(options: FlagopsProviderOptions) {
    this.ownsClient = !('client' in options);
    this.client = 'client' in options ? options.client : createClient(options);
    this.stopForwarding = forwardClientEvents(this.client, (event, details) => this.events.emit(event, details), ProviderEvents, () => this.initialized);
  }

  /** Resolves once the client serves flags; rejects (the SDK then reports ERROR) when it cannot, and recovers by event. */
  async initialize(): Promise<void> {
    const status = await this.client.ready();
    this.initialized = true;
    if (status !== 'ready' && status !== 'stale') throw new GeneralError(`the flagops client is ${status}; it keeps retrying`);
  }

  async onClose(): Promise<void> {
    this.stopForwarding();
    if (this.ownsClient) await this.client.close();
  }

  resolveBooleanEvaluation(flagKey: string, defaultValue: boolean, context: EvaluationContext): Promise<ResolutionDetails<boolean>> {
    return this.resolve(flagKey, defaultValue, context);
  }

  resolveStringEvaluation(flagKey: string, defaultValue: string, context: EvaluationContext): Promise<ResolutionDetails<string>> {
    return this.resolve(flagKey, defaultValue, context);
  }

  resolveNumberEvaluation(flagKey: string, defaultValue: number, context: EvaluationContext): Promise<ResolutionDetails<number>> {
    return this.resolve(flagKey, defaultValue, context);
  }

  resolveObjectEvaluation<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    return this.resolve(flagKey, defaultValue, context);
  }

  private async resolve<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    // details() widens a literal default's type (false → boolean); OpenFeature's T is already that type.
    return toResolution(await this.client.details(flagKey, defaultValue, toFlagopsContext(context))) as ResolutionDetails<T>;
  }
}
