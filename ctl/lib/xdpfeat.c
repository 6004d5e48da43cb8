// SPDX-License-Identifier: GPL-2.0-only
/*
 * The ports' XDP features over the "netdev" generic netlink family: is a
 * port a valid target for XDP_REDIRECT (NETDEV_XDP_ACT_NDO_XMIT)?
 * See xdpfeat.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <libmnl/libmnl.h>

#include "nlreq.h"
#include "vethpeer.h"
#include "vethwatch.h"
#include "xdpfeat.h"

/* Notifications are one small message per device change. */
#define XDPFEAT_RCVBUF (1 << 20)

/* ---- the family and its group ------------------------------------------ */

struct family_info {
	__u16 id;
	__u32 mgmt; /* group id; 0 if not found */
};

static void parse_group(const struct nlattr *grp, struct family_info *fi)
{
	const struct nlattr *a;
	const char *name = NULL;
	__u32 id = 0;

	mnl_attr_for_each_nested(a, grp) {
		int t = mnl_attr_get_type(a);

		if (t == CTRL_ATTR_MCAST_GRP_NAME &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			name = mnl_attr_get_str(a);
		else if (t == CTRL_ATTR_MCAST_GRP_ID &&
			 mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			id = mnl_attr_get_u32(a);
	}
	if (name && !strcmp(name, XDPFEAT_MCGRP_MGMT))
		fi->mgmt = id;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	struct family_info *fi = data;
	const struct nlattr *a, *g;

	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		int t = mnl_attr_get_type(a);

		if (t == CTRL_ATTR_FAMILY_ID &&
		    mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
			fi->id = mnl_attr_get_u16(a);
		else if (t == CTRL_ATTR_MCAST_GROUPS &&
			 mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
			mnl_attr_for_each_nested(g, a)
				parse_group(g, fi);
	}
	return MNL_CB_OK;
}

static struct nlmsghdr *genl_msg(char *buf, __u16 type, __u16 flags, __u8 cmd)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct genlmsghdr *g;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | flags;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = 1;
	return nlh;
}

static int family_resolve(struct xdpfeat *x, struct family_info *fi)
{
	char buf[NLREQ_BUF];
	struct nlmsghdr *nlh = genl_msg(buf, GENL_ID_CTRL, NLM_F_ACK,
					CTRL_CMD_GETFAMILY);

	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, XDPFEAT_FAMILY_NAME);
	return nlreq_run(x->req, nlh, ++x->seq, family_cb, fi);
}

/* A kernel before 6.3: the veths' peers are probed instead. */
static int veth_open(struct xdpfeat *x, bool events)
{
	int err;

	x->veth = malloc(sizeof(*x->veth));
	if (!x->veth)
		return -ENOMEM;
	err = vethwatch_open(x->veth, events);
	if (err) {
		free(x->veth);
		x->veth = NULL;
	}
	return err;
}

static bool test_no_family(void)
{
	const char *e = getenv(XDPFEAT_TEST_NO_FAMILY_ENV);

	return e && !strcmp(e, "1");
}

int xdpfeat_open(struct xdpfeat *x, bool events)
{
	struct family_info fi = { 0 };
	int err, rcvbuf = XDPFEAT_RCVBUF;

	memset(x, 0, sizeof(*x));
	x->req = nlreq_open(NETLINK_GENERIC, 0);
	if (!x->req)
		return -errno;
	err = test_no_family() ? -ENOENT : family_resolve(x, &fi);
	if (err == -ENOENT) {
		err = veth_open(x, events);
		if (err)
			goto fail;
		return 0;
	}
	if (err)
		goto fail;
	x->family = fi.id;
	if (!events || !fi.mgmt)
		return 0;
	x->ev = nlreq_open(NETLINK_GENERIC, SOCK_NONBLOCK);
	if (!x->ev ||
	    mnl_socket_setsockopt(x->ev, NETLINK_ADD_MEMBERSHIP, &fi.mgmt,
				  sizeof(fi.mgmt)) < 0) {
		err = -errno;
		goto fail;
	}
	setsockopt(mnl_socket_get_fd(x->ev), SOL_SOCKET, SO_RCVBUF, &rcvbuf,
		   sizeof(rcvbuf));
	return 0;
fail:
	xdpfeat_close(x);
	return err;
}

void xdpfeat_close(struct xdpfeat *x)
{
	if (x->veth) {
		vethwatch_close(x->veth);
		free(x->veth);
		x->veth = NULL;
	}
	if (x->ev)
		mnl_socket_close(x->ev);
	if (x->req)
		mnl_socket_close(x->req);
	x->ev = x->req = NULL;
	x->family = 0;
}

int xdpfeat_fd(const struct xdpfeat *x)
{
	if (x->veth)
		return vethwatch_fd(x->veth);
	return x->ev ? mnl_socket_get_fd(x->ev) : -1;
}

/* ---- devices -------------------------------------------------------------- */

struct dev_ctx {
	__u16 family;
	xdpfeat_cb cb;
	void *ctx;
};

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *g = mnl_nlmsg_get_payload(nlh);
	struct dev_ctx *d = data;
	const struct nlattr *a;
	int ifindex = 0, have = 0;
	__u64 feat = 0;

	if (nlh->nlmsg_type != d->family ||
	    mnl_nlmsg_get_payload_len(nlh) < GENL_HDRLEN)
		return MNL_CB_OK;
	/* A device that goes away takes its routes and port with it. */
	if (g->cmd != XDPFEAT_CMD_DEV_GET && g->cmd != XDPFEAT_CMD_DEV_ADD_NTF &&
	    g->cmd != XDPFEAT_CMD_DEV_CHANGE_NTF)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, GENL_HDRLEN) {
		int t = mnl_attr_get_type(a);

		if (t == XDPFEAT_A_DEV_IFINDEX &&
		    mnl_attr_validate(a, MNL_TYPE_U32) >= 0) {
			ifindex = mnl_attr_get_u32(a);
			have |= 1;
		} else if (t == XDPFEAT_A_DEV_XDP_FEATURES &&
			   mnl_attr_validate(a, MNL_TYPE_U64) >= 0) {
			feat = mnl_attr_get_u64(a);
			have |= 2;
		}
	}
	if (have == 3 && ifindex > 0)
		d->cb(d->ctx, ifindex, feat & XDPFEAT_ACT_NDO_XMIT);
	return MNL_CB_OK;
}

