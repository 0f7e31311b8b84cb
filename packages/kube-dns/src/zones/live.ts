// The zone options an operator may change in the kube-dns ConfigMap without a restart:
//   ignoreEmptyService  "true" / "false"       over --ignore-empty-service
//   transferTo          as --transfer-to ("" turns transfers off) over --transfer-to
// A key present wins over the flag; a key removed gives the flag back. The others (namespaces,
// selectors, pod names, external zones) change what is listed and watched or kept per object:
// they stay flags (a restart relists anyway). Values are validated by @kube-dns/config, so a bad
// one rejects the ConfigMap update as a whole and the last good state stays.
import type { KubeDnsConfig, Logger } from '@kube-dns/config';
import type { ResolveOptions } from '../resolve/types.js';
import { parseTransferTo, type TransferAcl } from '../transfer/acl.js';
import type { ZoneOptions } from './options.js';

export interface LiveZoneTargets {
  flags: ZoneOptions;
  resolveOpts: ResolveOptions;
  log: Logger;
  /** Answers change (a new zone generation and serial); cached ones were computed under the old options. */
  clearCache(): void;
  /** Transfers on (with this ACL) or off. */
  setTransfer(acl: TransferAcl | undefined): void;
}

export class LiveZoneOptions {
  private transferText: string;

  constructor(private readonly t: LiveZoneTargets) {
    this.transferText = t.flags.transfer?.entries.join(',') ?? '';
    t.setTransfer(t.flags.transfer);
  }

  apply(over: KubeDnsConfig['zoneOverrides']): void {
    const { t } = this;
    const ignore = over.ignoreEmptyService ?? t.flags.ignoreEmptyService;
    if (ignore !== (t.resolveOpts.ignoreEmptyService === true)) {
      t.resolveOpts.ignoreEmptyService = ignore;
      t.clearCache();
      t.log.info({ ignoreEmptyService: ignore, from: over.ignoreEmptyService === undefined ? 'flag' : 'ConfigMap' }, 'ignore-empty-service changed');
    }
    const text = over.transferTo ?? t.flags.transfer?.entries.join(',') ?? '';
    if (text !== this.transferText) {
      this.transferText = text;
      // already validated by the ConfigMap parser; '' is "off"
      t.setTransfer(text ? parseTransferTo(text) : undefined);
      t.log.info({ transferTo: text || '(off)', from: over.transferTo === undefined ? 'flag' : 'ConfigMap' }, 'zone transfer targets changed');
    }
  }
}
