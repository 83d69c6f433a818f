/** A query's answer: the first sample's value, or why there is none. */
export type QueryOutcome = { ok: true; value: number } | { ok: false; error: string };

/** A query that takes longer has failed: a check must not hold up the next one. */
export const QUERY_TIMEOUT_MS = 5_000;

/**
 * Runs a PromQL instant query (`POST <base>/api/v1/query`, the Prometheus HTTP API) and reads the first
 * sample's value: a vector's first element, or a scalar. Everything else is a failed query: Prometheus
 * unreachable or answering an error, a matrix or string result, an empty vector (the series does not exist
 * yet, or the label is mistyped: no value to judge a rollout by), and NaN (0/0: no traffic to compute a rate of).
 */
export async function queryPrometheus(baseUrl: string | undefined, query: string, timeoutMs = QUERY_TIMEOUT_MS): Promise<QueryOutcome> {
  if (!baseUrl) return { ok: false, error: 'FLAGOPS_PROMETHEUS_URL is not set: the guard cannot be checked' };
  const url = new URL('api/v1/query', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  // fetch refuses a URL with credentials: they go as basic authentication, as a browser would send them.
  if (url.username || url.password) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body: new URLSearchParams({ query }).toString(),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError';
    return { ok: false, error: timedOut ? `Prometheus did not answer within ${timeoutMs} ms` : `Prometheus unreachable: ${causeOf(err)}` };
  }
  let body: PrometheusAnswer;
  try {
    body = (await response.json()) as PrometheusAnswer;
  } catch {
    return { ok: false, error: `Prometheus answered ${response.status} without JSON` };
  }
  if (body.status !== 'success' || !body.data)
    return { ok: false, error: `Prometheus answered ${response.status}: ${body.errorType ?? 'error'}: ${body.error ?? 'no data'}` };
  return firstValue(body.data);
}

interface PrometheusAnswer {
  status?: string;
  data?: { resultType?: string; result?: unknown };
  errorType?: string;
  error?: string;
}

function firstValue(data: NonNullable<PrometheusAnswer['data']>): QueryOutcome {
  let sample: unknown;
  if (data.resultType === 'scalar') sample = data.result;
  else if (data.resultType === 'vector') {
    const result = data.result as Array<{ value?: unknown }>;
    if (!Array.isArray(result) || result.length === 0) return { ok: false, error: 'the query returned no samples' };
    sample = result[0].value;
  } else
    return { ok: false, error: `the query returned a ${data.resultType ?? 'missing'} result; a guard needs an instant vector or a scalar` };
  const value = Array.isArray(sample) ? sampleValue(String(sample[1])) : Number.NaN;
  if (Number.isNaN(value)) return { ok: false, error: 'the query returned NaN' };
  return { ok: true, value };
}

/**
 * A sample's value as Prometheus writes it: a float, or `+Inf`/`-Inf` (errors over zero requests is +Inf, above
 * any max), which parseFloat does not read.
 */
function sampleValue(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  return Number.parseFloat(text);
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
