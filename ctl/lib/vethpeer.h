/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Whether a veth takes XDP-redirected frames, read from its peer: what a
 * kernel without the netdev family (before 6.3) does not say as
 * NETDEV_XDP_ACT_NDO_XMIT. A veth's ndo_xdp_xmit puts frames on its
 * peer's receive rings only while the peer's NAPI is on (veth_xdp_xmit
 * checks the peer's rq->napi, and drops them otherwise); the peer turns
 * NAPI on when it is up with a native XDP program (veth_enable_xdp) or
 * with GRO (veth_open, veth_set_features), and off when it goes down or
 * loses both. An XDP program need not turn GRO on (6.1 and 6.18 leave
 * it off), so both are read.
 *
 * The peer is read where it is: its flags and XDP program by RTM_GETLINK
 * with IFLA_TARGET_NETNSID (CAP_NET_ADMIN), its GRO by the ethtool ioctl
 * (ETHTOOL_GGRO: the active features) on a socket made inside its
 * namespace (nsid.h), which needs CAP_SYS_ADMIN unless the peer is in
 * ours or its state already answers (down, or with an XDP program).
 */
#ifndef XFIB_VETHPEER_H
#define XFIB_VETHPEER_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>

#include "nsid.h"

struct nlmsghdr;

/* The peer is in our namespace (no IFLA_LINK_NETNSID). */
#define VETHPEER_OURS (-1)

/* What a probe read of one link of our namespace. */
struct vethpeer {
	int ifindex;
	char ifname[IF_NAMESIZE]; /* the link's name */
	bool veth;		/* the link is a veth; nothing below if not */
	int peer;		/* its peer's ifindex there (IFLA_LINK) */
	int nsid;		/* the peer's namespace, or VETHPEER_OURS */
	bool up, xdp, gro;	/* the peer: IFF_UP, native XDP program, GRO */
	char name[IF_NAMESIZE];	/* the peer's name, if read */
	int err;		/* the peer could not be read: -errno ... */
	const char *step;	/* ... at this step */
};

/* The sockets and namespaces probes share. */
struct vethpeer_ctx {
	struct mnl_socket *nl;	/* rtnetlink requests */
	__u32 seq;
	struct nsid_cache ns;
};

int vethpeer_open(struct vethpeer_ctx *c);
void vethpeer_close(struct vethpeer_ctx *c);

/* Reads link ifindex of our namespace and, for a veth, its peer: 0 (the
 * peer's part may have failed: p->err), or -errno when the link itself
 * could not be read (-ENODEV: it is gone). */
int vethpeer_probe(struct vethpeer_ctx *c, int ifindex, struct vethpeer *p);

/* An RTM_NEWLINK message about a veth (IFLA_INFO_KIND "veth"). */
bool vethpeer_is_veth(const struct nlmsghdr *nlh);

/* A veth probed: it takes redirected frames. */
static inline bool vethpeer_xmit(const struct vethpeer *p)
{
	return !p->err && p->up && (p->xdp || p->gro);
}

/* Why probed veth p takes no redirected frames, and the fix, into buf. */
void vethpeer_why(const struct vethpeer *p, char *buf, size_t len);

#endif /* XFIB_VETHPEER_H */
