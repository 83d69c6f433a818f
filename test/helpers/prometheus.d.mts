export declare const PROMETHEUS_BIN: string;
/** Why the Prometheus tests do not run here, or null when they do. */
export declare const PROMETHEUS_MISSING: string | null;

/** An HTTP server answering /metrics in the text exposition format with the gauges the test sets. */
export declare class MetricsExporter {
  readonly port: number;
  static start(): Promise<MetricsExporter>;
  /** Sets a gauge, `name` with its labels as exposed: `checkout_error_ratio{flag="a"}`. */
  set(series: string, value: number): void;
  close(): Promise<void>;
}

/** A Prometheus server of its own, scraping `targets` (host:port) every second. */
export declare class PrometheusServer {
  readonly url: string;
  static start(targets: string[]): Promise<PrometheusServer>;
  /** The value of an instant query's first sample, or undefined when it has none (yet). */
  value(query: string): Promise<number | undefined>;
  /** Waits until Prometheus has scraped `query` to a value `check` accepts. */
  waitFor(query: string, check: (value: number) => boolean, timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}
