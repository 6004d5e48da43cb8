/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which ports can take XDP-redirected frames, from the kernel's "netdev"
 * generic netlink family (Linux 6.3 and later): NETDEV_CMD_DEV_GET answers
 * a device's XDP features, and the "mgmt" multicast group announces their
 * changes. A device takes frames redirected to it (ndo_xdp_xmit) only
 * with NETDEV_XDP_ACT_NDO_XMIT: the kernel refuses the redirect otherwise
 * and drops the frame. A veth has it only while its peer has an XDP
 * program or GRO on, and the kernel updates it when those change; a
 * driver without ndo_xdp_xmit never has it.
 *
 * A kernel without the family (before 6.3) is asked the other way: each
 * veth's peer is probed and followed (vethwatch.h), every other port is
 * taken to take redirected frames, as before xfib could check. The
 * functions below answer in both ways.
 *
 * xfibd learns it for every port (xdpfeat_dump, xdpfeat_read) and
 * publishes it as XFIB_IF_NO_XMIT; xfibctl asks for one port
 * (xdpfeat_get) and explains it (xdpfeat_explain).
 */
#ifndef XFIB_XDPFEAT_H
#define XFIB_XDPFEAT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct mnl_socket;
struct vethwatch;

/* include/uapi/linux/netdev.h, which the build hosts' headers (Linux 6.1)
 * lack. */
#define XDPFEAT_FAMILY_NAME "netdev"
#define XDPFEAT_MCGRP_MGMT "mgmt"
#define XDPFEAT_CMD_DEV_GET 1
#define XDPFEAT_CMD_DEV_ADD_NTF 2
#define XDPFEAT_CMD_DEV_DEL_NTF 3
#define XDPFEAT_CMD_DEV_CHANGE_NTF 4
#define XDPFEAT_A_DEV_IFINDEX 1
#define XDPFEAT_A_DEV_XDP_FEATURES 3
#define XDPFEAT_ACT_NDO_XMIT (1ull << 2)

struct xdpfeat {
	struct mnl_socket *req; /* requests and dumps */
	struct mnl_socket *ev;  /* the mgmt group; NULL if not joined */
	__u16 family;		/* 0: the kernel has no netdev family */
	__u32 seq;
	__u64 overruns;		/* notifications lost (ENOBUFS) */
	struct vethwatch *veth;	/* without the family: the veths' peers */
};

/* Set (to 1) for tests: act as on a kernel without the netdev family. */
#define XDPFEAT_TEST_NO_FAMILY_ENV "XFIB_TEST_NO_NETDEV_FAMILY"

/* Called with each device's ifindex and whether it takes redirected
 * frames. */
typedef void (*xdpfeat_cb)(void *ctx, int ifindex, bool xmit);

/*
 * Opens the request socket and resolves the family; with events, also
 * joins the mgmt group (before any dump, so that no change is missed).
 * Without the family (family stays 0), opens the veths' probe instead
 * (veth set), with events its notifications. 0 or -errno (then nothing
 * is known: every port is taken to be able).
 */
int xdpfeat_open(struct xdpfeat *x, bool events);
void xdpfeat_close(struct xdpfeat *x);

/* The ports' ability is known, one way or the other. */
static inline bool xdpfeat_known(const struct xdpfeat *x)
{
	return x->family || x->veth;
}

/* The event socket's fd to poll, or -1. */
int xdpfeat_fd(const struct xdpfeat *x);

/* Every device of the namespace through cb: 0 or -errno. */
int xdpfeat_dump(struct xdpfeat *x, xdpfeat_cb cb, void *ctx);

/* Reads the pending notifications through cb, without blocking: 0,
 * -ENOBUFS when some were lost (dump again), or -errno. */
int xdpfeat_read(struct xdpfeat *x, xdpfeat_cb cb, void *ctx);

/* One device: 1 if it takes redirected frames, 0 if not, -ENOENT when
 * that is not known (without the family: a driver other than veth), or
 * -errno. */
int xdpfeat_get(struct xdpfeat *x, int ifindex);

/*
 * Why port ifindex (named name) cannot take redirected frames and how to
 * fix it, into buf: for a veth, its peer's settings, or (without the
 * family) why the peer could not be read; otherwise the driver's lack of
 * ndo_xdp_xmit.
 */
void xdpfeat_explain(const struct xdpfeat *x, int ifindex, const char *name,
		     char *buf, size_t len);

#endif /* XFIB_XDPFEAT_H */
