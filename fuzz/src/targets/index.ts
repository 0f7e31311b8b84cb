// Each target loads only its own modules (coverage is read over every loaded script: fewer is faster).
import type { FuzzTarget } from '../target.js';

export const TARGETS: Record<string, () => Promise<FuzzTarget>> = {
  packet: async () => (await import('./packet.js')).packetTarget(),
  configmap: async () => (await import('./configmap.js')).configmapTarget(),
  hosts: async () => (await import('./hosts.js')).hostsTarget(),
};
