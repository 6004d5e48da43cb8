/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The dxr builder: sorted IPv4 ranges into one slot of the direct table
 * and the range table (layout: include/xfib/lookup_dxr.h).
 */
#ifndef XFIB_DXR_H
#define XFIB_DXR_H

#include <stddef.h>
#include <linux/types.h>

#include "xfib/maps.h"
#include "xfib/lookup_dxr.h"

/*
 * Fills direct[XFIB_DXR_CHUNKS] and ranges[cap] (one slot's part of each,
 * entries relative to it) from n ranges sorted by start, the first at 0,
 * covering the whole address space. Plain stores: nothing reads the slot
 * until it is published. Returns the range entries written, -ENOSPC if
 * they do not fit cap, -ERANGE for a nexthop index of 2^16 or more,
 * -EINVAL for ranges that do not start at 0 or are not sorted.
 */
long dxr_build(const struct xfib_bs4_range *r, size_t n, __u32 *direct,
	       __u32 *ranges, size_t cap);

#endif /* XFIB_DXR_H */
