// The pod's service-account token, re-read as soon as the kubelet replaces it. Projected tokens
// expire (an hour by default) and the kubelet writes a new one well before that; client-node's
// own tokenFile provider re-reads only once a minute, so after a rotation on a server that
// already rejects the old token, a minute of 401s would follow. A stat per request (lists and
// watches are rare) notices the swap at once; the once-a-minute re-read stays as a backstop.
import { readFileSync, statSync } from 'node:fs';
import type { User } from '@kubernetes/client-node';

export const TOKEN_FILE_PROVIDER = 'kube-dns-token-file';
const REREAD_MS = 60_000;

interface Loaded {
  token: string;
  /** ino:size:mtime of the file the token came from */
  stamp: string;
  at: number;
}

function stampOf(path: string): string | undefined {
  try {
    const st = statSync(path);
    return `${st.ino}:${st.size}:${st.mtimeMs}`;
  } catch {
    return undefined;
  }
}

export class RotatingTokenFile {
  private readonly loaded = new Map<string, Loaded>();

  isAuthProvider(user: User): boolean {
    return user.authProvider?.name === TOKEN_FILE_PROVIDER;
  }

  async applyAuthentication(user: User, opts: { headers?: Record<string, unknown> }): Promise<void> {
    const config = user.authProvider?.config as { path?: unknown; token?: unknown } | undefined;
    // a kubeconfig's `token`, if it has one besides tokenFile, only while the file cannot be read (client-go)
    const token = this.current(String(config?.path ?? '')) ?? (typeof config?.token === 'string' ? config.token : undefined);
    if (token) (opts.headers ??= {})['Authorization'] = `Bearer ${token}`;
  }

  /** The token in `path` now; the last one read while the file is briefly missing or empty. */
  current(path: string): string | undefined {
    const prev = this.loaded.get(path);
    const stamp = stampOf(path);
    if (prev && stamp === prev.stamp && Date.now() - prev.at < REREAD_MS) return prev.token;
    try {
      const token = readFileSync(path, 'utf8').trim();
      if (token && stamp) {
        this.loaded.set(path, { token, stamp, at: Date.now() });
        return token;
      }
    } catch {
      /* mid-rotation: keep using the previous token */
    }
    return prev?.token;
  }
}

/** `user` authenticating with the token in `path`, read through RotatingTokenFile. */
export function tokenFileUser(user: User, path: string): User {
  const { token, ...rest } = user;
  return { ...rest, authProvider: { name: TOKEN_FILE_PROVIDER, config: { path, ...(token && { token }) } } };
}

/** Makes `users` read their token through RotatingTokenFile instead of client-node's tokenFile provider. */
export function rotatingTokenUsers(users: User[]): User[] {
  return users.map((u) => {
    const file = u.authProvider?.config?.['tokenFile'];
    return typeof file === 'string' ? { ...u, authProvider: { name: TOKEN_FILE_PROVIDER, config: { path: file } } } : u;
  });
}
