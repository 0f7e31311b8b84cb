// Kubernetes Events on this pod when dnsmasq ends and is restarted, so `kubectl describe pod`
// shows what the nanny's log says: Warning `DnsmasqExited` (how it ended), Normal
// `DnsmasqRestarted`, Warning `DnsmasqGaveUp` before the nanny exits. Repeats of one exit
// (a crash loop) aggregate into one Event with a count. Off without POD_NAME (downward API) or
// without an API server (no service account, no -kubecfgFile).
import { type Logger, EventRecorder, inClusterEndpoint, kubeconfigEndpoint, podIdentity, podReference } from '@kube-dns/config';
import { describeExit } from './dnsmasq-process.js';
import type { Nanny } from './nanny.js';

export interface PodEvents {
  /** Sends what is queued (bounded), before the process exits. */
  flush(timeoutMs?: number): Promise<void>;
}

export function reportPodEvents(nanny: Nanny, kubecfgFile: string, log: Logger, env: NodeJS.ProcessEnv = process.env): PodEvents | undefined {
  const pod = podIdentity(env);
  const ref = podReference(pod, 'dnsmasq');
  if (!ref) {
    log.debug('no POD_NAME in the environment: no Kubernetes Events about dnsmasq');
    return undefined;
  }
  const recorder = new EventRecorder({
    component: 'dnsmasq-nanny',
    ...(pod.node && { host: pod.node }),
    instance: ref.name,
    log,
    endpoint: () => (kubecfgFile ? kubeconfigEndpoint(kubecfgFile) : inClusterEndpoint(env)),
  });
  nanny.on('dnsmasqExited', (info) => recorder.emit(ref, 'Warning', 'DnsmasqExited', `dnsmasq ${describeExit(info, false)}; the nanny restarts it`));
  nanny.on('dnsmasqRestarted', () => recorder.emit(ref, 'Normal', 'DnsmasqRestarted', 'dnsmasq restarted'));
  nanny.on('fatal', (e) => recorder.emit(ref, 'Warning', 'DnsmasqGaveUp', e.message));
  return { flush: (ms) => recorder.flush(ms) };
}
