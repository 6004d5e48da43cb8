// SPDX-License-Identifier: GPL-2.0-only
/*
 * The classification of policy rules for forwarded packets
 * (ctl/xfibd/rib/rib_rule_class.c): every selector and action alone, with
 * and without `not`, and the combinations where one decision must win
 * over another (a selector that never matches over one only the kernel
 * can evaluate; an attribute xfib does not know over everything). Each
 * case names the kernel behaviour it stands for; each result's reason
 * must be one of its class (the table in include/xfib/rules.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fib_rules.h>

#include "rib/rib.h"

static int failed, cases;
/* Whether netfilter may mark packets before routing: the cases below
 * are with, but for test_fwmark_unmarked's. */
static bool marks = true;

#define CLASS_OF(name, cls, text) [XFIB_RULE_R_##name] = XFIB_RULE_##cls,
static const __u8 reason_class[XFIB_RULE_R_COUNT] = {
	XFIB_RULE_REASONS(CLASS_OF)
};

static struct xfib_rule lookup(__u32 table)
{
	struct xfib_rule x;

	memset(&x, 0, sizeof(x));
	x.action = FR_ACT_TO_TBL;
	x.table = table;
	x.suppress_prefixlen = x.suppress_ifgroup = 0xffffffff;
	return x;
}

static void expect(const char *what, struct xfib_rule x, __u8 cls,
		   __u8 reason)
{
	struct xfib_rule again;

	cases++;
	rib_rule_classify(&x, marks);
	if (x.cls != cls || x.reason != reason) {
		printf("FAIL %s: class %u reason %u, want class %u reason %u\n",
		       what, x.cls, x.reason, cls, reason);
		failed++;
	}
	if (x.reason >= XFIB_RULE_R_COUNT || reason_class[x.reason] != x.cls) {
		printf("FAIL %s: reason %u is not of class %u\n", what,
		       x.reason, x.cls);
		failed++;
	}
	/* Published again (a link changed): the same answer. */
	again = x;
	rib_rule_classify(&again, marks);
	if (memcmp(&again, &x, sizeof(x))) {
		printf("FAIL %s: not the same when classified again\n", what);
		failed++;
	}
}

#define EXACT(what, x) expect(what, x, XFIB_RULE_EXACT, XFIB_RULE_R_NONE)
#define ALWAYS(what, x) expect(what, x, XFIB_RULE_EXACT, XFIB_RULE_R_ALWAYS)
#define NEVER(what, x, r) expect(what, x, XFIB_RULE_NEVER, XFIB_RULE_R_##r)
#define KERNEL(what, x, r) expect(what, x, XFIB_RULE_KERNEL, XFIB_RULE_R_##r)

static void test_actions(void)
{
	static const __u8 known[] = { FR_ACT_TO_TBL, FR_ACT_GOTO, FR_ACT_NOP,
				      FR_ACT_BLACKHOLE, FR_ACT_UNREACHABLE,
				      FR_ACT_PROHIBIT };
	struct xfib_rule x;
	size_t i;

	for (i = 0; i < sizeof(known); i++) {
		x = lookup(254);
		x.action = known[i];
		EXACT("known action", x);
	}
	/* FR_ACT_RES3, FR_ACT_RES4: fib_rules_lookup would hand them to
	 * the family's action, which returns -EINVAL. */
	x = lookup(254);
	x.action = FR_ACT_RES3;
	KERNEL("reserved action", x, ACTION);
	x.action = 42;
	KERNEL("unknown action", x, ACTION);
	rib_rule_classify(&x, marks);
	if (x.reason_arg != 42) {
		printf("FAIL unknown action: reason_arg %u, want 42\n", x.reason_arg);
		failed++;
	}
}

