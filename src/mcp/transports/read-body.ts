import type { IncomingMessage } from 'node:http';

export const MAX_MCP_BODY_BYTES = 1024 * 1024;

export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The JSON-RPC body of a POST, bounded: the SDK would read any size, and a tool call is a few KiB. */
export async function readJsonRpcBody(req: IncomingMessage, limit = MAX_MCP_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new BodyError(413, `the body is larger than ${limit} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
  } catch (err) {
    throw new BodyError(400, `the body is not JSON: ${(err as Error).message}`);
  }
}
