// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the dump reader (ctl/xfibd/kernel/nl_reader.c), against the
 * kernel: in a network namespace of its own, with N blackhole routes in
 * the main table, so that a route dump takes many parts, more than the
 * reader's ring holds.
 *
 * Cases: a dump read to its end hands out every part in order, the last
 * one flagged last and nothing after it, and holds every route once. A
 * dump whose parsing stops after the first part (as xfibd's does when a
 * callback fails) is drained: the reader reads it to its end, the socket
 * is left empty, and the next dump on it holds every route once, with its
 * own sequence number only. A caller slower than the kernel fills the
 * ring and the reader waits for it without losing or reordering a part.
 *
 * Needs root (a network namespace); exits 77 without.
 * Usage: unit_test_nl_reader.
 */
#define TESTLIB_SEED 0x6e6c7264ull
#include "testlib.h"

#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>
#include <libmnl/libmnl.h>

#include "kernel/nl_reader.h"

/* 43 parts on Linux 6.18, nearly three times the ring (10,000 took 16). */
#define NROUTES 30000
/* Route i is 198.18.0.0 + i, a blackhole /32. */
#define ROUTE_BASE 0xc6120000u

static struct mnl_socket *sock;
static unsigned int seq = 1;
static char req[8192];

static void skip(const char *why)
{
	printf("SKIP %s\n", why);
	exit(77);
}

/* Route i, in the main table. */
static void add_route(unsigned int i)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtmsg *rtm;
	char ack[8192];
	ssize_t n;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
	nlh->nlmsg_seq = ++seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 32;
	rtm->rtm_table = RT_TABLE_MAIN;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_UNIVERSE;
	rtm->rtm_type = RTN_BLACKHOLE;
	mnl_attr_put_u32(nlh, RTA_DST, htonl(ROUTE_BASE + i));
	CHECK(mnl_socket_sendto(sock, nlh, nlh->nlmsg_len) >= 0, "send: %s", strerror(errno));
	n = mnl_socket_recvfrom(sock, ack, sizeof(ack));
	CHECK(n > 0, "ack: %s", strerror(errno));
	CHECK(mnl_cb_run(ack, n, seq, mnl_socket_get_portid(sock), NULL, NULL) >= 0,
	      "route %u: %s", i, strerror(errno));
}

static unsigned int dump_request(void)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(req);
	struct rtmsg *rtm;

	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	CHECK(mnl_socket_sendto(sock, nlh, nlh->nlmsg_len) >= 0, "dump: %s", strerror(errno));
	return seq;
}

static unsigned char seen[NROUTES];

struct tally {
	unsigned int seq, routes, other_seq;
};

/* Counts the test's routes in a part; any message of another sequence
 * number is a leftover of an earlier dump. */
static void tally_part(struct tally *t, const struct nl_part *p)
{
	const struct nlmsghdr *nlh = p->buf;
	int len = (int)p->len;

	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);
		const struct nlattr *a;

		if (nlh->nlmsg_seq != t->seq)
			t->other_seq++;
		if (nlh->nlmsg_type != RTM_NEWROUTE || rtm->rtm_type != RTN_BLACKHOLE)
			continue;
		mnl_attr_for_each(a, nlh, sizeof(*rtm)) {
			__u32 i;

			if (mnl_attr_get_type(a) != RTA_DST)
				continue;
			i = ntohl(mnl_attr_get_u32(a)) - ROUTE_BASE;
			CHECK(i < NROUTES, "a route the test did not add");
			CHECK(!seen[i], "route %u twice in one dump", i);
			seen[i] = 1;
			t->routes++;
		}
	}
}

/* One dump through the reader. parse_parts: how many parts to parse
 * (the rest are released unread, as a failed parse drains them); pause:
 * wait after the first part, so that the reader fills the ring. Returns
 * the number of parts. */
static unsigned int dump(struct nl_reader *r, struct tally *t,
			 unsigned int parse_parts, bool pause)
{
	unsigned int parts = 0;
	struct nl_part *p;
	bool last_seen = false;

	memset(seen, 0, sizeof(seen));
	memset(t, 0, sizeof(*t));
	t->seq = dump_request();
	nl_reader_start(r, sock, t->seq);
	while ((p = nl_reader_next(r))) {
		CHECK(!last_seen, "a part after the last one");
		CHECK(p->len > 0, "part %u: read failed: %s", parts, strerror((int)-p->len));
		if (parts < parse_parts)
			tally_part(t, p);
		if (pause && !parts)
			nanosleep(&(struct timespec){ .tv_nsec = 100 * 1000 * 1000 }, NULL);
		last_seen = p->last;
		nl_reader_release(r);
		parts++;
	}
	nl_reader_join(r);
	CHECK(last_seen, "the dump ended without its last part");
	return parts;
}

/* The dump held every route once and nothing of another dump. */
static void all_routes(const struct tally *t)
{
	CHECK(t->routes == NROUTES, "%u of %u routes", t->routes, NROUTES);
	CHECK(!t->other_seq, "%u messages of another dump", t->other_seq);
}

static void socket_empty(void)
{
	char b[256];

	CHECK(recv(mnl_socket_get_fd(sock), b, sizeof(b), MSG_DONTWAIT) < 0 &&
		      (errno == EAGAIN || errno == EWOULDBLOCK),
	      "the socket holds more after the dump's last part");
}

int main(void)
{
	struct nl_reader *r;
	struct tally t;
	unsigned int i, parts;

	if (geteuid())
		skip("needs root: a network namespace of its own");
	if (unshare(CLONE_NEWNET))
		skip("unshare(CLONE_NEWNET) failed");
	sock = mnl_socket_open(NETLINK_ROUTE);
	CHECK(sock && !mnl_socket_bind(sock, 0, MNL_SOCKET_AUTOPID), "netlink socket");
	for (i = 0; i < NROUTES; i++)
		add_route(i);
	r = nl_reader_new();
	CHECK(r, "nl_reader_new");

	cur_test = "whole dump";
	parts = dump(r, &t, ~0u, false);
	all_routes(&t);
	/* More parts than the ring holds, or the wrap is not tested. */
	CHECK(parts > NL_RING_PARTS,
	      "only %u parts, the ring holds %u: too few to test its wrap",
	      parts, NL_RING_PARTS);
	socket_empty();
	printf("whole dump: %u routes in %u parts\n", t.routes, parts);

	cur_test = "drained dump";
	dump(r, &t, 1, false);
	CHECK(t.routes > 0 && t.routes < NROUTES, "first part: %u routes", t.routes);
	socket_empty();
	cur_test = "dump after a drained one";
	dump(r, &t, ~0u, false);
	all_routes(&t);

	cur_test = "slow caller";
	parts = dump(r, &t, ~0u, true);
	all_routes(&t);
	socket_empty();
	printf("slow caller: %u routes in %u parts\n", t.routes, parts);

	nl_reader_free(r);
	mnl_socket_close(sock);
	printf("ok\n");
	return 0;
}
