// metav1.Status bodies, the way kube-apiserver reports failures (and 410 Gone inside watch streams).

export interface KubeStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
  details?: { causes?: { reason: string; message: string }[]; retryAfterSeconds?: number };
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  410: 'Expired',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function status(code: number, message: string, reason = REASONS[code] ?? 'Unknown'): KubeStatus {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

/** What a watch from a compacted resourceVersion gets (as an ERROR event), like etcd3's watcher. */
export function tooOldResourceVersion(requested: number, oldest: number): KubeStatus {
  return status(410, `too old resource version: ${requested} (${oldest})`, 'Expired');
}

/** A list at an exact resourceVersion that etcd has compacted away. */
export function listTooOld(): KubeStatus {
  return status(410, 'The resourceVersion for the provided list is too old.', 'Expired');
}

/**
 * A list or watch from a resourceVersion the server has not reached (its watch cache waited 3 s
 * for it): what kube-apiserver sends, a 504 whose cause says why (client-go tells it apart by the cause).
 */
export function tooLargeResourceVersion(requested: number, current: number): KubeStatus {
  return {
    ...status(504, `Timeout: Too large resource version: ${requested}, current: ${current}`, 'Timeout'),
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 },
  };
}

export function continueExpired(): KubeStatus {
  return status(
    410,
    'The provided continue parameter is too old to display a consistent list result. ' +
      'You can start a new list without the continue parameter, or use the continue token in this response to ' +
      'retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - ' +
      'objects that were created, modified, or deleted between the time the first chunk was returned and now may ' +
      'show up in the list.',
    'Expired',
  );
}
