/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Compiling the RIB into lookup instances and publishing them.
 *
 * Each algorithm is a module behind struct fib_algo; an instance is built
 * completely in the standby slot, then published with one atomic store of
 * the family's xfib_active word, which packets read once. The slot that was
 * active is written again only after an RCU grace period.
 */
#ifndef XFIB_PUBLISH_H
#define XFIB_PUBLISH_H

#include <stddef.h>
#include "ranges.h"
#include "rib.h"

struct publisher;

struct fib_algo {
	const char *name;
	enum xfib_algo id;
	int family; /* XFIB_V4 or XFIB_V6 */
	/* Builds the instance into slot; sets act->log2n and info's sizes.
	 * Returns 0, -ENOSPC when the table does not fit, or -errno. */
	int (*build)(struct publisher *p, unsigned int slot,
		     const struct xfib_pfx *main, size_t nmain,
		     const struct xfib_pfx *over, size_t nover,
		     struct xfib_active *act, struct xfib_fib_info *info);
};

struct publisher {
	struct rib *rib;
	struct xfib_active *active; /* mmap()ed xfib_active */
	struct xfib_bs4_range *bs4; /* mmap()ed xfib_bs4 */
	struct xfib_bs6_range *bs6; /* mmap()ed xfib_bs6 */
	size_t active_len, bs4_len, bs6_len;
	__u64 swaps[XFIB_FAMILIES];
};

int publish_init(struct publisher *p, struct rib *r);
void publish_fini(struct publisher *p);
/* Rebuilds and publishes the family's instance from the RIB. */
int publish_family(struct publisher *p, int fam);

const char *fib_algo_name(unsigned int id);

#endif /* XFIB_PUBLISH_H */
