// Errors from @kubernetes/client-node, made short and classifiable (logs and retry decisions).

interface MaybeHttpError {
  code?: unknown;
  statusCode?: unknown;
  body?: unknown;
  message?: unknown;
  name?: unknown;
}

/** HTTP status of a failed request (ApiException.code, Watch's error.statusCode), if any. */
export function httpStatusOf(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const x = e as MaybeHttpError;
  if (typeof x.code === 'number') return x.code;
  if (typeof x.statusCode === 'number') return x.statusCode;
  return undefined;
}

/** 410 Gone/Expired: the resourceVersion or continue token is too old; a fresh list is needed. */
export function isGone(e: unknown): boolean {
  return httpStatusOf(e) === 410;
}

/**
 * A failed request's body as a Status object when it is one (client-node hands it over parsed
 * or as text), else its text (a proxy's page), else undefined.
 */
function statusBody(body: unknown): { message?: unknown; details?: { causes?: unknown } } | string | undefined {
  if (typeof body === 'string') {
    try {
      return statusBody(JSON.parse(body)) ?? body;
    } catch {
      return body;
    }
  }
  return typeof body === 'object' && body !== null ? body : undefined;
}

/**
 * The list or watch asked for a resourceVersion the API server has not reached: kube-apiserver
 * answers 504 with the cause ResourceVersionTooLarge (older ones only say so in the message), as
 * after etcd was restored from a backup. client-go then lists the latest instead.
 */
export function isTooLargeResourceVersion(e: unknown): boolean {
  if (httpStatusOf(e) !== 504) return false;
  const body = statusBody((e as MaybeHttpError).body);
  if (typeof body !== 'object') return body?.includes('Too large resource version') ?? false;
  const causes = Array.isArray(body.details?.causes) ? (body.details.causes as { reason?: unknown }[]) : [];
  return causes.some((c) => c?.reason === 'ResourceVersionTooLarge') || statusMessage(body)?.includes('Too large resource version') === true;
}

function statusMessage(raw: unknown): string | undefined {
  const body = statusBody(raw);
  if (typeof body === 'string') return body.slice(0, 200);
  return typeof body?.message === 'string' ? body.message : undefined;
}

/** One line saying what failed: "HTTP 500: <Status message>", "connect ECONNREFUSED 127.0.0.1:6443", ... */
export function describeError(e: unknown): string {
  const status = httpStatusOf(e);
  if (status !== undefined) {
    const msg = statusMessage((e as MaybeHttpError).body);
    return msg ? `HTTP ${status}: ${msg}` : `HTTP ${status}`;
  }
  if (e instanceof Error) {
    // node-fetch: "request to https://... failed, reason: connect ECONNREFUSED ..." is already precise.
    const code = (e as MaybeHttpError).code;
    return typeof code === 'string' && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
  }
  return String(e);
}

/**
 * Retry-After of a failed request, in ms, when the server sent one in seconds (ApiException
 * carries the response headers; client-node's Watch errors do not, so a throttled watch waits a floor instead).
 */
export function retryAfterMs(e: unknown): number | undefined {
  if (typeof e !== 'object' || e === null) return undefined;
  const headers = (e as { headers?: unknown }).headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  const entry = Object.entries(headers).find(([k]) => k.toLowerCase() === 'retry-after');
  const v = entry ? String(entry[1]).trim() : '';
  if (!/^\d+$/.test(v)) return undefined;
  return Number(v) * 1000;
}
