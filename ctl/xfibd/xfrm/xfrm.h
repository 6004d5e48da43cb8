/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * IPsec (XFRM), xfibd's side (include/xfib/xfrm.h has the modes): reads
 * the kernel's policies, states and default policies over NETLINK_XFRM at
 * start, on every resync and whenever a notification says they changed,
 * and publishes each family's mode in xfib_xfrm.
 */
#ifndef XFIB_XFIBD_XFRM_H
#define XFIB_XFIBD_XFRM_H

#include <poll.h>
#include <stdbool.h>
#include <linux/types.h>
#include <linux/netlink.h>

#include "xfib/maps.h"
#include "xfib/xfrm.h"

struct xfib_fwd_bpf;
struct mnl_socket;

struct xfrm_watch {
	struct xfib_fwd_bpf *skel;
	struct mnl_socket *req;	   /* dumps and requests */
	struct mnl_socket *notify; /* XFRMNLGRP_POLICY, _SA, _EXPIRE, _ACQUIRE */
	unsigned int seq;
	bool dirty;		   /* read everything again */
	__u64 retry_ms;		   /* after a failed read: when to retry */
	struct xfib_xfrm_info info[XFIB_FAMILIES];
	bool published;
};

/* What one read found: per family, and the namespace's defaults. */
struct xfrm_counts {
	__u32 fwd[XFIB_FAMILIES], out[XFIB_FAMILIES], states[XFIB_FAMILIES];
	__u8 flags; /* XFIB_XFRM_FWD_BLOCK, XFIB_XFRM_OUT_BLOCK */
};

/*
 * Counts what message nlh of a policy dump, a state dump or a default
 * policy answer says matters to forwarding into c; ignores other messages
 * and short ones. Socket policies and input policies do not count.
 */
void xfrm_count_msg(struct xfrm_counts *c, const struct nlmsghdr *nlh);

/* Opens the sockets, reads and publishes: before the daemon publishes
 * anything the dataplane forwards by. Always 0: without NETLINK_XFRM, or
 * when a read fails, both families go to the kernel (retried every second
 * after a failed read). */
int xfrm_watch_init(struct xfrm_watch *w, struct xfib_fwd_bpf *skel);
void xfrm_watch_fini(struct xfrm_watch *w);

/* The descriptor to poll, into pfd; how many (0 or 1). */
int xfrm_watch_fds(struct xfrm_watch *w, struct pollfd *pfd);

/* Milliseconds until xfrm_watch_run has work without a notification. */
int xfrm_watch_timeout(struct xfrm_watch *w, __u64 now_ms);

/* Drains the notifications and reads again if they said anything. */
void xfrm_watch_run(struct xfrm_watch *w, __u64 now_ms);

/* Reads everything again now (the daemon's resync). */
void xfrm_watch_resync(struct xfrm_watch *w, __u64 now_ms);

#endif /* XFIB_XFIBD_XFRM_H */
