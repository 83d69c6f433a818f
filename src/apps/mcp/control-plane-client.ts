import type { EnvironmentName } from '@flagops/core';
import {
  type AnswerShape,
  AUDIT_PAGE,
  CHANGE_PREVIEW,
  FLAG,
  FLAG_HEALTH_LIST,
  FLAG_LIST,
  PROJECT_LIST,
  PROPOSAL_LIST,
  SEGMENT,
  SEGMENT_LIST,
} from './answer-shapes.js';
import type {
  AuditPage,
  AuditQuery,
  ChangePreviewResponse,
  ConfigUpdateBody,
  FlagCreateBody,
  FlagHealthResponse,
  FlagPatchBody,
  FlagResponse,
  ProjectResponse,
  ProposalResponse,
  RolloutPlanBody,
  SegmentPutBody,
  SegmentResponse,
} from './api-types.js';

/**
 * Codes the MCP server adds to the control plane's own error codes (docs/api.md) for failures that never reached an
 * answer: the agent must be able to tell "refused" from "no idea whether it happened". Only `unreachable` says the
 * request never left; `timeout`, `connection_lost` and `bad_response` leave a write's outcome unknown.
 */
export type TransportErrorCode = 'unreachable' | 'timeout' | 'connection_lost' | 'bad_response';

/**
 * A failed control-plane call: the API's `{ error: { code, message } }` when it answered, or a transport
 * code when it did not. `status` is absent when no HTTP answer arrived.
 */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A write the control plane did not apply but kept as a change proposal (202 `{ proposal }`): the project
 * requires approval of this key's changes in that environment. Thrown so that every tool reports it the same
 * way (define-tool.ts), whatever it expected back.
 */
export class ProposalOpened extends Error {
  constructor(readonly proposal: ProposalResponse) {
    super(`the change became proposal ${proposal.id}`);
    this.name = 'ProposalOpened';
  }
}

export interface ControlPlaneClientOptions {
  /** The control plane's origin, without /api/v1. */
  baseUrl: string;
  /** The agent key, sent as `Authorization: Bearer`. */
  key: string;
  /** Every call gives up after this long, so a stuck service never hangs the agent. */
  timeoutMs: number;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | undefined>;

/**
 * The control-plane HTTP API, and the only way the MCP server reaches flagops. Every failure is an ApiError
 * carrying the API's own code, or a transport code when no answer came.
 */
export class ControlPlaneClient {
  readonly #base: string;
  readonly #key: string;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: ControlPlaneClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#key = options.key;
    this.#timeoutMs = options.timeoutMs;
    this.#fetch = options.fetch ?? fetch;
  }

  listProjects(): Promise<{ projects: ProjectResponse[] }> {
    return this.#call('GET', '/api/v1/projects', PROJECT_LIST);
  }

  listFlags(projectId: string): Promise<{ flags: FlagResponse[] }> {
    return this.#call('GET', `/api/v1/projects/${seg(projectId)}/flags`, FLAG_LIST);
  }

  createFlag(projectId: string, body: FlagCreateBody): Promise<FlagResponse> {
    return this.#call('POST', `/api/v1/projects/${seg(projectId)}/flags`, FLAG, { body });
  }

  /** Metadata only: name, description, lifecycle (merged; null removes it). */
  patchFlag(flagId: string, body: FlagPatchBody): Promise<FlagResponse> {
    return this.#call('PATCH', `/api/v1/flags/${seg(flagId)}`, FLAG, { body });
  }

  lookupFlag(projectSlug: string, key: string): Promise<FlagResponse> {
    return this.#call('GET', '/api/v1/flags/lookup', FLAG, { query: { projectSlug, key } });
  }

  updateConfig(flagId: string, env: EnvironmentName, body: ConfigUpdateBody): Promise<FlagResponse> {
    return this.#call('PUT', `${envPath(flagId, env)}/config`, FLAG, { body });
  }

