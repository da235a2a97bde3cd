import { Type, type Static } from 'typebox';
import { describeValidation, type ValidationItem } from '../validation.js';
import { ajv } from './json-schema.js';

/**
 * The thin layer in front of the SDK: what the contract demands of a POST /mcp body and the
 * SDK's transport answers differently (a batch, a bad envelope and bad JSON are all HTTP 400
 * -32700 there). Exactly one JSON-RPC 2.0 object per request; anything else gets the
 * standard code in an ordinary 200 JSON-RPC response.
 */

const RequestId = Type.Union(
  [Type.String(), Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER })],
  { description: 'Echoed in the response. Absent on a notification.' },
);

export const JsonRpcRequest = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(RequestId),
    method: Type.String({
      minLength: 1,
      description:
        'initialize, tools/list, tools/call, resources/list, resources/read, prompts/list, prompts/get (and ping)',
    }),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  {
    $id: 'JsonRpcRequest',
    title: 'JSON-RPC 2.0 request',
    description:
      'Exactly one message per request: a JSON array (batch) is refused with -32600. Members other than these four are ignored (JSON-RPC 2.0 does not forbid them).',
  },
);
export type JsonRpcRequest = Static<typeof JsonRpcRequest>;

export const JsonRpcResponse = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    error: Type.Optional(
      Type.Object({
        code: Type.Integer({
          description:
            '-32700 unparseable JSON, -32600 not one JSON-RPC 2.0 request (batches included), -32601 unknown method, -32602 unknown tool or prompt or bad params, -32002 unknown resource',
        }),
        message: Type.String(),
        data: Type.Optional(Type.Unknown()),
      }),
    ),
  },
  { $id: 'JsonRpcResponse', title: 'JSON-RPC 2.0 response' },
);

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
/** What the body parser hands over when the bytes are not JSON (so the answer can be -32700). */
export const UNPARSEABLE = Symbol('unparseable JSON body');

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string };
}

export type Envelope =
  | { kind: 'refused'; body: JsonRpcErrorBody }
  | { kind: 'notification' }
  | { kind: 'request'; message: JsonRpcRequest & { id: string | number } };

const isRequest = ajv.compile<JsonRpcRequest>(JsonRpcRequest);
const isId = ajv.compile<string | number>(RequestId);

export const errorBody = (code: number, message: string, id: unknown = null): JsonRpcErrorBody => ({
  jsonrpc: '2.0',
  id: isId(id) ? id : null,
  error: { code, message },
});

const refuse = (code: number, message: string, id: unknown = null): Envelope => ({
  kind: 'refused',
  body: errorBody(code, message, id),
});

export function classify(body: unknown): Envelope {
  if (body === UNPARSEABLE || body === undefined) {
    return refuse(PARSE_ERROR, 'Parse error: the request body is not valid JSON');
  }
  if (Array.isArray(body)) {
    return refuse(
      INVALID_REQUEST,
      'Invalid Request: batches are not supported; send one JSON-RPC object per request',
    );
  }
  if (typeof body !== 'object' || body === null) {
    return refuse(INVALID_REQUEST, 'Invalid Request: the body must be one JSON-RPC 2.0 request object');
  }
  const id = (body as { id?: unknown }).id;
  if (id !== undefined && !isId(id)) {
    return refuse(INVALID_REQUEST, 'Invalid Request: id: must be a string or an integer');
  }
  if (!isRequest(body)) {
    const problem = describeValidation((isRequest.errors ?? []) as ValidationItem[], 'request');
    return refuse(INVALID_REQUEST, `Invalid Request: ${problem}`, id);
  }
  // A notification never gets an answer (JSON-RPC 2.0 §4.1); stateless, none has an effect.
  if (body.id === undefined) return { kind: 'notification' };
  // Lenient on members the specification does not define: JSON-RPC 2.0 names four and forbids
  // no others, so a message carrying one more is still a valid request (answered, the member
  // ignored), while the SDK's strict parser would call it unparseable (-32700).
  const { jsonrpc, id: requestId, method, params } = body;
  return {
    kind: 'request',
    message: {
      jsonrpc,
      id: requestId,
      method,
      ...(params === undefined ? {} : { params }),
    },
  };
}
