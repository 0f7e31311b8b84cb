// Writes the fake API server accepts: create (POST to a collection) and merge patch (PATCH on an
// object), as kube-apiserver does them. What kube-dns writes is Events (the recorder creates one,
// then PATCHes its count); any resource the server knows works the same way.
import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { ParsedPath } from './resources.js';
import { status, type KubeStatus } from './status.js';
import type { KubeObject, ObjectStore } from './store.js';

const MAX_BODY = 1 << 20;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) reject(new Error('request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** RFC 7386 JSON merge patch: objects merge recursively, null removes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

const MERGE_TYPES = new Set(['application/merge-patch+json', 'application/strategic-merge-patch+json']);

export async function handleWrite(
  req: IncomingMessage,
  p: ParsedPath,
  store: ObjectStore,
  reply: (code: number, body: unknown) => void,
): Promise<void> {
  const fail = (s: KubeStatus) => reply(s.code, s);
  let body: Record<string, any>;
  try {
    body = JSON.parse(await readBody(req)) as Record<string, any>;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new Error('not a JSON object');
  } catch (e) {
    return fail(status(400, `invalid request body: ${(e as Error).message}`));
  }
  const namespace = p.namespace ?? 'default';
  const kind = p.resource.kind;
  if (req.method === 'POST' && p.name === undefined) {
    const meta = (body['metadata'] ??= {}) as Record<string, any>;
    if (!meta['name'] && meta['generateName']) meta['name'] = `${meta['generateName']}${randomBytes(3).toString('hex').slice(0, 5)}`;
    if (!meta['name']) return fail(status(422, `${kind} "": metadata.name: Required value`, 'Invalid'));
    if (meta['namespace'] && meta['namespace'] !== namespace) {
      return fail(status(400, `the namespace of the provided object does not match the namespace sent on the request`));
    }
    meta['namespace'] = namespace;
    if (store.get(p.resource.name, namespace, meta['name'])) {
      return fail(status(409, `${p.resource.name} "${meta['name']}" already exists`, 'AlreadyExists'));
    }
    return reply(201, store.upsert(p.resource.name, body as KubeObject));
  }
  if (req.method === 'PATCH' && p.name !== undefined) {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!MERGE_TYPES.has(type)) return fail(status(415, `the fake API server takes merge patches, not ${JSON.stringify(type)}`, 'UnsupportedMediaType'));
    const current = store.get(p.resource.name, namespace, p.name);
    if (!current) return fail(status(404, `${p.resource.name} "${p.name}" not found`));
    const next = mergePatch(current, body) as KubeObject;
    next.metadata = { ...next.metadata, name: p.name, namespace };
    return reply(200, store.upsert(p.resource.name, next));
  }
  return fail(status(405, `the fake API server does not take ${req.method} on ${p.name === undefined ? 'a collection' : 'an object'}`));
}