int xdpfeat_dump(struct xdpfeat *x, xdpfeat_cb cb, void *ctx)
{
	struct dev_ctx d = { .family = x->family, .cb = cb, .ctx = ctx };
	char buf[NLREQ_BUF];
	struct nlmsghdr *nlh;

	if (x->veth)
		return vethwatch_dump(x->veth, cb, ctx);
	if (!x->family)
		return 0;
	nlh = genl_msg(buf, x->family, NLM_F_DUMP, XDPFEAT_CMD_DEV_GET);
	return nlreq_run(x->req, nlh, ++x->seq, dev_cb, &d);
}

int xdpfeat_read(struct xdpfeat *x, xdpfeat_cb cb, void *ctx)
{
	struct dev_ctx d = { .family = x->family, .cb = cb, .ctx = ctx };
	char buf[NLREQ_BUF];
	ssize_t n;
	int err;

	if (x->veth) {
		err = vethwatch_read(x->veth, cb, ctx);
		if (err == -ENOBUFS)
			x->overruns++;
		return err;
	}
	if (!x->ev)
		return 0;
	for (;;) {
		n = mnl_socket_recvfrom(x->ev, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == ENOBUFS)
				x->overruns++;
			return -errno;
		}
		/* Notifications carry sequence number and port id 0. */
		if (mnl_cb_run(buf, n, 0, 0, dev_cb, &d) < 0)
			return -errno;
	}
}

struct get_ctx {
	int ifindex;
	int xmit;
};

static void get_cb(void *ctx, int ifindex, bool xmit)
{
	struct get_ctx *g = ctx;

	if (ifindex == g->ifindex)
		g->xmit = xmit;
}

int xdpfeat_get(struct xdpfeat *x, int ifindex)
{
	struct get_ctx g = { .ifindex = ifindex, .xmit = -ENOENT };
	struct dev_ctx d = { .family = x->family, .cb = get_cb, .ctx = &g };
	char buf[NLREQ_BUF];
	struct nlmsghdr *nlh;
	int err;

	if (x->veth)
		return vethwatch_get(x->veth, ifindex);
	if (!x->family)
		return -ENOENT;
	nlh = genl_msg(buf, x->family, NLM_F_ACK, XDPFEAT_CMD_DEV_GET);
	mnl_attr_put_u32(nlh, XDPFEAT_A_DEV_IFINDEX, ifindex);
	err = nlreq_run(x->req, nlh, ++x->seq, dev_cb, &d);
	return err ? err : g.xmit;
}

/* ---- explaining ----------------------------------------------------------- */

/* The driver of a port (ETHTOOL_GDRVINFO), or "" when it does not say. */
static void driver_of(const char *name, char *drv, size_t len)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	*drv = '\0';
	if (fd < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&info;
	if (!ioctl(fd, SIOCETHTOOL, &ifr))
		snprintf(drv, len, "%s", info.driver);
	close(fd);
}

void xdpfeat_explain(const struct xdpfeat *x, int ifindex, const char *name,
		     char *buf, size_t len)
{
	struct vethpeer_ctx c;
	struct vethpeer p = { 0 };
	char drv[32];
	int err = vethpeer_open(&c);

	if (!err) {
		err = vethpeer_probe(&c, ifindex, &p);
		vethpeer_close(&c);
	}
	/* With the family, the kernel said the port cannot: a peer that
	 * cannot be read here (xfibctl without privileges) still has
	 * neither. */
	if (!err && p.veth && p.err && x->family) {
		p.err = 0;
		p.up = true;
		p.xdp = p.gro = false;
	}
	if (!err && p.veth) {
		vethpeer_why(&p, buf, len);
		return;
	}
	driver_of(name, drv, sizeof(drv));
	if (!strcmp(drv, "veth"))
		snprintf(buf, len,
			 "its veth peer has neither GRO nor an XDP program: enable GRO on the peer: ethtool -K <peer> gro on, or attach an XDP program to it");
	else
		snprintf(buf, len,
			 "its driver (%s) does not take XDP-redirected frames (no ndo_xdp_xmit)",
			 *drv ? drv : "unknown");
}
