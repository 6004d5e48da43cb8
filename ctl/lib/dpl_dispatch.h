/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One address looked up in a struct dpl's instance by its algorithm, with
 * the lookup code the XDP program runs. dpl_lookup() (dplookup.c) and the
 * lookup benchmark's counting pass (tests/bench/lookupreads.c) share it,
 * each with its own table accessors: include it after defining
 * XFIB_TBL_AT and XFIB_U32_AT and including include/xfib/lookup_*.h.
 */
#ifndef XFIB_DPL_DISPATCH_H
#define XFIB_DPL_DISPATCH_H

#include <endian.h>
#include <string.h>
#include <arpa/inet.h>

#include "dplookup.h"

/* An IPv4 address in network order, as a host-order word. */
static inline __u32 dpl_addr4_host(const __u8 *a)
{
	__u32 a4;

	memcpy(&a4, a, 4);
	return ntohl(a4);
}

/* The nexthop index of addr (network order, 4 or 16 bytes by d->fam) in
 * d's instance, which must have tables (d->ready). */
static inline __u32 dpl_dispatch(struct dpl *d, const __u8 *addr)
{
	__u64 hi, lo;
	__u32 a4;

	if (d->fam == XFIB_V4) {
		a4 = dpl_addr4_host(addr);
		if (d->act.algo == XFIB_ALGO_DIR24_8)
			return xfib_dir24_lookup(&d->t24, &d->t8, a4);
		if (d->act.algo == XFIB_ALGO_DXR)
			return xfib_dxr_lookup(&d->dxr_direct, &d->dxr_ranges,
					       d->act.slot, a4);
		return xfib_bs4_lookup(&d->bs, d->act.slot, d->act.log2n, a4);
	}
	if (d->act.algo == XFIB_ALGO_TRIE6)
		return xfib_trie6_lookup(&d->t24, &d->t8, addr);
	memcpy(&hi, addr, 8);
	memcpy(&lo, addr + 8, 8);
	if (d->act.algo == XFIB_ALGO_POPTRIE6)
		return xfib_pt6_lookup(&d->pt6_direct, &d->pt6_nodes,
				       &d->pt6_leaves, d->act.slot, be64toh(hi),
				       be64toh(lo));
	return xfib_bs6_lookup(&d->bs, d->act.slot, d->act.log2n, be64toh(hi),
			       be64toh(lo));
}

#endif /* XFIB_DPL_DISPATCH_H */
