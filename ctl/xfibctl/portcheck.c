// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether a device can be a routed port: xfib forwards IP between
 * Ethernet ports the kernel routes on, with an ifindex below
 * XFIB_PORT_MAX. A bridge is routed on by attaching its members: frames
 * arrive on them and leave by them (the bridge itself takes no XDP
 * program's redirected frames). A bond member hands its frames to its
 * master, which xfib does not route through, and a device without an
 * Ethernet address (tun, ipip, sit, wireguard) has no header for the
 * dataplane to parse or rewrite.
 */
#include <errno.h>
#include <string.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "xfibctl.h"

struct link_info {
	unsigned int flags; /* IFF_* */
	unsigned short type; /* ARPHRD_* */
	int addr_len;	     /* IFLA_ADDRESS length, -1 without one */
	__u32 master;	     /* 0: none */
	char name[IF_NAMESIZE];
	char kind[32];	     /* IFLA_INFO_KIND, "" without one */
};

static int linkinfo_cb(const struct nlattr *a, void *data)
{
	struct link_info *li = data;

	if (mnl_attr_get_type(a) == IFLA_INFO_KIND &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
		snprintf(li->kind, sizeof(li->kind), "%s", mnl_attr_get_str(a));
	return MNL_CB_OK;
}

static int link_attr_cb(const struct nlattr *a, void *data)
{
	struct link_info *li = data;

	switch (mnl_attr_get_type(a)) {
	case IFLA_ADDRESS:
		li->addr_len = mnl_attr_get_payload_len(a);
		break;
	case IFLA_MASTER:
		if (mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			li->master = mnl_attr_get_u32(a);
		break;
	case IFLA_IFNAME:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
			snprintf(li->name, sizeof(li->name), "%s",
				 mnl_attr_get_str(a));
		break;
	case IFLA_LINKINFO:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) >= 0)
			mnl_attr_parse_nested(a, linkinfo_cb, li);
		break;
	}
	return MNL_CB_OK;
}

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	struct link_info *li = data;

	if (nlh->nlmsg_type != RTM_NEWLINK ||
	    mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_ERROR;
	li->flags = ifi->ifi_flags;
	li->type = ifi->ifi_type;
	mnl_attr_parse(nlh, sizeof(*ifi), link_attr_cb, li);
	return MNL_CB_OK;
}

/* The device ifindex as rtnetlink describes it. */
static int link_get(struct mnl_socket *nl, int ifindex, struct link_info *li)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	unsigned int seq = 1, portid = mnl_socket_get_portid(nl);
	struct ifinfomsg *ifi;
	ssize_t n;

	memset(li, 0, sizeof(*li));
	li->addr_len = -1;
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (mnl_cb_run(buf, n, seq, portid, link_cb, li) < 0)
		return -errno;
	return 0;
}

/* 0 if the device can be a routed port, else -EINVAL with the reason
 * printed. */
static int port_check_one(struct mnl_socket *nl, const char *name, int ifindex)
{
	struct link_info li, m;
	int err;

	/* xfib_ifaces and xfib_port_stats are arrays indexed by ifindex. */
	if ((__u32)ifindex >= XFIB_PORT_MAX) {
		err_cmd("%s: ifindex %d is beyond the %u ports xfib forwards "
			"between (ifindex 1 to %u): the dataplane would hand "
			"every packet to the kernel", name, ifindex,
			XFIB_PORT_MAX, XFIB_PORT_MAX - 1);
		return -EINVAL;
	}
	err = link_get(nl, ifindex, &li);
	if (err) {
		err_cmd("%s: read the device: %s", name, strerror(-err));
		return err;
	}
	if (li.master) {
		err = link_get(nl, li.master, &m);
		if (err) {
			err_cmd("%s: read its master device: %s", name,
				strerror(-err));
			return err;
		}
		if (!strcmp(m.kind, "bond") || !strcmp(m.kind, "team")) {
			err_cmd("%s: a port of %s %s, not a routed port "
				"(its frames go to the %s)",
				name, m.kind, m.name, m.kind);
			return -EINVAL;
		}
	}
	if (!strcmp(li.kind, "bridge")) {
		err_cmd("%s: a bridge: attach its member ports instead "
			"(xfib routes through the bridge on them)", name);
		return -EINVAL;
	}
	if (li.flags & IFF_SLAVE) {
		err_cmd("%s: a bond member (IFF_SLAVE), not a routed port", name);
		return -EINVAL;
	}
	if (li.type != ARPHRD_ETHER || li.addr_len != 6) {
		err_cmd("%s: no Ethernet (MAC) address, not a port xfib can "
			"route on", name);
		return -EINVAL;
	}
	return 0;
}

int ports_routable(char **names, int n, const int *ifindex)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_ROUTE);
	int i, err = 0;

	if (!nl || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		err = -errno;
		err_cmd("rtnetlink: %s", strerror(errno));
		goto out;
	}
	for (i = 0; i < n && !err; i++)
		err = port_check_one(nl, names[i], ifindex[i]);
out:
	if (nl)
		mnl_socket_close(nl);
	return err;
}
