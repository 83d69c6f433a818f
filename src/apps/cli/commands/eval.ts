import { once } from 'node:events';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { KIND_PREFIX, kindOfKey } from '../../../foundations/auth/key-format.js';
import { ConfigError, parseMetricsSettings, parseTrustProxy } from '../../../foundations/config/config.js';
import { createLogger, logLevelFrom } from '../../../foundations/log/logger.js';
import { startReplica } from '../../replica/start-replica.js';
import { type CliIo, type Command, EXIT, UsageError } from '../command.js';
import { parseUpstreamList } from '../upstream-list.js';

const help = `Usage: flagops eval --upstream <control-plane origin>[,<origin>…] --token <admin key> [options]

Runs an evaluation replica: only the evaluation API (/v1/evaluate, /v1/snapshot, /v1/stream, /v1/counts,
/healthz, /metrics), fed by the control plane it follows. It serves the same versions and ETags, hears kills within a
second, moves to the next control plane of the list within 5 s when the one it follows fails (never serving
older state than it served), keeps serving its last good snapshots (saved on disk) while none is reachable,
and forwards its evaluation counts. See docs/deployment.md.

Options:
  --upstream URLS      the control planes' origins, comma-separated, e.g.
                       http://control-a.internal:4000,http://control-b.internal:4000; it follows the first
  --token KEY          an admin key of the organisation to serve (or FLAGOPS_REPLICA_TOKEN, which keeps it
                       out of the process list)
  --port N             port to listen on (default 4001, or FLAGOPS_EVAL_PORT)
  --host H             address to listen on (default 127.0.0.1, or FLAGOPS_HOST)
  --data-dir D         where the last good snapshots are kept (default $FLAGOPS_DATA_DIR, else ./replica-data);
                       one replica per directory
  -h, --help           show this help

FLAGOPS_TRUST_PROXY is the number of reverse proxies in front of the replica whose X-Forwarded-For is
believed (default 0), as for the service. GET /metrics answers Prometheus metrics (docs/operations.md);
FLAGOPS_METRICS_TOKEN makes it need that Bearer token, FLAGOPS_METRICS=off removes it.
`;

async function run(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      upstream: { type: 'string' },
      token: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
    },
  });
  const upstreams = parseUpstreamList(values.upstream);
  const token = values.token ?? io.env.FLAGOPS_REPLICA_TOKEN;
  if (!token) throw new UsageError('--token (or FLAGOPS_REPLICA_TOKEN) must be an admin key');
  assertAdminKey(token);
  const port = Number(values.port ?? io.env.FLAGOPS_EVAL_PORT ?? 4001);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError('--port must be a port number');
  let trustProxy: number;
  let metrics: ReturnType<typeof parseMetricsSettings>;
  try {
    trustProxy = parseTrustProxy(io.env.FLAGOPS_TRUST_PROXY);
    metrics = parseMetricsSettings(io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message);
    throw err;
  }
  const level = logLevelFrom(io.env.FLAGOPS_LOG_LEVEL);
  if (level === null) throw new UsageError('FLAGOPS_LOG_LEVEL must be debug, info, warn or error');
  const logger = createLogger({ level });
  // Heard from the start: a replica asked to stop while it waits for its first sync stops cleanly, its lock
  // removed, rather than dying where it stands.
  const stop = new AbortController();
  const stopOn = (signal: NodeJS.Signals) => {
    if (stop.signal.aborted) return;
    logger.info('stopping', { signal });
    stop.abort();
  };
  const onSigint = () => stopOn('SIGINT');
  const onSigterm = () => stopOn('SIGTERM');
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  try {
    const replica = await startReplica({
      upstreams,
      token,
      port,
      host: values.host ?? io.env.FLAGOPS_HOST ?? '127.0.0.1',
      dataDir: path.resolve(io.cwd, values['data-dir'] || io.env.FLAGOPS_DATA_DIR || 'replica-data'),
      trustProxy,
      metrics,
      logger,
      stopSignal: stop.signal,
    });
    if (!stop.signal.aborted) {
      const then = upstreams.length > 1 ? ` (then ${upstreams.slice(1).join(', ')})` : '';
      io.stdout(`flagops eval: serving ${replica.url}, following ${upstreams[0]}${then}\n`);
      await once(stop.signal, 'abort');
    }
    await replica.stop();
    logger.info('flagops eval stopped');
  } finally {
    process.off('SIGINT', onSigint);
    process.off('SIGTERM', onSigterm);
  }
  return EXIT.ok;
}

/**
 * Another kind of key can never follow the control plane, and its prefix says so: refused here, at once, rather
 * than by the control plane at every retry while the replica answers "starting". An sdk key is the likely
 * mix-up, since the replica serves sdk keys.
 */
function assertAdminKey(token: string): void {
  const kind = kindOfKey(token);
  if (kind === 'admin') return;
  const given =
    kind === 'sdk'
      ? `an sdk key (${KIND_PREFIX.sdk}…), which the SDKs send to the replica`
      : kind === 'agent'
        ? `an agent key (${KIND_PREFIX.agent}…)`
        : 'no flagops key (no svc_adm_, svc_agt_ or svc_sdk_ prefix)';
  throw new UsageError(
    `--token (or FLAGOPS_REPLICA_TOKEN) is ${given}; a replica follows the control plane with an admin key (${KIND_PREFIX.admin}…) of the organisation, not limited to projects or environments and without an expiry`,
  );
}

export const evalCommand: Command = { name: 'eval', summary: 'run an evaluation replica that follows a control plane', help, run };
