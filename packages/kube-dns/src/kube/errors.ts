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
 * The list or watch asked for a resourceVersion the API server has not reached: kube-apiserver
 * answers 504 with the cause ResourceVersionTooLarge (older ones only say so in the message), as
 * after etcd was restored from a backup. client-go then lists the latest instead.
 */
export function isTooLargeResourceVersion(e: unknown): boolean {
  if (httpStatusOf(e) !== 504) return false;
  let body = (e as MaybeHttpError).body;
  if (typeof body === 'string') {
    const text = body;
    try {
      body = JSON.parse(text);
    } catch {
      return text.includes('Too large resource version');
    }
  }
  if (typeof body !== 'object' || body === null) return false;
  const { message, details } = body as { message?: unknown; details?: { causes?: unknown } };
  const causes = Array.isArray(details?.causes) ? (details.causes as { reason?: unknown }[]) : [];
  return causes.some((c) => c?.reason === 'ResourceVersionTooLarge') || (typeof message === 'string' && message.includes('Too large resource version'));
}

function statusMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    try {
      return statusMessage(JSON.parse(body));
    } catch {
      return body.slice(0, 200);
    }
  }
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return undefined;
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
