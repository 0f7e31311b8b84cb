// Kubernetes Events about the kube-dns ConfigMap: a rejected edit is a Warning `InvalidConfig`
// naming the key and the error, an applied one a Normal `ConfigApplied`, so that
// `kubectl get events` shows what the kubedns log says. The involved object is the ConfigMap in
// this pod's namespace (POD_NAMESPACE from the downward API). It carries no uid: reading the
// ConfigMap would need RBAC we do not ask for, and `kubectl describe configmap` matches Events by
// uid, so list them with `kubectl get events --field-selector involvedObject.name=kube-dns`.
import type { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import {
  type ConfigDirSource, type Logger, type PodIdentity, EventRecorder, configMapReference, describeErrors, podIdentity,
} from '@kube-dns/config';

/** A recorder that reaches the API server the way list/watch does (same kubeconfig, same credentials). */
export function kubeDnsEventRecorder(kc: KubeConfig, log: Logger, pod: PodIdentity = podIdentity()): EventRecorder {
  return new EventRecorder({
    component: 'kube-dns',
    ...(pod.node && { host: pod.node }),
    ...(pod.name && { instance: pod.name }),
    log,
    endpoint: () => {
      const server = kc.getCurrentCluster()?.server;
      if (!server) return undefined;
      return {
        server,
        // per request: tokens from files and exec plugins are refreshed by client-node
        options: async () => {
          const o: RequestOptions = {};
          await kc.applyToHTTPSOptions(o);
          return o;
        },
      };
    },
  });
}

/**
 * A Warning `StubDomainInClusterZone` for stub domains inside a zone kube-dns answers (forwarded
 * there) or equal to one (ignored), at every load that has them, the first included (as a rejected
 * edit is reported): the log alone is easy to miss, and the behaviour differs from a plain stub.
 */
export function reportStubDomainsInZone(
  recorder: EventRecorder,
  found: readonly { domain: string; zone: string; forwarded: boolean }[],
  pod: PodIdentity = podIdentity(),
): void {
  if (found.length === 0) return;
  const told = found.map((s) => (s.forwarded ? `${s.domain} is inside the zone ${s.zone}: its names are forwarded to its servers` : `${s.domain} is the zone ${s.zone} itself: ignored`));
  recorder.emit(configMapReference(pod), 'Warning', 'StubDomainInClusterZone', `kube-dns ConfigMap stubDomains: ${told.join('; ')}`);
}

/** Emits an Event for every rejected and every applied change (not for the first load). */
export function reportConfigEvents(source: ConfigDirSource, recorder: EventRecorder, pod: PodIdentity = podIdentity()): void {
  const ref = configMapReference(pod);
  let first = true;
  source.on('rejected', ({ errors }) => {
    recorder.emit(ref, 'Warning', 'InvalidConfig', `kube-dns rejected the ConfigMap and keeps its last good configuration: ${describeErrors(errors)}`);
  });
  source.on('config', (c) => {
    if (first) return void (first = false);
    const keys = [
      c.stubDomains.size && 'stubDomains',
      c.upstreamNameservers.length && 'upstreamNameservers',
      c.hosts.length && 'hosts',
      c.federations.size && 'federations',
      c.zoneOverrides.ignoreEmptyService !== undefined && 'ignoreEmptyService',
      c.zoneOverrides.transferTo !== undefined && 'transferTo',
    ].filter(Boolean);
    recorder.emit(ref, 'Normal', 'ConfigApplied', `kube-dns applied the ConfigMap${keys.length ? ` (${keys.join(', ')})` : ' (no keys: the defaults)'}, version ${c.version.slice(0, 12) || 'empty'}`);
  });
}
