// dns-packet's type table, a CommonJS module of its own that @types/dns-packet does not declare.
// Imported statically (not through createRequire) so that the production bundle includes it.
declare module 'dns-packet/types.js' {
  export function toString(type: number): string;
  export function toType(name: string): number;
}
