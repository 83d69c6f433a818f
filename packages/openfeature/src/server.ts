/** @flagops/openfeature: the OpenFeature server provider, for Node. The web provider is `@flagops/openfeature/web`. */
import { type ClientOptions, createClient, type FlagopsClient } from '@flagops/sdk';
import {
  type EvaluationContext,
  type JsonValue,
  OpenFeatureEventEmitter,
  type Provider,
  ProviderEvents,
  type ResolutionDetails,
} from '@openfeature/server-sdk';
import { FlagopsProviderBase, toFlagopsContext, toResolution } from './provider-base.js';

export { toFlagopsContext };

/** Either the SDK's options (the provider makes and owns a client) or a client of yours (it stays yours). */
export type FlagopsProviderOptions = ClientOptions | { client: FlagopsClient };

/**
 * An OpenFeature server provider (@openfeature/server-sdk) built on the flagops SDK, in local or remote mode.
 * Reasons map to OpenFeature's; flagops' own reason, rule, bucket and kill travel in the flag metadata.
 */
export class FlagopsProvider extends FlagopsProviderBase<FlagopsClient, ProviderEvents> implements Provider {
  readonly runsOn = 'server' as const;
  readonly events = new OpenFeatureEventEmitter();

  constructor(options: FlagopsProviderOptions) {
    super('client' in options ? options.client : createClient(options), !('client' in options), ProviderEvents);
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

  resolveObjectEvaluation<T extends JsonValue>(
    flagKey: string,
    defaultValue: T,
    context: EvaluationContext,
  ): Promise<ResolutionDetails<T>> {
    return this.resolve(flagKey, defaultValue, context);
  }

  private async resolve<T extends JsonValue>(flagKey: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    // details() widens a literal default's type (false → boolean); OpenFeature's T is already that type.
    return toResolution(await this.client.details(flagKey, defaultValue, toFlagopsContext(context))) as ResolutionDetails<T>;
  }
}
