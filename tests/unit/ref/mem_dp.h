/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dataplane's maps as plain memory, for the tests that drive the RIB
 * without the kernel (tests/unit/test_rib_dflt.c, tests/fuzz/
 * fuzz_netlink.c): zeroed arrays for the maps the RIB writes through
 * struct rib_dp, and the neighbour-host map as a small table that
 * rib_dp_ops keeps, so a test can compare it with the RIB's neighbours.
 */
#ifndef XFIB_MEM_DP_H
#define XFIB_MEM_DP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "rib/rib.h"

struct mem_dp {
	struct {
		struct xfib_neigh_key k;
		__u32 idx;
	} host[4096];
	size_t nhosts;
};

/*
 * Empties m and points dp at fresh zeroed arrays, with m as the ops'
 * context. with_rules: the rule-set arrays too, so that the RIB publishes
 * its rules into them; without, dp->rules stays NULL and it does not
 * (struct rib_dp). Aborts if memory cannot be had.
 */
void mem_dp_open(struct rib_dp *dp, struct mem_dp *m, bool with_rules);

/* Unmaps what mem_dp_open() mapped. */
void mem_dp_close(struct rib_dp *dp);

#endif
