// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: rtnetlink message streams through xfibd's own parsing
 * (ctl/xfibd/kernel/) into its RIB (ctl/xfibd/rib/), with the dataplane's maps
 * replaced by plain memory (tests/unit/ref/mem_dp.c). After every input
 * the RIB's invariants are checked (rib_check), and the neighbour-host map
 * against the RIB; the RIB is then torn down, and LeakSanitizer reports
 * anything it leaked.
 *
 * An input is a stream of netlink messages as they arrive on xfibd's
 * sockets (the seed corpus, tests/fuzz/corpus, is recorded by
 * tests/fuzz/make-corpus.sh); the fuzzer mutates headers, flags,
 * attributes and lengths.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "kernel/netlink.h"
#include "rib/rib.h"
#include "mem_dp.h"

/* Where the messages past the middle of buf begin (as nl_feed() steps
 * through them): an input is fed in two commits, so that the second can
 * undo what the first committed. */
static size_t second_half(const void *buf, size_t len)
{
	const struct nlmsghdr *nlh = buf;
	size_t off = 0, step;

	while (off < len / 2 && len - off >= sizeof(*nlh) &&
	       nlh->nlmsg_len >= sizeof(*nlh) && nlh->nlmsg_len <= len - off) {
		step = NLMSG_ALIGN(nlh->nlmsg_len);
		if (step >= len - off)
			return len;
		off += step;
		nlh = (const void *)((const char *)buf + off);
	}
	return off;
}

/* The RIB's invariants after a commit and after the lookup structures
 * would have taken it (rib_local4_settle); aborts if one is broken. */
static void commit_check(struct rib *r)
{
	char why[160];

	rib_commit(r);
	if (rib_reclaim(r))
		abort();
	if (!rib_check(r, why, sizeof(why))) {
		fprintf(stderr, "fuzz_netlink: invariant broken: %s\n", why);
		abort();
	}
	rib_local4_settle(r);
	if (!rib_check(r, why, sizeof(why))) {
		fprintf(stderr, "fuzz_netlink: invariant broken after settling: %s\n", why);
		abort();
	}
}

/* Every RIB neighbour has its host-map entry, and every entry its
 * neighbour, with the same index. */
static void check_hosts(const struct rib *r, const struct mem_dp *m)
{
	struct rib_neigh *n;
	size_t b, i, count = 0;

	for (i = 0; i < m->nhosts; i++) {
		struct rib_neigh_key k = { .ifindex = m->host[i].k.ifindex,
					   .family = m->host[i].k.family };

		memcpy(k.addr, m->host[i].k.addr, 16);
		n = htab_find(&r->neighs, &k);
		if (!n || n->idx != m->host[i].idx) {
			fprintf(stderr, "fuzz_netlink: host map entry %zu has no neighbour\n", i);
			abort();
		}
	}
	htab_for_each(&r->neighs, n, t, b)
		count++;
	if (count != m->nhosts) {
		fprintf(stderr, "fuzz_netlink: %zu neighbours, %zu host map entries\n",
			count, m->nhosts);
		abort();
	}
}

/* XFIB_FUZZ_STRICT=1: an input the parser finds a malformed message in
 * fails (the seed corpus, recorded from the kernel, must parse clean). */
static bool strict;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *s = getenv("XFIB_FUZZ_STRICT");

	log_level = -1; /* the parser's warnings are expected here */
	strict = s && !strcmp(s, "1");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mem_dp m;
	struct rib_dp dp;
	struct rib r;
	struct nl nl;
	size_t half;
	void *buf;

	/* Fresh zeroed arrays for each input. */
	mem_dp_open(&dp, &m, true);
	/* The parser reads netlink messages aligned, as recv() gives them. */
	buf = malloc(size ? size : 1);
	memcpy(buf, data, size);
	if (rib_init(&r, &dp, RT_TABLE_MAIN))
		abort();
	nl_init_offline(&nl, &r);
	half = second_half(buf, size);
	nl_feed(&nl, buf, half);
	commit_check(&r);
	nl_feed(&nl, (char *)buf + half, size - half);
	commit_check(&r);
	check_hosts(&r, &m);
	/* The rule messages again, as a dump of the family's rules (what
	 * notifications of rules only ask for), published. */
	nl.in_rule_dump = true;
	rib_rules_begin(&r, XFIB_V4);
	nl_feed(&nl, buf, size);
	rib_rules_end(&r, XFIB_V4, true);
	nl.in_rule_dump = false;
	if (rib_rules_publish(&r))
		abort();
	if (strict && nl.parse_errors) {
		fprintf(stderr, "fuzz_netlink: %llu malformed messages in a strict run\n",
			(unsigned long long)nl.parse_errors);
		abort();
	}
	nl_close(&nl);
	rib_fini(&r);
	free(buf);
	mem_dp_close(&dp);
	return 0;
}
