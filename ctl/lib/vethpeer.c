// SPDX-License-Identifier: GPL-2.0-only
/* Whether a veth takes XDP-redirected frames, from its peer: see vethpeer.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>

#include "nlreq.h"
#include "vethpeer.h"

int vethpeer_open(struct vethpeer_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->nl = nlreq_open(NETLINK_ROUTE, 0);
	return c->nl ? 0 : -errno;
}

void vethpeer_close(struct vethpeer_ctx *c)
{
	if (c->nl)
		mnl_socket_close(c->nl);
	c->nl = NULL;
	nsid_cache_free(&c->ns);
}

/* ---- one link, as rtnetlink gives it -------------------------------------- */

struct link_info {
	unsigned int flags;
	bool veth, xdp;
	int link, netnsid; /* IFLA_LINK; IFLA_LINK_NETNSID or VETHPEER_OURS */
	char name[IF_NAMESIZE];
};

static void parse_linkinfo(const struct nlattr *nest, struct link_info *li)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_type_valid(a, IFLA_INFO_MAX) < 0)
			continue;
		if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
		    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			li->veth = !strcmp(mnl_attr_get_str(a), "veth");
	}
}

/* A native (driver-mode) program: the one veth_xdp_set runs for. A
 * generic one leaves the veth's NAPI off. */
static void parse_xdp(const struct nlattr *nest, struct link_info *li)
{
	const struct nlattr *a;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_type_valid(a, IFLA_XDP_MAX) < 0)
			continue;
		if (mnl_attr_get_type(a) == IFLA_XDP_DRV_PROG_ID &&
		    mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			li->xdp = mnl_attr_get_u32(a) != 0;
	}
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifm = mnl_nlmsg_get_payload(nlh);
	struct link_info *li = data;
	const struct nlattr *a;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifm))
		return MNL_CB_OK;
	li->flags = ifm->ifi_flags;
	mnl_attr_for_each(a, nlh, sizeof(*ifm)) {
		if (mnl_attr_type_valid(a, IFLA_MAX) < 0)
			continue;
		switch (mnl_attr_get_type(a)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
				snprintf(li->name, sizeof(li->name), "%s",
					 mnl_attr_get_str(a));
			break;
		case IFLA_LINK:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				li->link = mnl_attr_get_u32(a);
			break;
		case IFLA_LINK_NETNSID:
			if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
				li->netnsid = (int)mnl_attr_get_u32(a);
			break;
		case IFLA_LINKINFO:
			if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
				parse_linkinfo(a, li);
			break;
		case IFLA_XDP:
			if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
				parse_xdp(a, li);
			break;
		}
	}
	return MNL_CB_OK;
}

bool vethpeer_is_veth(const struct nlmsghdr *nlh)
{
	struct link_info li = { 0 };

	link_cb(nlh, &li);
	return li.veth;
}

/* Link ifindex of the namespace nsid names (ours: VETHPEER_OURS); another
 * one is read through IFLA_TARGET_NETNSID, without entering it. */
static int get_link(struct vethpeer_ctx *c, int ifindex, int nsid,
		    struct link_info *li)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifm;

	memset(li, 0, sizeof(*li));
	li->netnsid = VETHPEER_OURS;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifm));
	ifm->ifi_index = ifindex;
	if (nsid != VETHPEER_OURS)
		mnl_attr_put_u32(nlh, IFLA_TARGET_NETNSID, (__u32)nsid);
	return nlreq_run(c->nl, nlh, ++c->seq, link_cb, li);
}

/* The peer's active GRO (dev->features, which veth_set_features follows),
 * by the ethtool ioctl in the peer's namespace; the peer named by its
 * ifindex there, the moment before. */
