import type { FastifyRequest } from 'fastify';

/** What stands in for a secret in a log line. */
export const REDACTED = '[redacted]';

/** Query parameters that carry a credential: `t`, the media ticket (a bearer for 15 minutes). */
const SECRET_PARAMS = new Set(['t']);

/**
 * The URL as logged: every credential-bearing query parameter's value replaced, whatever its
 * spelling (`?t=`, `?T=`, repeated, percent-encoded name), so a ticket never reaches a log line.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return SECRET_PARAMS.has(name.toLowerCase()) ? `${rawName}=${REDACTED}` : pair;
    })
    .join('&');
  return `${url.slice(0, q)}?${query}`;
}

/**
 * Logger options for the service: requests are logged as method, redacted URL and peer (never
 * a header, so never Authorization), and any object that does carry headers has its credentials
 * censored by pino's redaction as a second line of defence.
 */
export function loggerOptions(level: string, stream?: { write(line: string): void }) {
  return {
    level,
    ...(stream ? { stream } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        'res.headers["set-cookie"]',
      ],
      censor: REDACTED,
    },
    serializers: {
      req(request: FastifyRequest) {
        return {
          method: request.method,
          url: redactUrl(request.url),
          host: request.host,
          remoteAddress: request.ip,
          remotePort: request.socket?.remotePort,
        };
      },
    },
  };
}
