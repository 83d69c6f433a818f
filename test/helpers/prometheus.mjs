/**
 * Prometheus as the guard tests run it: Debian's /usr/bin/prometheus with a configuration of the test's own, its
 * storage in a temporary directory, on a free loopback port, scraping every second an exporter the test
 * controls (MetricsExporter: an HTTP server whose /metrics says what the test sets). No mocked API: the
 * service queries the real Prometheus HTTP API.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.mjs';

export const PROMETHEUS_BIN = process.env.FLAGOPS_TEST_PROMETHEUS ?? '/usr/bin/prometheus';

/** Why the Prometheus tests do not run here, or null when they do; test/global-setup.ts prints it once. */
export const PROMETHEUS_MISSING = existsSync(PROMETHEUS_BIN)
  ? null
  : `the guarded rollout tests were not run: they need ${PROMETHEUS_BIN} (Debian: apt-get install -y prometheus)`;

/** An HTTP server answering /metrics in the text exposition format with the gauges the test sets. */
export class MetricsExporter {
  values = new Map();

  constructor(server, port) {
    this.server = server;
    this.port = port;
  }

  static async start() {
    let exporter;
    const server = http.createServer((req, res) => {
      if (req.url !== '/metrics') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(exporter.text());
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    exporter = new MetricsExporter(server, server.address().port);
    return exporter;
  }

  /** Sets a gauge, `name` with its labels as exposed: `checkout_error_ratio{flag="a"}`. */
  set(series, value) {
    this.values.set(series, value);
  }

  text() {
    const names = new Set();
    let out = '';
    for (const [series, value] of this.values) {
      const name = series.replace(/\{.*$/, '');
      if (!names.has(name)) out += `# TYPE ${name} gauge\n`;
      names.add(name);
      out += `${series} ${value}\n`;
    }
    return out;
  }

  close() {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** A Prometheus server of the test's own, scraping `targets` (host:port) every second. */
export class PrometheusServer {
  constructor(child, dir, url) {
    this.child = child;
    this.dir = dir;
    this.url = url;
  }

  static async start(targets) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'flagops-prom-'));
    const port = await freePort();
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: test',
      '    scrape_interval: 1s',
      `    static_configs: [{ targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}] }]`,
      '',
    ].join('\n');
    await writeFile(path.join(dir, 'prometheus.yml'), config);
    const child = spawn(
      PROMETHEUS_BIN,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const server = new PrometheusServer(child, dir, `http://127.0.0.1:${port}`);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`prometheus exited with ${child.exitCode}: ${stderr}`);
      const ready = await fetch(`${server.url}/-/ready`).then(
        (res) => res.ok,
        () => false,
      );
      if (ready) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`prometheus not ready within 30 s: ${stderr}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The value of an instant query's first sample, or undefined when it has none (yet). */
  async value(query) {
    const res = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(query)}`);
    const body = await res.json();
    const first = body.data?.result?.[0];
    return first ? Number(first.value[1]) : undefined;
  }

  /** Waits until Prometheus has scraped `query` to `value` (a scrape lands within about a second). */
  async waitFor(query, check, timeoutMs = 20_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.value(query);
      if (value !== undefined && check(value)) return value;
      if (Date.now() > deadline) throw new Error(`prometheus: ${query} not as expected within ${timeoutMs} ms (last ${value})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop() {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