/* Selectors a forwarded packet carries: evaluated exactly. */
static void test_exact_selectors(void)
{
	struct xfib_rule x;

	EXACT("lookup main", lookup(254));
	x = lookup(100);
	x.src_len = 24;
	x.src[0] = 198;
	EXACT("from", x);
	x = lookup(100);
	x.dst_len = 64;
	EXACT("to", x);
	x = lookup(100);
	x.tos = 0x10;
	EXACT("tos", x);
	x = lookup(100);
	x.ip_proto = 6;
	EXACT("ipproto", x);
	x = lookup(100);
	x.flags = XFIB_RULE_F_SPORT;
	x.sport_lo = 10, x.sport_hi = 20;
	EXACT("sport", x);
	x = lookup(100);
	x.flags = XFIB_RULE_F_DPORT;
	x.dport_lo = x.dport_hi = 80;
	EXACT("dport", x);
	x = lookup(100);
	x.flags = XFIB_RULE_F_IIF;
	x.iif = 3;
	EXACT("iif of a device", x);
	x = lookup(254);
	x.suppress_prefixlen = 0;
	EXACT("suppress_prefixlength", x);
	/* fwmark 0x5/0: (mark ^ flowi_mark) & 0 is 0 for any mark. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_FWMARK;
	x.fwmark = 5;
	EXACT("fwmark with mask 0", x);
	/* uid 0 is every forwarded packet's (sock_net_uid(net, NULL)). */
	x = lookup(100);
	x.flags = XFIB_RULE_F_UID;
	x.uid_start = 0, x.uid_end = 10;
	EXACT("uidrange with uid 0", x);
	x = lookup(100);
	x.flags = XFIB_RULE_F_INVERT | XFIB_RULE_F_IIF;
	x.iif = 3;
	x.src_len = 8;
	EXACT("not from, iif", x);
}

