/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The flow hash that picks a multipath group member: addresses, protocol
 * and ports, so every packet of a flow takes the same member. Written once
 * for the XDP program and for xfibctl, which shows the member a given flow
 * takes. A murmur3-style mix: cheap, and its top 8 bits (the bucket) are
 * spread evenly even when flows differ only in a port. Seeded per router
 * (struct xfib_hash_seed): routers with other seeds split the same flows
 * independently.
 */
#ifndef XFIB_FLOW_HASH_H
#define XFIB_FLOW_HASH_H

#include <linux/types.h>

static inline __u32 xfib_flow_mix(__u32 h, __u32 w)
{
	w *= 0xcc9e2d51u;
	w = (w << 15) | (w >> 17);
	w *= 0x1b873593u;
	h ^= w;
	h = (h << 13) | (h >> 19);
	return h * 5 + 0xe6546b64u;
}

static inline __u32 xfib_flow_final(__u32 h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/*
 * The router's seed; addresses as 32-bit words in network order as loaded
 * from the packet (1 word for IPv4, 4 for IPv6); ports is (sport << 16 |
 * dport) in host order, 0 when the packet has none (other protocols,
 * fragments).
 */
static inline __u32 xfib_flow_hash(__u32 seed, const __u32 *saddr,
				   const __u32 *daddr, int words, __u32 proto,
				   __u32 ports)
{
	__u32 h = seed;
	int i;

	for (i = 0; i < words; i++)
		h = xfib_flow_mix(h, saddr[i]);
	for (i = 0; i < words; i++)
		h = xfib_flow_mix(h, daddr[i]);
	h = xfib_flow_mix(h, proto);
	h = xfib_flow_mix(h, ports);
	return xfib_flow_final(h);
}

/* The group bucket a hash selects. */
static inline __u32 xfib_flow_bucket(__u32 hash)
{
	return hash >> 24;
}

#endif /* XFIB_FLOW_HASH_H */
