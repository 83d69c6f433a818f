import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ServedAnswer {
  url: string;
  status: number;
  /** The Accept-Encoding the client sent. */
  accepted: string | undefined;
  /** The Content-Encoding the server sent, undefined for identity. */
  encoding: string | undefined;
  /** Content-Length as sent: the body's bytes on the wire. */
  length: number;
}

/**
 * What servers in this process answered requests made with `key` (as bearer token) under `path`, seen from
 * the server's side (node's http diagnostics channel): the bytes as they left, whatever the client decoded.
 */
export function watchServedAnswers(key: string, path: string): { readonly answers: ServedAnswer[]; stop(): void } {
  const answers: ServedAnswer[] = [];
  const onFinish = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    if (request.headers.authorization !== `Bearer ${key}` || !request.url?.startsWith(path)) return;
    const encoding = response.getHeader('content-encoding');
    answers.push({
      url: request.url,
      accepted: request.headers['accept-encoding'],
      status: response.statusCode,
      encoding: encoding === undefined ? undefined : String(encoding),
      length: Number(response.getHeader('content-length') ?? Number.NaN),
    });
  };
  diagnostics.subscribe('http.server.response.finish', onFinish);
  return { answers, stop: () => diagnostics.unsubscribe('http.server.response.finish', onFinish) };
}
