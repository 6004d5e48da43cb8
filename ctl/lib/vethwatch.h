/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which ports take XDP-redirected frames, on a kernel without the netdev
 * family (before 6.3): xdpfeat's answers from probing every veth's peer
 * (vethpeer.h) and following what changes it. Other drivers are taken to
 * take them, as before xfib could check; a veth whose peer cannot be read
 * or followed is taken not to (the kernel forwards what leaves by it).
 *
 * Changes come as RTM_NEWLINK/RTM_DELLINK of RTNLGRP_LINK: the peer's
 * GRO (NETDEV_FEAT_CHANGE), its XDP program, up and down; the veth's own
 * (a new peer, a moved one, a deletion). A peer in another namespace is
 * heard through NETLINK_LISTEN_ALL_NSID, which needs CAP_NET_BROADCAST
 * and names the namespace by its nsid; without it such a peer cannot be
 * followed, and its veth is taken not to take them.
 */
#ifndef XFIB_VETHWATCH_H
#define XFIB_VETHWATCH_H

#include <stdbool.h>

#include "vethpeer.h"
#include "xdpfeat.h"

struct vethwatch_veth;

struct vethwatch {
	struct vethpeer_ctx probe;
	struct mnl_socket *ev;	/* RTNLGRP_LINK; NULL without events */
	bool all_nsid;		/* ev hears the other namespaces too */
	int self_nsid;		/* the nsid our namespace has in itself */
	struct vethwatch_veth *v; /* the veths of our namespace */
	size_t n, cap;
};

/* 0 or -errno; with events, also subscribes (before any dump). */
int vethwatch_open(struct vethwatch *w, bool events);
void vethwatch_close(struct vethwatch *w);

/* The event socket's fd, or -1. */
int vethwatch_fd(const struct vethwatch *w);

/* Every link of the namespace through cb: 0 or -errno. */
int vethwatch_dump(struct vethwatch *w, xdpfeat_cb cb, void *ctx);

/* The pending changes through cb, without blocking: 0, -ENOBUFS when
 * some were lost (dump again), or -errno. */
int vethwatch_read(struct vethwatch *w, xdpfeat_cb cb, void *ctx);

/* One link: 1 or 0 for a veth, -ENOENT for another driver, or -errno. */
int vethwatch_get(struct vethwatch *w, int ifindex);

#endif /* XFIB_VETHWATCH_H */
