import ipaddr from "ipaddr.js";

/**
 * Allowed networks of a key (contract section 18): CIDR ranges, IPv4 or IPv6, parsed and matched by
 * ipaddr.js (pure JavaScript, no Node API: it runs in workerd). Only strict notations are taken:
 * IPv4 in four decimal parts (ipaddr.js also reads `127.1` and hex parts, which nobody means in an
 * allow-list) and IPv6 without a zone. A bare address is the range of that one address.
 */

export type ParsedNetwork = { ok: true; cidr: string } | { ok: false; message: string };

/** Parses one range and writes it canonically: the network address (host bits cleared) and the prefix. */
export function parseNetwork(input: string): ParsedNetwork {
  const text = input.trim();
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? null : text.slice(slash + 1);
  if (address.includes("%")) return { ok: false, message: "must not name an IPv6 zone" };
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  if (ipaddr.IPv4.isValidFourPartDecimal(address)) parsed = ipaddr.IPv4.parse(address);
  else if (ipaddr.IPv6.isValid(address) && address.includes(":")) parsed = ipaddr.IPv6.parse(address);
  else return { ok: false, message: "must be an IPv4 or IPv6 address or CIDR range" };
  const width = parsed.kind() === "ipv4" ? 32 : 128;
  if (prefixText !== null && !/^\d{1,3}$/.test(prefixText)) return { ok: false, message: "must end in /<prefix length>" };
  const prefix = prefixText === null ? width : Number(prefixText);
  if (prefix > width) return { ok: false, message: `prefix length must be 0 to ${width}` };
  const network =
    parsed.kind() === "ipv4"
      ? ipaddr.IPv4.networkAddressFromCIDR(`${parsed.toString()}/${prefix}`)
      : ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/${prefix}`);
  return { ok: true, cidr: `${network.toString()}/${prefix}` };
}

/**
 * The client's address as the platform reports it, in every form a range may name it: an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) is both that IPv6 address and its IPv4 one; none
 * when unreadable.
 */
export function addressForms(input: string | null): (ipaddr.IPv4 | ipaddr.IPv6)[] {
  if (input === null) return [];
  const text = input.trim();
  if (!ipaddr.isValid(text) || text.includes("%")) return [];
  if (!text.includes(":")) return ipaddr.IPv4.isValidFourPartDecimal(text) ? [ipaddr.IPv4.parse(text)] : [];
  const v6 = ipaddr.IPv6.parse(text);
  return v6.isIPv4MappedAddress() ? [v6, v6.toIPv4Address()] : [v6];
}

/**
 * Whether `address` lies in one of `networks` (canonical ranges from `parseNetwork`). An empty list
 * allows every address; an unreadable address none of a non-empty list.
 */
export function addressAllowed(address: string | null, networks: readonly string[]): boolean {
  if (networks.length === 0) return true;
  const forms = addressForms(address);
  return networks.some((cidr) => {
    const [network, prefix] = ipaddr.parseCIDR(cidr);
    return forms.some((form) => form.kind() === network.kind() && form.match(network, prefix));
  });
}
