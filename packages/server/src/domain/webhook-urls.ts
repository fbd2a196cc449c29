/**
 * Where a webhook may point (issue 39): https to a public address, unless the
 * operator allows private ones (WEBHOOK_ALLOW_PRIVATE, for tests and closed
 * networks). Checked when the url is set and again before each delivery,
 * which then connects to the very address checked (a name that resolves to a
 * private address later, DNS rebinding, is refused).
 */
import { lookup } from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export class UnsafeWebhookUrl extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeWebhookUrl';
  }
}

/** A url as set: its syntax and scheme only (no name is resolved). */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeWebhookUrl('url is not a valid absolute url');
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) throw new UnsafeWebhookUrl('url must be https');
  if (url.username !== '' || url.password !== '') throw new UnsafeWebhookUrl('url must not carry a user name or password');
  if (raw.length > 2048) throw new UnsafeWebhookUrl('url is longer than 2048 characters');
  return url;
}

/** Whether an address is a public unicast one: not loopback, private, link-local (169.254.169.254), unique-local, CGNAT, reserved, … */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  // ::/96 (IPv4-compatible, `[::127.0.0.1]`) is reserved, yet ipaddr.js calls it unicast; some stacks tunnel it to the IPv4 address.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) return false;
  return parsed.range() === 'unicast';
}

export interface ResolvedUrl {
  url: URL;
  /** The address to connect to: checked, and the one the connection is pinned to. */
  address: string;
  family: 4 | 6;
}

/** Resolves the url's host and checks every address it names; the first is the one to connect to. */
export async function resolveWebhookUrl(raw: string, allowPrivate: boolean): Promise<ResolvedUrl> {
  const url = parseWebhookUrl(raw, allowPrivate);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: { address: string; family: number }[];
  try {
    addresses = ipaddr.isValid(host) ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new UnsafeWebhookUrl(`url's host ${host} does not resolve`);
  }
  if (addresses.length === 0) throw new UnsafeWebhookUrl(`url's host ${host} does not resolve`);
  if (!allowPrivate) {
    const refused = addresses.find((entry) => !isPublicAddress(entry.address));
    if (refused) throw new UnsafeWebhookUrl(`url's host ${host} is not a public address (${refused.address}); webhooks go to public addresses only`);
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
