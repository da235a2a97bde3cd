import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isAppError } from '../errors.js';

export const INVALID_PARAMS = -32602;
/** MCP's code for an unknown resource URI (the SDK names no constant for it). */
export const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error object as the SDK writes it (it reads `code`, `message` and `data`). Not the
 * SDK's McpError, which prefixes "MCP error <code>:" to the message on the wire.
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * Whether a failure leaves JSON-RPC and answers as HTTP, the way REST would: refusals of the
 * key (401, 403: the REST status and body, unwrapped) and anything unexpected (a 500 with no internals, logged by
 * the one error handler). Everything else (404, 409, 413, 422) is the tool's own answer.
 */
export const answersAsHttp = (err: unknown): boolean =>
  !isAppError(err) || err.status === 401 || err.status === 403 || err.status >= 500;

/** A tool's refusal: the REST detail as its text, flagged for the agent to read and act on. */
export const toolError = (detail: string): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: detail }],
});

export function toolResult(structured: Record<string, unknown>): CallToolResult {
  return { structuredContent: structured, content: [{ type: 'text', text: JSON.stringify(structured) }] };
}
