import http from 'node:http';
import https from 'node:https';
import type { GitResult } from '../../foundations/storage/git/git-cli.js';

/**
 * A push of one commit to an HTTP(S) git remote from this process, over git's smart HTTP protocol: the ref
 * advertisement, then one request carrying the update and a pack of the commit's new objects. The `git push`
 * it stands in for starts three processes here (git, its HTTP helper, pack-objects), a third of its time to a
 * host on loopback (docs/performance.md, git-push); the host's own work is the same. Once a host's
 * capabilities are known (KnownHost), later pushes send the update alone: the host checks the branch's old
 * value as it moves it, and refuses an update whose parent is not its head as it refuses a push that lost a race.
 *
 * Only the plain case is taken: the remote's branch is the commit's parent and answers as a smart HTTP host.
 * Anything else (another transport, a redirect, an answer it does not expect, a TLS failure, a branch that
 * moved) is left to `git push`, which negotiates what to send and says why a push was refused; the answer says
 * whether that holds for every push to this remote (LeftToGit.always).
 */

/** The commit to push and the objects it adds to its parent (FlagRepository.objectsAddedBy, packed). */
export interface CommitPack {
  parent: string;
  /** A packfile of every object `commit` adds to `parent`. */
  pack: Buffer;
}

export interface SmartPushRequest {
  url: string;
  ref: string;
  commit: string;
  /** The objects to send; null when they cannot be told (the push is left to git). */
  objects: () => Promise<CommitPack | null>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** What the host advertised to an earlier push, kept by the caller for its remote; filled in and forgotten here. */
  host?: KnownHost;
}

/**
 * A remote's capabilities from its last ref advertisement. With them a push skips the advertisement, a round trip
 * and two git processes on the host, a fifth of a kill's time to a host on loopback (docs/performance.md).
 */
export interface KnownHost {
  capabilities: ReadonlySet<string> | null;
}

/** The most of a host's answer (its refs, or its report of a push) that is read: past it the push fails. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;
const ZERO = '0000000000000000000000000000000000000000';
/** receive-pack's reasons for refusing the objects sent rather than the update. */
const OBJECTS_REFUSED = /\(unpacker error|\(missing necessary objects/;
const ADVERTISEMENT = 'application/x-git-receive-pack-advertisement';
const RESULT = 'application/x-git-receive-pack-result';
/** Named as git's own clients are (`git/…`): some hosts tell smart clients from dumb ones by it. */
const USER_AGENT = 'git/2 (flagops)';

/** A push this process does not make, for `git push` to make instead; nothing was sent. */
export interface LeftToGit {
  why: string;
  /** Whether the remote itself is one this process does not push to (its URL, its answers): every push is git's. */
  always: boolean;
}

/**
 * How the host answered, as `git push --porcelain` reports it (code 0 when taken; the host's reasons in
 * stdout and stderr otherwise), or why the push is left to `git push`.
 */
export async function pushOverSmartHttp(request: SmartPushRequest): Promise<GitResult | LeftToGit> {
  const base = remoteBase(request.url);
  if (base === null) return { why: 'the remote is not an http(s) URL', always: true };
  // Read before the host is asked anything: a push git makes instead would ask it again.
  const objects = await request.objects();
  if (objects === null) return { why: "the commit's objects are not at hand", always: false };
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), request.timeoutMs);
  const stop = () => deadline.abort();
  request.signal?.addEventListener('abort', stop, { once: true });
  // One connection for both requests: a TLS handshake to a distant host costs as much as either of them.
  const agent = new (base.protocol === 'https:' ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: 1 });
  const failed = (err: unknown): GitResult => {
    const timedOut = deadline.signal.aborted && !request.signal?.aborted;
    const why = timedOut ? `no answer within ${request.timeoutMs} ms` : (err as Error).message;
    return { code: 128, stdout: '', stderr: `fatal: unable to access '${base.printable}': ${why}`, ...(timedOut ? { timedOut } : {}) };
  };
  const update = (capabilities: ReadonlySet<string>) => sendUpdate(base, agent, deadline.signal, request, objects, capabilities);
  try {
    if (request.signal?.aborted) return { code: 1, stdout: '', stderr: 'stopped before it started' };
    const known = request.host?.capabilities;
    if (known) {
      try {
        return await update(known);
      } catch (err) {
        if (deadline.signal.aborted || isConnectionError(err)) return failed(err);
        // The host answers otherwise than it did (moved, or no longer smart HTTP): asked again from the start.
        request.host!.capabilities = null;
      }
    }
    let advertised: Advertisement | LeftToGit;
    try {
      advertised = await advertisement(base, agent, deadline.signal);
    } catch (err) {
      // The host could not be reached (or did not answer in time): git would fail the same way, only later.
      if (deadline.signal.aborted || isConnectionError(err)) return failed(err);
      // git trusts the system's certificates, this process Node.js's: a host only git can verify stays git's.
      return { why: (err as Error).message, always: isCertificateError(err) };
    }
    if ('why' in advertised) return advertised;
    if (!advertised.capabilities.has('report-status')) return { why: 'the host does not report the status of a push', always: true };
    if (request.host) request.host.capabilities = advertised.capabilities;
    if (advertised.refs.get(request.ref) !== objects.parent)
      return { why: `the remote's ${request.ref} is not the commit's parent`, always: false };
    try {
      return await update(advertised.capabilities);
    } catch (err) {
      return failed(err);
    }
  } finally {
    clearTimeout(timer);
    request.signal?.removeEventListener('abort', stop);
    agent.destroy();
  }
}