/* Selectors no forwarded packet satisfies; inverted, every one does. */
static void test_never(void)
{
	struct xfib_rule x;

	x = lookup(100);
	x.flags = XFIB_RULE_F_OIF;
	NEVER("oif", x, OIF);
	x.flags |= XFIB_RULE_F_OIF_DETACHED;
	NEVER("oif of no device", x, OIF);
	x.flags |= XFIB_RULE_F_INVERT;
	ALWAYS("not oif", x);

	x = lookup(100);
	x.flags = XFIB_RULE_F_IIF | XFIB_RULE_F_IIF_DETACHED;
	NEVER("iif of no device", x, IIF_MISSING);
	x.flags |= XFIB_RULE_F_INVERT;
	ALWAYS("not iif of no device", x);

	x = lookup(100);
	x.flags = XFIB_RULE_F_IIF | XFIB_RULE_F_IIF_LOOPBACK;
	x.iif = 1;
	NEVER("iif lo", x, IIF_LOOPBACK);
	x.flags |= XFIB_RULE_F_INVERT;
	ALWAYS("not iif lo", x);

	x = lookup(100);
	x.flags = XFIB_RULE_F_UID;
	x.uid_start = 1000, x.uid_end = 2000;
	NEVER("uidrange without 0", x, UID);
	x.flags |= XFIB_RULE_F_INVERT;
	ALWAYS("not uidrange without 0", x);

	/* An iif selector without the iif flag set is no selector: the
	 * flags say whether the name was given. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_IIF_DETACHED;
	EXACT("detached without iif", x);
}

/* Selectors only the kernel can evaluate. */
static void test_kernel(void)
{
	struct xfib_rule x;

	x = lookup(51820);
	x.flags = XFIB_RULE_F_FWMARK | XFIB_RULE_F_INVERT;
	x.fwmark = 0xca6c, x.fwmask = 0xffffffff;
	KERNEL("not fwmark (wg-quick)", x, FWMARK);
	x.flags &= ~XFIB_RULE_F_INVERT;
	x.fwmark = 0x80000, x.fwmask = 0xff0000;
	KERNEL("fwmark/mask (Tailscale)", x, FWMARK);
	x = lookup(0);
	x.flags = XFIB_RULE_F_L3MDEV;
	x.l3mdev = 1;
	KERNEL("l3mdev", x, L3MDEV);
	x = lookup(100);
	x.flags = XFIB_RULE_F_TUN_ID;
	x.tun_id = 7;
	KERNEL("tun_id", x, TUN_ID);
	x = lookup(100);
	x.flags = XFIB_RULE_F_REALMS;
	x.realms = 3 << 16 | 4;
	KERNEL("realms", x, REALMS);
	x = lookup(100);
	x.flags = XFIB_RULE_F_UNKNOWN;
	x.reason_arg = 26;
	KERNEL("unknown attribute", x, ATTR);
	/* fib4_rule_suppress: the device group of the route found, which
	 * the walk reads from the port's entry. */
	x = lookup(254);
	x.suppress_ifgroup = 5;
	EXACT("suppress_ifgroup", x);
	x.suppress_prefixlen = 0;
	EXACT("suppress_ifgroup with suppress_prefixlength", x);
	x = lookup(100);
	x.suppress_ifgroup = 0;
	EXACT("suppress_ifgroup 0 (the default group)", x);
	/* ... but not the table's slot */
	x.tslot = XFIB_TSLOT_NONE;
	KERNEL("suppress_ifgroup to a table without a slot", x, TABLE);
	/* a selector the kernel decides still decides */
	x = lookup(100);
	x.suppress_ifgroup = 5;
	x.flags = XFIB_RULE_F_TUN_ID;
	x.tun_id = 7;
	KERNEL("suppress_ifgroup with tun_id", x, TUN_ID);
	/* A table that has no slot (more than XFIB_TABLE_SLOTS - 1). */
	x = lookup(100);
	x.tslot = XFIB_TSLOT_NONE;
	KERNEL("table without a slot", x, TABLE);
	x.action = FR_ACT_BLACKHOLE;
	EXACT("no lookup: the slot does not matter", x);
	/* Never matching, its table does not matter. */
	x = lookup(100);
	x.tslot = XFIB_TSLOT_NONE;
	x.flags = XFIB_RULE_F_OIF;
	NEVER("oif to a table without a slot", x, OIF);
}

/* The result's MATCH_NONE flag is what the walk reads. */
static void expect_none(const char *what, struct xfib_rule x, bool none)
{
	rib_rule_classify(&x, marks);
	if (!!(x.flags & XFIB_RULE_F_MATCH_NONE) != none) {
		printf("FAIL %s: match-none %s, want %s\n", what,
		       x.flags & XFIB_RULE_F_MATCH_NONE ? "set" : "clear",
		       none ? "set" : "clear");
		failed++;
	}
}

/* Without netfilter marking before routing, every forwarded packet's
 * mark is 0: (mark ^ 0) & mask decides each fwmark selector. */
static void test_fwmark_unmarked(void)
{
	struct xfib_rule x;

	marks = false;
	x = lookup(51820);
	x.flags = XFIB_RULE_F_FWMARK | XFIB_RULE_F_INVERT;
	x.fwmark = 0xca6c, x.fwmask = 0xffffffff;
	ALWAYS("not fwmark 0xca6c (wg-quick), mark 0", x);
	expect_none("not fwmark 0xca6c, mark 0", x, true);
	x.flags &= ~XFIB_RULE_F_INVERT;
	EXACT("fwmark 0xca6c, mark 0", x);
	expect_none("fwmark 0xca6c, mark 0", x, true);
	x.fwmark = 0x80000, x.fwmask = 0xff00;
	EXACT("fwmark 0x80000/0xff00, mark 0", x);
	expect_none("fwmark 0x80000/0xff00, mark 0", x, false);
	x.fwmark = 0, x.fwmask = 0xffffffff;
	EXACT("fwmark 0, mark 0", x);
	expect_none("fwmark 0, mark 0", x, false);
	/* The other selectors still count when the mark matches. */
	x.flags |= XFIB_RULE_F_TUN_ID;
	KERNEL("fwmark 0 and tun_id, mark 0", x, TUN_ID);
	marks = true;
}

/* Which decision wins when a rule has several. */
static void test_precedence(void)
{
	struct xfib_rule x;

	/* fib_rule_match and-s: oif false makes the mark irrelevant. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_OIF | XFIB_RULE_F_FWMARK;
	x.fwmark = 1, x.fwmask = 1;
	NEVER("oif and fwmark", x, OIF);
	x.flags |= XFIB_RULE_F_INVERT;
	ALWAYS("not (oif and fwmark)", x);
	x.flags &= ~XFIB_RULE_F_OIF;
	KERNEL("not fwmark", x, FWMARK);
	/* Matching every packet, the action decides. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_OIF | XFIB_RULE_F_INVERT;
	x.action = 42;
	KERNEL("not oif with an unknown action", x, ACTION);
	/* Never matching, the action does not matter. */
	x.flags &= ~XFIB_RULE_F_INVERT;
	NEVER("oif with an unknown action", x, OIF);
	/* An unknown attribute may change what the others mean. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_OIF | XFIB_RULE_F_UNKNOWN;
	KERNEL("oif and an unknown attribute", x, ATTR);
	x = lookup(100);
	x.flags = XFIB_RULE_F_UID | XFIB_RULE_F_IIF | XFIB_RULE_F_IIF_LOOPBACK;
	x.uid_start = 5, x.uid_end = 6;
	NEVER("iif lo before uidrange", x, IIF_LOOPBACK);
	/* The flag saying no selector matches follows the last answer. */
	x = lookup(100);
	x.flags = XFIB_RULE_F_MATCH_NONE;
	EXACT("stale match-none flag", x);
}

int main(void)
{
	test_actions();
	test_exact_selectors();
	test_never();
	test_kernel();
	test_precedence();
	test_fwmark_unmarked();
	if (failed) {
		printf("%d of %d cases failed\n", failed, cases);
		return 1;
	}
	printf("rule classification: %d cases passed\n", cases);
	return 0;
}
