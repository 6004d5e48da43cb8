/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lease decision (struct xfib_lease in maps.h), written once for the
 * XDP program, xfibctl and xfibd. Part of the chain in decide.h, apart so
 * that code without decide.h's map accessors can ask it too.
 */
#ifndef XFIB_LEASE_CHECK_H
#define XFIB_LEASE_CHECK_H

#include <linux/types.h>
#include "counters.h"

/*
 * The mirror is the kernel's FIB only while xfibd vouches for it: at time
 * now (CLOCK_MONOTONIC_COARSE, ns), before the lease's until. After it,
 * every packet goes to the kernel. The caller passes both, so the program
 * reads the clock once and userspace reads its own. XFIB_REASON_COUNT is
 * decide.h's XFIB_NEXT: the packet goes on.
 */
static inline __attribute__((always_inline)) __u32
xfib_lease_check(__u64 until, __u64 now)
{
	return now < until ? XFIB_REASON_COUNT : XFIB_PASS_STALE;
}

#endif /* XFIB_LEASE_CHECK_H */
