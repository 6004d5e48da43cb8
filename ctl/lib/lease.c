// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <time.h>
#include <bpf/bpf.h>

#include "xfib_fwd.skel.h"
#include "xfib/lease.h"
#include "lease.h"

__u64 xfib_lease_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int xfib_lease_read(struct xfib_fwd_bpf *skel, struct xfib_lease *l)
{
	__u32 key = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.xfib_lease), &key, l))
		return -errno;
	return 0;
}

bool xfib_lease_valid(const struct xfib_lease *l, __u64 now)
{
	return xfib_lease_check(l->until, now) != XFIB_PASS_STALE;
}
