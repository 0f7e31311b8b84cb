import type { Zone } from '../records/zone.js';
import type { Resolution, ResolveOptions } from './types.js';

/** One question being answered inside the cluster zone. */
export interface Ctx {
  zone: Zone;
  opts: ResolveOptions;
  /** Upper-case type mnemonic ('A', 'SRV', 'TYPE65'...). */
  qtype: string;
  /** Owner name for records at the question name: the name as the client spelled it. */
  owner: string;
  /** The most answer records the reply can carry (resolve()'s budget): Infinity for a whole answer. */
  budget: number;
  /** Resolves another in-zone name (lower-case) for the same type: ExternalName chains. */
  lookupInZone(name: string): Resolution | undefined;
}