  rolloutPlan(flagId: string, env: EnvironmentName, body: RolloutPlanBody): Promise<FlagResponse> {
    return this.#call('POST', `${envPath(flagId, env)}/rollout-plan`, FLAG, { body });
  }

  /** The kill endpoint takes no body; `{ reason }` is sent only when there is one (it lands in the commit). */
  kill(flagId: string, env: EnvironmentName, reason?: string): Promise<FlagResponse> {
    return this.#call('POST', `${envPath(flagId, env)}/kill`, FLAG, reason === undefined ? {} : { body: { reason } });
  }

  promote(flagId: string, toEnv: EnvironmentName, fromEnv: EnvironmentName): Promise<FlagResponse> {
    return this.#call('POST', `${envPath(flagId, toEnv)}/promote`, FLAG, { body: { fromEnv } });
  }

  /** Stale-flag detection: each active flag's status and the reasons for it. */
  flagHealth(projectId: string, staleAfterDays?: number): Promise<{ flags: FlagHealthResponse[] }> {
    return this.#call('GET', `/api/v1/projects/${seg(projectId)}/flags/health`, FLAG_HEALTH_LIST, {
      query: staleAfterDays === undefined ? {} : { staleAfterDays: String(staleAfterDays) },
    });
  }

  /** Archives (DELETE); a project requiring approval of this key's type answers with a proposal (ProposalOpened). */
  archiveFlag(flagId: string): Promise<FlagResponse> {
    return this.#call('DELETE', `/api/v1/flags/${seg(flagId)}`, FLAG);
  }

  listSegments(projectId: string): Promise<{ segments: SegmentResponse[] }> {
    return this.#call('GET', `/api/v1/projects/${seg(projectId)}/segments`, SEGMENT_LIST);
  }

  getSegment(projectId: string, key: string): Promise<SegmentResponse> {
    return this.#call('GET', `/api/v1/projects/${seg(projectId)}/segments/${seg(key)}`, SEGMENT);
  }

  /** Creates or replaces; `created` is whether it answered 201. */
  async putSegment(projectId: string, key: string, body: SegmentPutBody): Promise<{ created: boolean; segment: SegmentResponse }> {
    const { status, body: segment } = await this.#exchange<SegmentResponse>(
      'PUT',
      `/api/v1/projects/${seg(projectId)}/segments/${seg(key)}`,
      SEGMENT,
      { body },
    );
    return { created: status === 201, segment };
  }

  deleteSegment(projectId: string, key: string): Promise<SegmentResponse> {
    return this.#call('DELETE', `/api/v1/projects/${seg(projectId)}/segments/${seg(key)}`, SEGMENT);
  }

  listProposals(query: { status?: string; projectId?: string }): Promise<{ proposals: ProposalResponse[] }> {
    return this.#call('GET', '/api/v1/proposals', PROPOSAL_LIST, { query: { ...query } });
  }

  /** What a config update (`config`) or a promotion from `fromEnv` would do; nothing is written. */
  previewChange(
    flagId: string,
    env: EnvironmentName,
    body: { config: ConfigUpdateBody } | { fromEnv: EnvironmentName },
  ): Promise<ChangePreviewResponse> {
    return this.#call('POST', `${envPath(flagId, env)}/preview`, CHANGE_PREVIEW, { body });
  }

  audit(query: AuditQuery): Promise<AuditPage> {
    return this.#call('GET', '/api/v1/audit', AUDIT_PAGE, { query: { ...query } });
  }

  async #call<T>(method: string, path: string, shape: AnswerShape, options: { query?: Query; body?: unknown } = {}): Promise<T> {
    return (await this.#exchange<T>(method, path, shape, options)).body;
  }

  /** One request; the answer's status with its body (the body alone is what most callers need). */
  async #exchange<T>(
    method: string,
    path: string,
    shape: AnswerShape,
    options: { query?: Query; body?: unknown } = {},
  ): Promise<{ status: number; body: T }> {
    const url = new URL(this.#base + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { authorization: `Bearer ${this.#key}`, accept: 'application/json' };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }

    let res: Response | undefined;
    let text: string;
    try {
      // One signal for the whole exchange: a server that sends headers and then stalls the body times out too.
      const signal = AbortSignal.timeout(this.#timeoutMs);
      res = await this.#fetch(url, { method, headers, body, signal });
      text = await res.text();
    } catch (err) {
      throw transportError(err, { base: this.#base, timeoutMs: this.#timeoutMs, answered: res !== undefined, write: method !== 'GET' });
    }
    const parsed = parseJson(text);
    // A write answered with something else than flagops' answer may still have been made behind whatever answered.
    const unknownOutcome = method === 'GET' ? '' : '; the change may or may not have been made';
    if (res.ok) {
      if (parsed === undefined)
        throw new ApiError('bad_response', `${method} ${path} answered ${res.status} without a JSON body${unknownOutcome}`, res.status);
      const proposal = (parsed as { proposal?: ProposalResponse }).proposal;
      if (res.status === 202 && proposal !== undefined) throw new ProposalOpened(proposal);
      if (!shape.fits(parsed))
        throw new ApiError(
          'bad_response',
          `${method} ${path} answered ${res.status} with JSON that is not ${shape.what}${unknownOutcome}`,
          res.status,
        );
      return { status: res.status, body: parsed as T };
    }
    const error = (parsed as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    if (error && typeof error.code === 'string') {
      throw new ApiError(error.code, typeof error.message === 'string' ? error.message : error.code, res.status);
    }
    throw new ApiError(
      'bad_response',
      `${method} ${path} answered ${res.status} ${res.statusText}, not a flagops error body${unknownOutcome}`,
      res.status,
    );
  }
}

function seg(value: string): string {
  return encodeURIComponent(value);
}

function envPath(flagId: string, env: EnvironmentName): string {
  return `/api/v1/flags/${seg(flagId)}/environments/${env}`;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The failures that prove the request never reached the control plane: no address, no route, nobody listening,
 * no connection within the connect timeout, a TLS certificate refused before a byte of the request was sent.
 * Anything else (a reset, "other side closed", EPIPE) may come after the request left, so a write may have been made.
 */
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

function transportError(err: unknown, at: { base: string; timeoutMs: number; answered: boolean; write: boolean }): ApiError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new ApiError('timeout', `the control plane at ${at.base} did not answer within ${at.timeoutMs} ms`);
  }
  const cause = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  if (!at.answered && e?.cause?.code !== undefined && NEVER_SENT.has(e.cause.code)) {
    return new ApiError('unreachable', `cannot reach the control plane at ${at.base} (${cause})`);
  }
  const outcome = at.write ? '; the change may or may not have been made' : '';
  return new ApiError(
    'connection_lost',
    `the connection to the control plane at ${at.base} was lost before its answer arrived (${cause})${outcome}`,
  );
}

/**
 * The one project this server works in (FLAGOPS_PROJECT). Flags are found by project slug and key through
 * the lookup endpoint (GET /api/v1/flags/lookup), so an agent only ever names flag keys; the project's id, needed by
 * the list, create and audit endpoints, is read once and kept (ids never change).
 */
export class ProjectScope {
  #id: string | undefined;

  constructor(
    readonly api: ControlPlaneClient,
    readonly slug: string,
  ) {}

  async projectId(): Promise<string> {
    if (this.#id !== undefined) return this.#id;
    const { projects } = await this.api.listProjects();
    const project = projects.find((p) => p.slug === this.slug);
    if (!project) {
      const known = projects.map((p) => p.slug).join(', ') || 'none';
      throw new ApiError('not_found', `project "${this.slug}" (FLAGOPS_PROJECT) not found; the projects this key sees are: ${known}`, 404);
    }
    this.#id = project.id;
    return project.id;
  }

  flag(key: string): Promise<FlagResponse> {
    return this.api.lookupFlag(this.slug, key);
  }
}
