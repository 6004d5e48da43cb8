/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every outcome of the program (include/xfib/counters.h), the test that
 * reaches it, and what xfibctl lookup (ctl/lib/dplookup.c, the same
 * include/xfib/decide.h over the same maps) can know of it. test_fwd and
 * test_ctgate each fail for a reason without a class here, and for a
 * reason of theirs that no case reached: a new outcome needs a case.
 */
#ifndef XFIB_TESTS_REASONS_H
#define XFIB_TESTS_REASONS_H

#include <stdbool.h>
#include <stdio.h>
#include "xfib/counters.h"

enum reason_class {
	RC_NONE,   /* not classified: a failure */
	/* test_fwd. The destination, the source and the ingress port
	 * decide: xfibctl lookup ADDR --from SRC --iif PORT must say the
	 * same as the counter that moved. */
	RC_LOOKUP,
	/* test_fwd. What only the frame shows (L2, the IP header, TTL,
	 * size, L4 checksum) or a port detached between the program's check
	 * and its redirect: xfibctl lookup, which has no frame, must say
	 * what the program does with a well-formed frame of the same
	 * addresses on the same port. */
	RC_FRAME,
	/* test_ctgate: the conntrack gate, whose cases need conntrack
	 * entries. */
	RC_CTGATE,
};

static const enum reason_class reason_class[XFIB_REASON_COUNT] = {
	[XFIB_FWD_V4] = RC_LOOKUP,
	[XFIB_FWD_V6] = RC_LOOKUP,
	[XFIB_DROP_BLACKHOLE] = RC_LOOKUP,
	[XFIB_PASS_NOT_IP] = RC_FRAME,
	[XFIB_PASS_VLAN] = RC_FRAME,
	[XFIB_PASS_MALFORMED] = RC_FRAME,
	[XFIB_PASS_IP_OPTIONS] = RC_FRAME,
	[XFIB_PASS_IPV6_HBH] = RC_FRAME,
	[XFIB_PASS_NOT_FOR_US] = RC_FRAME,
	[XFIB_PASS_NO_IFACE] = RC_LOOKUP,
	[XFIB_PASS_FWD_DISABLED] = RC_LOOKUP,
	[XFIB_PASS_RP_FILTER] = RC_LOOKUP,
	[XFIB_PASS_SPECIAL_ADDR] = RC_LOOKUP,
	[XFIB_PASS_TTL] = RC_FRAME,
	[XFIB_PASS_NO_FIB] = RC_LOOKUP,
	[XFIB_PASS_NO_ROUTE] = RC_LOOKUP,
	[XFIB_PASS_LOCAL] = RC_LOOKUP,
	[XFIB_PASS_UNREACHABLE] = RC_LOOKUP,
	[XFIB_PASS_UNSUPPORTED] = RC_LOOKUP,
	[XFIB_PASS_NEIGH] = RC_LOOKUP,
	[XFIB_PASS_EGRESS_DOWN] = RC_LOOKUP,
	[XFIB_PASS_EGRESS_NOT_ATTACHED] = RC_LOOKUP,
	[XFIB_PASS_HAIRPIN] = RC_LOOKUP,
	[XFIB_PASS_MTU] = RC_FRAME,
	[XFIB_PASS_LOCAL_SOURCE] = RC_LOOKUP,
	[XFIB_DROP_REDIRECT] = RC_FRAME,
	[XFIB_PASS_NETFILTER] = RC_CTGATE,
	[XFIB_PASS_CT_NEW] = RC_CTGATE,
	[XFIB_PASS_CT_TCP_FLAGS] = RC_CTGATE,
	[XFIB_PASS_CT_INVALID] = RC_CTGATE,
	[XFIB_PASS_CT_NAT] = RC_CTGATE,
	[XFIB_PASS_CT_PROTO] = RC_CTGATE,
	[XFIB_PASS_CT_LEARN] = RC_CTGATE,
	[XFIB_PASS_CT_UNAVAILABLE] = RC_CTGATE,
	[XFIB_PASS_STALE] = RC_LOOKUP,
	[XFIB_PASS_IPV6_DISABLED] = RC_LOOKUP,
	[XFIB_PASS_EGRESS_NO_XMIT] = RC_LOOKUP,
	[XFIB_PASS_XFRM] = RC_LOOKUP,
	[XFIB_PASS_CSUM_PARTIAL] = RC_FRAME,
	[XFIB_FWD_NAT_V4] = RC_CTGATE,
	[XFIB_FWD_NAT_V6] = RC_CTGATE,
	[XFIB_PASS_RULE] = RC_LOOKUP,
	/* A bridge member's state and its bridge's are in the maps; the
	 * FDB entry of the frame's source MAC only in the frame. */
	[XFIB_PASS_BRIDGE] = RC_LOOKUP,
	[XFIB_PASS_BRIDGE_LEARN] = RC_FRAME,
	[XFIB_PASS_FDB] = RC_LOOKUP,
};

#define RC_BIT(cls) (1u << (cls))

/*
 * For the test that reaches the reasons of the classes in the mask
 * classes (RC_BIT()s): a FAIL line per reason without a class, or of one
 * of those classes and not in reached[]. Returns the number of failures.
 * excused[] (may be NULL) names, with why, the reasons that may go
 * unreached on this machine: a note instead.
 */
static int reasons_check(unsigned int classes, const bool *reached,
			 const char *const *names,
			 const char *const *excused)
{
	int bad = 0, k;

	for (k = 0; k < XFIB_REASON_COUNT; k++) {
		if (reason_class[k] == RC_NONE) {
			printf("FAIL reason %s has no class in tests/prog/reasons.h\n",
			       names[k]);
			bad++;
		} else if ((classes & RC_BIT(reason_class[k])) && !reached[k]) {
			if (excused && excused[k]) {
				printf("note no case reached %s: %s\n", names[k],
				       excused[k]);
				continue;
			}
			printf("FAIL no case reached %s\n", names[k]);
			bad++;
		}
	}
	return bad;
}

#endif /* XFIB_TESTS_REASONS_H */