/**
 * POST git-receive-pack: the update from the commit's parent, with its objects; what the host said of it, or
 * the push left to git when the host found the objects short. Throws when the host's answer is not a report.
 */
async function sendUpdate(
  base: RemoteBase,
  agent: http.Agent,
  signal: AbortSignal,
  request: SmartPushRequest,
  objects: CommitPack,
  capabilities: ReadonlySet<string>,
): Promise<GitResult | LeftToGit> {
  const useSideBand = capabilities.has('side-band-64k');
  const wanted = ['report-status', ...(useSideBand ? ['side-band-64k'] : []), ...(capabilities.has('quiet') ? ['quiet'] : [])];
  const body = Buffer.concat([
    pktLine(`${objects.parent} ${request.commit} ${request.ref}\0${wanted.join(' ')} agent=flagops\n`),
    FLUSH,
    objects.pack,
  ]);
  const answer = await send(base, agent, signal, body);
  const report = reportOf(`${objects.parent.slice(0, 7)}..${request.commit.slice(0, 7)}`, request.ref, answer, useSideBand, base.printable);
  // The host found the pack short of what the commit needs (its ref did not move): git works out what to send.
  if (report.code !== 0 && OBJECTS_REFUSED.test(report.stdout)) return { why: 'the host refused the objects sent', always: false };
  return report;
}

interface RemoteBase {
  protocol: 'http:' | 'https:';
  /** The repository's URL without a trailing slash, credentials included (sent as Basic authorization). */
  url: URL;
  /** The URL without credentials, for messages. */
  printable: string;
}

function remoteBase(url: string): RemoteBase | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null; // scp-like `host:path` and local paths: git's
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  if (parsed.search || parsed.hash) return null;
  parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  const printable = new URL(parsed.href);
  printable.username = '';
  printable.password = '';
  return { protocol: parsed.protocol, url: parsed, printable: printable.href };
}

interface Advertisement {
  refs: Map<string, string>;
  capabilities: Set<string>;
}

/** GET info/refs: the host's refs and capabilities, or why its answer is left to git. */
async function advertisement(base: RemoteBase, agent: http.Agent, signal: AbortSignal): Promise<Advertisement | LeftToGit> {
  const url = new URL(`${base.url.href}/info/refs?service=git-receive-pack`);
  const answer = await exchange(url, agent, signal, { method: 'GET', headers: { 'user-agent': USER_AGENT, pragma: 'no-cache' } });
  // A redirect (git follows it), or an answer that is not smart HTTP, is the host's way; any other status may pass.
  if (answer.status !== 200) return { why: `the host answered HTTP ${answer.status}`, always: answer.status >= 300 && answer.status < 400 };
  const notSmart: LeftToGit = { why: 'the host does not answer as smart HTTP', always: true };
  if (answer.contentType !== ADVERTISEMENT) return notSmart;
  const lines = pktLines(answer.body);
  if (lines === null || lines[0]?.toString('latin1') !== '# service=git-receive-pack\n' || lines[1] !== null) return notSmart;
  const refs = new Map<string, string>();
  let capabilities = new Set<string>();
  for (const [i, line] of lines.slice(2).entries()) {
    if (line === null) break;
    let text = line.toString('latin1').replace(/\n$/, '');
    if (i === 0) {
      const nul = text.indexOf('\0');
      if (nul < 0) return notSmart;
      capabilities = new Set(
        text
          .slice(nul + 1)
          .split(' ')
          .filter(Boolean),
      );
      text = text.slice(0, nul);
    }
    const [oid, name] = text.split(' ');
    if (!/^[0-9a-f]{40}$/.test(oid) || !name) return notSmart;
    if (oid !== ZERO) refs.set(name, oid);
  }
  return { refs, capabilities };
}