static int read_gro(struct vethpeer_ctx *c, struct vethpeer *p)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GGRO };
	struct ifreq ifr = { 0 };
	int fd, err = 0;

	if (p->nsid == VETHPEER_OURS) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			p->step = "creating a socket";
			return -errno;
		}
	} else {
		fd = nsid_socket(c->nl, &c->seq, &c->ns, p->nsid, AF_INET,
				 SOCK_DGRAM, &p->step);
		if (fd < 0)
			return fd;
	}
	ifr.ifr_ifindex = p->peer;
	if (ioctl(fd, SIOCGIFNAME, &ifr)) {
		err = -errno;
		p->step = "naming the peer (SIOCGIFNAME)";
	} else {
		snprintf(p->name, sizeof(p->name), "%s", ifr.ifr_name);
		ifr.ifr_data = (void *)&ev;
		if (ioctl(fd, SIOCETHTOOL, &ifr)) {
			err = -errno;
			p->step = "reading the peer's GRO (ETHTOOL_GGRO)";
		} else {
			p->gro = ev.data;
		}
	}
	close(fd);
	return err;
}

int vethpeer_probe(struct vethpeer_ctx *c, int ifindex, struct vethpeer *p)
{
	struct link_info li;
	int err;

	memset(p, 0, sizeof(*p));
	p->ifindex = ifindex;
	p->nsid = VETHPEER_OURS;
	err = get_link(c, ifindex, VETHPEER_OURS, &li);
	if (err || !li.veth)
		return err;
	p->veth = true;
	snprintf(p->ifname, sizeof(p->ifname), "%s", li.name);
	p->peer = li.link;
	p->nsid = li.netnsid;
	if (p->peer <= 0) {
		/* Between the deletions of the pair's two ends. */
		p->err = -ENOENT;
		p->step = "finding its peer";
		return 0;
	}
	err = get_link(c, p->peer, p->nsid, &li);
	if (err) {
		p->err = err;
		p->step = "reading the peer (RTM_GETLINK)";
		return 0;
	}
	snprintf(p->name, sizeof(p->name), "%s", li.name);
	p->up = li.flags & IFF_UP;
	p->xdp = li.xdp;
	/* Down, or with an XDP program: GRO changes nothing. */
	if (p->up && !p->xdp)
		p->err = read_gro(c, p);
	return 0;
}

/* ---- explaining ----------------------------------------------------------- */

#define FIX "enable GRO on the peer: ethtool -K %s gro on, or attach an XDP program to it"

void vethpeer_why(const struct vethpeer *p, char *buf, size_t len)
{
	char peer[64], fix[128];
	bool ours = p->nsid == VETHPEER_OURS && *p->name;

	if (ours)
		snprintf(peer, sizeof(peer), "%s", p->name);
	else
		snprintf(peer, sizeof(peer), "(ifindex %d in another network namespace)",
			 p->peer);
	snprintf(fix, sizeof(fix), FIX, ours ? p->name : "<peer>");
	if (p->err == -ENOENT && p->peer > 0 && p->nsid != VETHPEER_OURS)
		snprintf(buf, len,
			 "its veth peer %s cannot be read: no namespace with its nsid %d is named in /run/netns or held by a process, so xfib cannot tell whether it has GRO on",
			 peer, p->nsid);
	else if (p->err == -EPERM)
		snprintf(buf, len,
			 "its veth peer %s cannot be read: %s: %s (entering its namespace to read its GRO needs CAP_SYS_ADMIN)",
			 peer, p->step, strerror(-p->err));
	else if (p->err)
		snprintf(buf, len, "its veth peer %s cannot be read: %s: %s",
			 peer, p->step, strerror(-p->err));
	else if (!p->up)
		snprintf(buf, len, "its veth peer %s is down: bring it up, and %s",
			 peer, fix);
	else if (!p->xdp && !p->gro)
		snprintf(buf, len,
			 "its veth peer %s has neither GRO nor an XDP program: %s",
			 peer, fix);
	else
		snprintf(buf, len,
			 "the kernel does not count it as a redirect target although its veth peer %s is up with %s: set the peer's GRO again (ethtool -K %s gro off, then gro on)",
			 peer, p->xdp ? "an XDP program" : "GRO on",
			 ours ? p->name : "<peer>");
}
