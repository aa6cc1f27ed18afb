import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { addressHex, ipRange, IP_OR_CIDR_PATTERN, rangesWithin } from '../../src/lib/ip';

// The address grammar twice: the pattern the API document (and the schema) uses, and the parser that computes ranges.
// They must agree on every string, or a key could be accepted with addresses it cannot match (or the reverse).

const pattern = new RegExp(IP_OR_CIDR_PATTERN, 'u');
const agree = (text: string) => expect(ipRange(text) !== null, JSON.stringify(text)).toBe(pattern.test(text));

describe('IP addresses and CIDR ranges', () => {
  it('the pattern and the parser accept exactly the same strings', () => {
    fc.assert(fc.property(fc.stringMatching(pattern), (text) => {
        agree(text);
      }), { numRuns: 2000 });
    const piece = fc.constantFrom('', '0', '1', '01', 'ffff', 'FFFF', '12345', '255', '256', '1.2.3.4', '0.0.0.0', '::', ':', '.', '/', '/0', '/32', '/33', '/128', '/129', '/08', 'g', ' ');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
        agree(parts.join(''));
        agree(parts.join(':'));
      }),
      { numRuns: 5000 },
    );
  });

  it('ranges: IPv4 as IPv4-mapped IPv6, prefixes masked, containment', () => {
    expect(ipRange('203.0.113.9/24')).toEqual(['00000000000000000000ffffcb007100', '00000000000000000000ffffcb0071ff']);
    expect(ipRange('::ffff:203.0.113.0/120')).toEqual(ipRange('203.0.113.0/24'));
    expect(addressHex('::ffff:203.0.113.9')).toBe(addressHex('203.0.113.9'));
    expect(ipRange('2001:db8::/32')).toEqual(['20010db8000000000000000000000000', '20010db8ffffffffffffffffffffffff']);
    expect(ipRange('::/0')).toEqual(['0'.repeat(32), 'f'.repeat(32)]);
    for (const bad of ['1.2.3.4::', '1:2:3:4:5:6:7::8', '1::2::3', 'fe80::1%eth0', '[::1]', '1.2.3.4/33', '::/129', '01.2.3.4']) expect(ipRange(bad), bad).toBeNull();
    expect(rangesWithin([ipRange('10.1.0.0/16')!], [ipRange('10.0.0.0/8')!])).toBe(true);
    expect(rangesWithin([ipRange('10.0.0.0/7')!], [ipRange('10.0.0.0/8')!])).toBe(false);
  });
});