/** POST git-receive-pack: the host's answer, the report of what it did with the update. */
async function send(base: RemoteBase, agent: http.Agent, signal: AbortSignal, body: Buffer): Promise<Buffer> {
  const answer = await exchange(new URL(`${base.url.href}/git-receive-pack`), agent, signal, {
    method: 'POST',
    headers: {
      'user-agent': USER_AGENT,
      'content-type': 'application/x-git-receive-pack-request',
      accept: RESULT,
      'content-length': String(body.length),
    },
    body,
  });
  if (answer.status !== 200) throw new Error(`the host answered HTTP ${answer.status} to the push`);
  if (answer.contentType !== RESULT) throw new Error(`the host answered the push with ${answer.contentType || 'no content type'}`);
  return answer.body;
}

/** What the host said of the update, as `git push --porcelain` would put it. */
function reportOf(range: string, ref: string, answer: Buffer, sideBand: boolean, printable: string): GitResult {
  const remoteSaid: string[] = [];
  let report: Buffer = answer;
  if (sideBand) {
    const bands = pktLines(answer);
    if (bands === null) return unreadable(printable);
    const data: Buffer[] = [];
    for (const line of bands) {
      if (line === null || line.length === 0) continue;
      const band = line[0];
      if (band === 1) data.push(line.subarray(1));
      else if (band === 2 || band === 3) remoteSaid.push(...linesOf(line.subarray(1)).map((text) => `remote: ${text}`));
    }
    report = Buffer.concat(data);
  }
  const lines = pktLines(report);
  if (lines === null) return unreadable(printable, remoteSaid);
  const statuses = lines.filter((line): line is Buffer => line !== null).map((line) => line.toString('utf8').replace(/\n$/, ''));
  const unpack = statuses.find((line) => line.startsWith('unpack '));
  const update = statuses.find((line) => line.startsWith(`ok ${ref}`) || line.startsWith(`ng ${ref} `));
  const stderr = remoteSaid.join('\n');
  if (unpack === 'unpack ok' && update === `ok ${ref}`)
    return { code: 0, stdout: `To ${printable}\n \t${ref}:${ref}\t${range}\nDone`, stderr };
  const reason = update?.startsWith('ng ')
    ? update.slice(`ng ${ref} `.length)
    : unpack && unpack !== 'unpack ok'
      ? `unpacker error: ${unpack.slice(7)}`
      : 'no report';
  return {
    code: 1,
    stdout: `To ${printable}\n!\t${ref}:${ref}\t[remote rejected] (${reason})\nDone`,
    stderr: [stderr, `error: failed to push some refs to '${printable}'`].filter(Boolean).join('\n'),
  };
}

function unreadable(printable: string, remoteSaid: string[] = []): GitResult {
  return { code: 128, stdout: '', stderr: [...remoteSaid, `fatal: the answer of '${printable}' to a push could not be read`].join('\n') };
}

function linesOf(text: Buffer): string[] {
  return text
    .toString('utf8')
    .split(/[\r\n]+/)
    .map((line) => line.trimEnd())
    .filter(Boolean);
}

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

function exchange(
  url: URL,
  agent: http.Agent,
  signal: AbortSignal,
  options: { method: string; headers: http.OutgoingHttpHeaders; body?: Buffer },
): Promise<Answer> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(url, { method: options.method, headers: options.headers, agent, signal }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      response.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (bytes > MAX_ANSWER_BYTES) {
          response.destroy(new Error(`the host's answer is over ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('error', reject);
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: (response.headers['content-type'] ?? '').split(';')[0].trim(),
          body: Buffer.concat(chunks),
        }),
      );
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

const FLUSH = Buffer.from('0000');

function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0'), 'latin1'), payload]);
}

/** pkt-lines of `data` (null for a flush packet); null when `data` is not pkt-lines. */
function pktLines(data: Buffer): Array<Buffer | null> | null {
  const lines: Array<Buffer | null> = [];
  let at = 0;
  while (at < data.length) {
    if (at + 4 > data.length) return null;
    const length = Number.parseInt(data.toString('latin1', at, at + 4), 16);
    if (!Number.isInteger(length) || (length > 0 && length < 4) || at + Math.max(length, 4) > data.length) return null;
    lines.push(length === 0 ? null : data.subarray(at + 4, at + length));
    at += Math.max(length, 4);
  }
  return lines;
}

/** TLS failures to verify the host's certificate, as Node.js names them. */
function isCertificateError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ALTNAME/.test(code);
}

/** Errors of reaching the host at all (as opposed to an answer this client does not take). */
function isConnectionError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return (
    typeof code === 'string' &&
    ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)
  );
}
