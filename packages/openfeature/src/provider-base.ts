/**
 * What the OpenFeature server and web providers share: the client they wrap, their lifecycle (initialize,
 * onClose), the client's events as provider events, and the translation of contexts and results.
 */
import { flagMetadata, openFeatureReason, setOwn } from '@flagops/core';
import type { ClientStatus, EvaluationContext, EvaluationDetails, FlagopsClient } from '@flagops/sdk';
import {
  type ErrorCode,
  GeneralError,
  type EvaluationContext as OpenFeatureContext,
  type ResolutionDetails,
  type TrackingEventDetails,
} from '@openfeature/core';

/** The four provider events flagops sends; the server and the web SDK spell them alike but type them apart. */
export interface ProviderEventNames<E> {
  Ready: E;
  Error: E;
  Stale: E;
  ConfigurationChanged: E;
}

/** A type, not an interface: OpenFeature's event context wants an index signature, which only types get implicitly. */
export type ProviderEventDetails = {
  message?: string;
  flagsChanged?: string[];
  metadata?: Record<string, number>;
};

/**
 * The lifecycle both providers have. The client is either made from the SDK's options, and then owned (closed
 * with the provider), or the caller's, and then left open. The client's events become provider events: a change
 * is ConfigurationChanged (with the keys), `stale` and `error` are Stale and Error, and `ready` after one of them
 * is Ready again. Nothing is forwarded before initialize() has settled: until then the OpenFeature SDK's own
 * Ready or Error (from initialize) speaks.
 */
export abstract class FlagopsProviderBase<C extends FlagopsClient, E> {
  readonly metadata = { name: 'flagops' } as const;
  abstract readonly events: { emit(event: E, details: ProviderEventDetails): void };
  readonly client: C;
  private readonly ownsClient: boolean;
  private readonly stopForwarding: () => void;
  private initialized = false;

  protected constructor(client: C, ownsClient: boolean, names: ProviderEventNames<E>) {
    this.client = client;
    this.ownsClient = ownsClient;
    const emit = (event: E, details: ProviderEventDetails) => {
      if (this.initialized) this.events.emit(event, details);
    };
    const offChange = client.on('change', ({ keys, version }) =>
      emit(names.ConfigurationChanged, { flagsChanged: keys, metadata: { version } }),
    );
    const offStatus = client.on('status', ({ status, previous, error }) => {
      const message = error ?? `the flagops client is ${status}`;
      if (status === 'stale') emit(names.Stale, { message });
      else if (status === 'error') emit(names.Error, { message });
      else if (status === 'ready' && recovering(previous)) emit(names.Ready, { message });
    });
    this.stopForwarding = () => {
      offChange();
      offStatus();
    };
  }

  /** Resolves once the client serves flags; rejects (the SDK then reports ERROR) when it cannot, and recovers by event. */
  async initialize(): Promise<void> {
    const status = await this.client.ready();
    this.initialized = true;
    if (status !== 'ready' && status !== 'stale') throw new GeneralError(`the flagops client is ${status}; it keeps retrying`);
  }

  /**
   * OpenFeature's Tracking API: a track event for the context's user (`targetingKey`), with the details' `value`
   * as its value (other details are not sent), in the client's next batch to POST /v1/events.
   */
  track(trackingEventName: string, context?: OpenFeatureContext, trackingEventDetails?: TrackingEventDetails): void {
    const value = trackingEventDetails?.value;
    this.client.track(trackingEventName, toFlagopsContext(context), typeof value === 'number' ? value : undefined);
  }

  async onClose(): Promise<void> {
    this.stopForwarding();
    if (this.ownsClient) await this.client.close();
  }
}

const recovering = (previous: ClientStatus) => previous === 'stale' || previous === 'error';

/**
 * OpenFeature's context in flagops' shape: `targetingKey` is the userId (it drives bucketing), every other
 * field an attribute. Dates become ISO strings, as they would on the wire, so that local and remote
 * evaluation see the same value.
 */
export function toFlagopsContext(context: OpenFeatureContext | undefined): EvaluationContext {
  if (context === undefined) return {};
  const attributes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(context)) {
    if (name !== 'targetingKey') setOwn(attributes, name, value instanceof Date ? value.toISOString() : value);
  }
  const { targetingKey } = context;
  return typeof targetingKey === 'string' && targetingKey !== '' ? { userId: targetingKey, attributes } : { attributes };
}

/**
 * An SDK result as OpenFeature resolution details. Errors keep the caller's default and carry OpenFeature's
 * own error code (the SDK already uses its names); the OpenFeature client then reports reason ERROR. Otherwise
 * flagops' own reason, rule, bucket and kill travel in the flag metadata.
 */
export function toResolution<T>(details: EvaluationDetails<T>): ResolutionDetails<T> {
  if (details.reason === 'error') {
    return {
      value: details.value,
      reason: 'ERROR',
      errorCode: (details.errorCode ?? 'GENERAL') as ErrorCode,
      errorMessage: details.errorMessage,
    };
  }
  const resolution: ResolutionDetails<T> = {
    value: details.value,
    reason: openFeatureReason(details.reason),
    flagMetadata: flagMetadata(details),
  };
  if (details.variation !== undefined) resolution.variant = details.variation;
  return resolution;
}
