import { describe, expect, it } from 'vitest';
import { ApiError, readAnswer } from '../../../packages/dashboard/src/api.js';

/** How the page reads the control plane's answers: nothing a refusal says is lost. */
describe('reading an answer', () => {
  const refusal = (res: Response) =>
    readAnswer(res).then(
      () => expect.fail('resolved'),
      (err: unknown) => err as ApiError,
    );

  it('returns the JSON body of a success, and nothing for an empty one', async () => {
    expect(await readAnswer(new Response('{"keys":[]}', { status: 200 }))).toEqual({ keys: [] });
    expect(await readAnswer(new Response(null, { status: 204 }))).toBeUndefined();
  });

  it("turns the API's error into an ApiError with its status, code, message and Retry-After", async () => {
    const err = await refusal(
      new Response('{"error":{"code":"rate_limited","message":"try again in 2 s"}}', { status: 429, headers: { 'retry-after': '2' } }),
    );
    expect(err).toBeInstanceOf(ApiError);
    expect({ status: err.status, code: err.code, message: err.message, retry: err.retryAfterSeconds }).toEqual({
      status: 429,
      code: 'rate_limited',
      message: 'try again in 2 s',
      retry: 2,
    });
  });

  it("keeps a refusal that is not the API's JSON (a proxy's page) in the message, not a parse error", async () => {
    const err = await refusal(new Response('<h1>Bad gateway</h1>', { status: 502, statusText: 'Bad Gateway' }));
    expect({ status: err.status, code: err.code, message: err.message }).toEqual({
      status: 502,
      code: 'error',
      message: '502 Bad Gateway: <h1>Bad gateway</h1>',
    });
    expect((await refusal(new Response('', { status: 503, statusText: 'Service Unavailable' }))).message).toBe('503 Service Unavailable');
  });
});
