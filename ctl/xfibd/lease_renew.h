/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * xfibd's side of the lease (struct xfib_lease): the daemon vouches for
 * the mirror, lease_ms at a time, from its event loop, and only while it
 * is in sync with the kernel. A daemon that stops renewing (killed,
 * stopped, wedged, or exited with no successor) hands every packet to the
 * kernel once the last renewal runs out.
 */
#ifndef XFIBD_LEASE_RENEW_H
#define XFIBD_LEASE_RENEW_H

#include <stddef.h>
#include <linux/types.h>
#include "xfib/maps.h"

struct xfib_fwd_bpf;

struct lease_renew {
	struct xfib_lease *map; /* xfib_lease, mmap()ed writable */
	size_t len;
	__u64 lease_ms;
	__u64 renewals;
};

int lease_renew_open(struct lease_renew *lr, struct xfib_fwd_bpf *skel,
		     __u64 lease_ms);
void lease_renew_close(struct lease_renew *lr);

/* Vouches for the mirror for lease_ms from now. The caller is in sync
 * with the kernel: its last full sync succeeded and no resync is due. */
void lease_renew(struct lease_renew *lr);

#endif /* XFIBD_LEASE_RENEW_H */
