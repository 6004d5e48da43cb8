/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The daemon's lease on the mirror (struct xfib_lease in xfib/maps.h):
 * the clock it runs on and reading it, for xfibd, xfibctl status and
 * lookup. The XDP program forwards by the maps only while the lease runs.
 */
#ifndef XFIB_LEASE_H
#define XFIB_LEASE_H

#include <stdbool.h>
#include <linux/types.h>
#include "xfib/maps.h"

struct xfib_fwd_bpf;

/* CLOCK_MONOTONIC_COARSE in ns: bpf_ktime_get_coarse_ns() in the program. */
__u64 xfib_lease_clock(void);

/* A copy of the pinned lease into *l; 0 or -errno. */
int xfib_lease_read(struct xfib_fwd_bpf *skel, struct xfib_lease *l);

/* The lease runs at now (xfib_lease_clock()): as the program decides. */
bool xfib_lease_valid(const struct xfib_lease *l, __u64 now);

#endif /* XFIB_LEASE_H */
