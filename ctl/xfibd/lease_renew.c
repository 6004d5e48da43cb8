// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

#include "lease.h"
#include "lease_renew.h"
#include "pin.h"

int lease_renew_open(struct lease_renew *lr, struct xfib_fwd_bpf *skel,
		     __u64 lease_ms)
{
	lr->map = xfib_map_mmap(skel->maps.xfib_lease, true, &lr->len);
	if (!lr->map)
		return -errno;
	lr->lease_ms = lease_ms;
	lr->renewals = 0;
	return 0;
}

void lease_renew_close(struct lease_renew *lr)
{
	if (lr->map)
		munmap(lr->map, lr->len);
	lr->map = NULL;
}

void lease_renew(struct lease_renew *lr)
{
	struct xfib_lease *l = lr->map;
	__u64 until = xfib_lease_clock() + lr->lease_ms * 1000000ull;

	if (!l)
		return;
	lr->renewals++;
	l->lease_ms = lr->lease_ms;
	l->renewed = time(NULL);
	l->renewals = lr->renewals;
	l->pid = getpid();
	/* The word the program reads: one aligned store, after the rest. */
	__atomic_store_n(&l->until, until, __ATOMIC_RELEASE);
}
