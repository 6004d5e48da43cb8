// SPDX-License-Identifier: GPL-2.0-only
/*
 * nlcapture: records rtnetlink traffic as xfibd receives it, for the
 * netlink fuzzer's seed corpus (tests/fuzz/make-corpus.sh).
 *
 *   nlcapture [--dump] OUT
 *
 * Subscribes to the multicast groups xfibd subscribes to and appends every
 * message received to OUT, byte for byte (nlmsghdr-framed, as read from
 * the socket), until SIGINT or SIGTERM. With --dump it first dumps links,
 * netconf, addresses, neighbours, nexthop objects, routes and rules into
 * OUT, the replies with their NLM_F_MULTI flags and NLMSG_DONE, as xfibd's
 * start-up dump sees them. Prints "ready" on stdout once subscribed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fib_rules.h>
#include <linux/if_addr.h>
#include <linux/neighbour.h>
#include <linux/netconf.h>
#include <linux/netlink.h>
#include <linux/nexthop.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int write_all(FILE *out, const void *buf, size_t len)
{
	return fwrite(buf, 1, len, out) == len ? 0 : -1;
}

/* One dump request, its replies appended to out up to NLMSG_DONE. */
static int dump(int fd, FILE *out, int type, int family, size_t hdrlen)
{
	static char buf[1 << 16];
	struct {
		struct nlmsghdr nh;
		char hdr[64];
	} req = { 0 };
	struct nlmsghdr *nh;
	ssize_t n;

	req.nh.nlmsg_len = NLMSG_LENGTH(hdrlen);
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = type;
	req.hdr[0] = family;
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		if (write_all(out, buf, n))
			return -EIO;
		for (nh = (void *)buf; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n))
			if (nh->nlmsg_type == NLMSG_DONE || nh->nlmsg_type == NLMSG_ERROR)
				return 0;
	}
}

int main(int argc, char **argv)
{
	static const unsigned int groups[] = {
		RTNLGRP_LINK,         RTNLGRP_NEIGH,        RTNLGRP_IPV4_IFADDR,
		RTNLGRP_IPV6_IFADDR,  RTNLGRP_IPV4_ROUTE,   RTNLGRP_IPV6_ROUTE,
		RTNLGRP_IPV4_NETCONF, RTNLGRP_IPV6_NETCONF, RTNLGRP_IPV4_RULE,
		RTNLGRP_IPV6_RULE,    RTNLGRP_NEXTHOP,
	};
	static char buf[1 << 16];
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct sigaction act = { .sa_handler = on_signal };
	int do_dump = argc == 3 && !strcmp(argv[1], "--dump");
	int fd, rcvbuf = 8 << 20;
	size_t i;
	FILE *out;

	if (argc != 2 + do_dump) {
		fprintf(stderr, "usage: nlcapture [--dump] OUT\n");
		return 2;
	}
	out = fopen(argv[1 + do_dump], "ab");
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (!out || fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror("nlcapture");
		return 1;
	}
	if (do_dump &&
	    (dump(fd, out, RTM_GETLINK, AF_UNSPEC, sizeof(struct ifinfomsg)) ||
	     dump(fd, out, RTM_GETNETCONF, AF_UNSPEC, sizeof(struct netconfmsg)) ||
	     dump(fd, out, RTM_GETADDR, AF_UNSPEC, sizeof(struct ifaddrmsg)) ||
	     dump(fd, out, RTM_GETNEIGH, AF_UNSPEC, sizeof(struct ndmsg)) ||
	     dump(fd, out, RTM_GETNEXTHOP, AF_UNSPEC, sizeof(struct nhmsg)) ||
	     dump(fd, out, RTM_GETROUTE, AF_UNSPEC, sizeof(struct rtmsg)) ||
	     dump(fd, out, RTM_GETRULE, AF_UNSPEC, sizeof(struct fib_rule_hdr)))) {
		perror("nlcapture: dump");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &groups[i],
			       sizeof(groups[i]))) {
			perror("nlcapture: membership");
			return 1;
		}
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 100) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0 && write_all(out, buf, n))
			return 1;
	}
	return fclose(out) ? 1 : 0;
}
