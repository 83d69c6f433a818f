import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';

// The JSON-RPC errors the SDK does not give as JSON-RPC 2.0 says: it answers a request whose params do not fit
// with -32603 and its schema library's raw issue list, and drops a line of stdin that is not JSON without a word.

/** The requests whose params are checked here before the SDK reads them: the ones an agent's client builds by hand. */
const PARAMS_SCHEMAS = { 'tools/call': CallToolRequestSchema } as const;

interface Issue {
  path: PropertyKey[];
  message: string;
}

/**
 * Answers a request whose params do not fit its method with -32602 (invalid params) and a message naming each
 * bad field, and does not hand it on. Call after `server.connect(transport)`, which sets the handler wrapped here.
 */
export function refuseMalformedParams(transport: Transport): void {
  const read = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message && message.method in PARAMS_SCHEMAS) {
      const checked = PARAMS_SCHEMAS[message.method as keyof typeof PARAMS_SCHEMAS].safeParse(message);
      if (!checked.success) {
        const issues = (checked.error.issues as Issue[]).map((i) => `${i.message} at ${['request', ...i.path].join('.')}`);
        void send(transport, message.id, ErrorCode.InvalidParams, `Invalid params for ${message.method}: ${issues.join('; ')}`);
        return;
      }
    }
    read?.(message, extra);
  };
}

/**
 * Answers a line of stdin that is not JSON with -32700 (parse error), and JSON that is not a JSON-RPC message with
 * -32600 (invalid request), both with id null since none could be read (JSON-RPC 2.0, "Response object").
 * The stdio transport reports such a line as an error and goes on with the next one.
 */
export function answerUnreadableLines(transport: Transport): void {
  const report = transport.onerror;
  transport.onerror = (error) => {
    report?.(error);
    if (error instanceof SyntaxError) void send(transport, null, ErrorCode.ParseError, `Parse error: ${error.message}`);
    else if (error.name === 'ZodError') void send(transport, null, ErrorCode.InvalidRequest, 'Invalid request: not a JSON-RPC 2.0 message');
  };
}

/** Answers a line of stdin left out for its size with -32600 (invalid request), id null: its id was never read. */
export function answerOverlongLine(transport: Transport, bytes: number, limitBytes: number): void {
  void send(
    transport,
    null,
    ErrorCode.InvalidRequest,
    `Invalid request: a message of ${bytes} bytes is over the limit of ${limitBytes} bytes; it was not read`,
  );
}

function send(transport: Transport, id: RequestId | null, code: number, message: string): Promise<void> {
  // id null is what JSON-RPC 2.0 requires when the request's id could not be read; the SDK's type leaves it out.
  const answer = { jsonrpc: '2.0', id, error: { code, message } } as unknown as JSONRPCMessage;
  return transport.send(answer).catch(() => undefined);
}
