import { Gauge } from 'prom-client';
import type { MetricsSettings } from '../config/config.js';
import { EvaluationTotals } from './evaluation-totals.js';
import { type FlagStatusCounts, registerFlagHealthFamilies } from './flag-health-families.js';
import { GuardFamilies } from './guard-families.js';
import { instrumentApp } from './metrics-http.js';
import { ServerMetrics } from './server-metrics.js';
import { ControlFamilies, registerServingFamilies, type ServedSnapshot } from './service-families.js';
import { registerWebhookFamilies, type WebhookCounts } from './webhook-families.js';

type Koa = Parameters<typeof instrumentApp>[0];

/**
 * The metrics of `npm start`'s two ports: the control port's registry (commits, kill propagation) and the
 * evaluation port's (evaluations, what is served), each with the HTTP and process families. Null with
 * FLAGOPS_METRICS=off: then nothing is counted or timed and neither port has /metrics.
 */
export class ServiceMetrics {
  readonly control: ServerMetrics;
  readonly evaluation: ServerMetrics;
  readonly totals = new EvaluationTotals();
  readonly controlFamilies: ControlFamilies;
  /** Guard checks and the rollouts they stopped, on the control port (where guards run). */
  readonly guards: GuardFamilies;

  private constructor(token: string | undefined) {
    this.control = new ServerMetrics('control', token);
    this.evaluation = new ServerMetrics('evaluation', token);
    this.controlFamilies = new ControlFamilies(this.control.registry);
    this.guards = new GuardFamilies(this.control.registry);
    this.totals.register(this.evaluation.registry);
  }

  static create(settings: MetricsSettings | undefined): ServiceMetrics | null {
    return settings?.enabled === false ? null : new ServiceMetrics(settings?.token);
  }

  /** What the evaluation port serves, read at each scrape. */
  watchServing(source: {
    snapshots(): Iterable<ServedSnapshot>;
    streamClients(): number;
    invalidFiles(): Iterable<{ org: string; count: number }>;
    storageFaults(): Iterable<{ org: string; kind: 'read' | 'write' }>;
  }): void {
    registerServingFamilies(this.evaluation.registry, source);
  }

  /**
   * `flagops_sample_ratio_mismatch`, on the evaluation port beside the exposures: 1 for a flag whose exposures
   * per variant do not fit its weights (the sample-ratio check), 0 for one that does or has too few yet.
   */
  watchSampleRatios(
    verdicts: () => Iterable<{ org: string; project: string; environment: string; flag: string; mismatch: boolean }>,
  ): void {
    new Gauge({
      name: 'flagops_sample_ratio_mismatch',
      help: 'Whether the exposures of a flag with weighted variants over the last 24 hours mismatch its weights (chi-square p < 0.001): 1 or 0, per project (slug), environment and flag.',
      labelNames: ['project', 'environment', 'flag', 'org'] as const,
      registers: [this.evaluation.registry],
      collect() {
        this.reset();
        for (const { org, project, environment, flag, mismatch } of verdicts())
          this.set({ project, environment, flag, org }, mismatch ? 1 : 0);
      },
    });
  }

  /** Webhook deliveries pending and dropped, on the control port, read at each scrape. */
  watchWebhooks(counts: () => WebhookCounts): void {
    registerWebhookFamilies(this.control.registry, counts);
  }

  watchFlagHealth(counts: () => FlagStatusCounts): void {
    registerFlagHealthFamilies(this.control.registry, counts);
  }

  /** The control app, with /metrics and request timing in front. */
  controlApp<T extends Koa>(app: T): T {
    instrumentApp(app, this.control);
    return app;
  }

  /** The evaluation app, with /metrics and request timing in front (its fast path times with `evaluationTimer`). */
  evaluationApp<T extends Koa>(app: T): T {
    instrumentApp(app, this.evaluation);
    return app;
  }

  /** Times the requests the evaluation server's fast path answers. */
  readonly evaluationTimer = (route: string, status: number, startedAt: number): void =>
    this.evaluation.observeRequest(route, status, startedAt);
}
