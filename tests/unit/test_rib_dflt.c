// SPDX-License-Identifier: GPL-2.0-only
/*
 * The nexthops of main's default routes (include/xfib/maps.h,
 * ctl/xfibd/rib/rib_nexthop.c): the RIB over arrays in memory, fed route
 * and nexthop object changes as the netlink code would, committed and
 * reclaimed after each step as fib.c does. After every step the RIB's
 * invariants hold (rib_check: among them, every default route of main
 * has a nexthop of the reserved range where its kind has one, and no
 * other route has one), and:
 *  - slot 0's answer for 0.0.0.0/0 (::/0) is in the reserved range, its
 *    entry that of the plain nexthop a /8 (/32) of the same path has,
 *    which is outside it;
 *  - a multipath default route's entry names the group another route of
 *    the same paths uses, and keeps it alive when that route goes;
 *  - replacing the default route (by another gateway, multipath, a
 *    nexthop object, a group object, and back), dropping a path of an
 *    IPv6 multipath one, changing the objects, keep it so;
 *  - more distinct default routes than the range holds: the rest go to
 *    the kernel (the unsupported nexthop), never to an unmarked index;
 *  - everything deleted, every index is free again;
 *  - a restarted daemon adopts the entries and its routes take the same
 *    indexes back.
 * ASan and UBSan (make test-unit).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "rib/rib_priv.h"
#include "mem_dp.h"

/* The RIB logs through ctl/lib/log.c, which is not linked here. */
int log_level = -1;

void log_msg(enum log_level level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}

static int failed;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			printf("FAIL %s:%d: ", __func__, __LINE__);        \
			printf(__VA_ARGS__);                               \
			printf("\n");                                      \
			if (++failed > 10)                                 \
				exit(1);                                   \
		}                                                          \
	} while (0)

static struct mem_dp mem;
static struct rib_dp dp;
static struct rib r;

/* A commit and the grace period after it, as fib_flush(); then the
 * invariants. */
static void step(const char *what)
{
	char why[200];

	rib_commit(&r);
	if (rib_reclaim(&r))
		abort();
	if (!rib_check(&r, why, sizeof(why)))
		CHECK(0, "%s: %s", what, why);
}

/* ---- routes and objects, as nl_route.c parses them --------------------------- */

#define DEV_A 2
#define DEV_B 3

static void addr_of(int af, const char *s, __u8 *out)
{
	memset(out, 0, 16);
	if (inet_pton(af, s, out) != 1)
		abort();
}

static struct rib_route_msg msg;

static void msg_start(int af, const char *dst, __u8 plen, __u32 metric)
{
	memset(&msg, 0, sizeof(msg));
	msg.key.family = af;
	msg.key.plen = plen;
	msg.key.table = RT_TABLE_MAIN;
	msg.key.priority = metric;
	addr_of(af, dst, msg.key.dst);
	msg.type = RTN_UNICAST;
	msg.paths = 1;
}

/* A path's key, as parse_path() gives it. */
static struct rib_path path(int af, const char *gw, int oif)
{
	struct rib_path p = { .weight = 1 };

	p.key.kind = XFIB_NH_GATEWAY;
	p.key.family = af;
	p.key.ifindex = oif;
	addr_of(af, gw, p.key.gw);
	return p;
}

static void route_via(int af, const char *dst, __u8 plen, __u32 metric,
		      const char *gw, int oif, enum rib_route_op op)
{
	msg_start(af, dst, plen, metric);
	msg.gw_family = af;
	addr_of(af, gw, msg.gw);
	msg.oif = oif;
	msg.ident = 1; /* one IPv4 alias per key here */
	rib_route_set(&r, &msg, op);
}

static void route_multipath(int af, const char *dst, __u8 plen, __u32 metric,
			    const char *gw1, int oif1, const char *gw2, int oif2,
			    enum rib_route_op op)
{
	msg_start(af, dst, plen, metric);
	msg.paths = msg.npath = 2;
	msg.path[0] = path(af, gw1, oif1);
	msg.path[1] = path(af, gw2, oif2);
	msg.ident = 1;
	rib_route_set(&r, &msg, op);
}

static void route_nhid(int af, const char *dst, __u8 plen, __u32 metric,
		       __u32 nhid, enum rib_route_op op)
{
	msg_start(af, dst, plen, metric);
	msg.nhid = nhid;
	msg.ident = 1;
	rib_route_set(&r, &msg, op);
}

static void route_del(int af, const char *dst, __u8 plen, __u32 metric)
{
	msg_start(af, dst, plen, metric);
	msg.ident = 1;
	/* IPv6 finds its variant by nexthop: delete each there is. */
	if (af == AF_INET) {
		rib_route_del(&r, &msg);
		return;
	}
	for (;;) {
		struct rib_route *rt = route_find(&r, &msg.key);
		struct rib_variant *v = rt ? rt->vars : NULL;

		if (!v)
			return;
		variant_remove(&r, v);
	}
}

static void nhobj_via(__u32 id, int af, const char *gw, int oif)
{
	struct rib_nhobj_msg m = { .id = id };

	m.path = path(af, gw, oif);
	rib_nhobj_set(&r, &m);
}

static void nhobj_group(__u32 id, __u32 a, __u32 b)
{
	struct rib_nhobj_msg m = { .id = id, .is_group = true, .ngrp = b ? 2 : 1 };

	m.path.weight = 1;
	m.grp[0].id = a;
	m.grp[0].weight = 1;
	m.grp[1].id = b;
	m.grp[1].weight = 1;
	rib_nhobj_set(&r, &m);
}

/* ---- what packets would read ---------------------------------------------------- */

/* Slot 0's answer for main's (dst, plen); 0 if it has none. */
static __u32 answer(int af, const char *dst, __u8 plen)
{
	__u8 a[16];
	__u32 nh = 0;

	addr_of(af, dst, a);
	if (ptree_get(&r.tree[af == AF_INET6][RIB_TCLASS_MAIN], a, plen, &nh))
		return 0;
	return nh;
}

/* Entries a and b send packets the same way (kind, device, neighbour,
 * group, gateway), a default route's and another route's. */
static void same_entry(const char *what, __u32 a, __u32 b)
{
	const struct xfib_nexthop *x = &r.nh_map[a], *y = &r.nh_map[b];

	CHECK(XFIB_NH_IS_DFLT(a), "%s: the default route's nexthop %u is out of the range", what, a);
	CHECK(!XFIB_NH_IS_DFLT(b), "%s: another route's nexthop %u is in the range", what, b);
	CHECK(a != b, "%s: one index %u for both", what, a);
	CHECK(x->kind == y->kind && x->ifindex == y->ifindex &&
	      x->neigh == y->neigh && x->group == y->group &&
	      !memcmp(x->gw, y->gw, 16) && x->kind != XFIB_NH_NONE,
	      "%s: entries %u (kind %u dev %u neigh %u group %u) and %u (kind %u dev %u neigh %u group %u) differ",
	      what, a, x->kind, x->ifindex, x->neigh, x->group, b, y->kind,
	      y->ifindex, y->neigh, y->group);
}

/* Slot 0's default answer is the default route's, its entry that of
 * the route of dst/plen (same path). */
static void dflt_like(const char *what, int af, const char *dst, __u8 plen)
{
	const char *any = af == AF_INET ? "0.0.0.0" : "::";

	same_entry(what, answer(af, any, 0), answer(af, dst, plen));
}

static __u32 dflt_in_use(void)
{
	return XFIB_NH_DFLT_COUNT - r.nh_dflt_nfree;
}

/* ---- the cases ------------------------------------------------------------------ */

static void link_up(int ifindex, const char *name)
{
	struct rib_link_msg l = { .ifindex = ifindex, .mtu = 1500,
				  .ifflags = IFF_UP | IFF_RUNNING };

	snprintf(l.name, sizeof(l.name), "%s", name);
	l.mac[0] = 2;
	l.mac[5] = ifindex;
	rib_link_set(&r, &l);
}

static void cases_single(void)
{
	__u32 a, a2;

	route_via(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A, RIB_ROUTE_PREPEND);
	route_via(AF_INET, "10.0.0.0", 8, 0, "198.18.0.1", DEV_A, RIB_ROUTE_PREPEND);
	route_via(AF_INET6, "::", 0, 1024, "2001:db8::1", DEV_A, RIB_ROUTE_PREPEND);
	route_via(AF_INET6, "2001:db8:100::", 48, 1024, "2001:db8::1", DEV_A,
		  RIB_ROUTE_PREPEND);
	step("default routes");
	dflt_like("ipv4 default", AF_INET, "10.0.0.0", 8);
	dflt_like("ipv6 default", AF_INET6, "2001:db8:100::", 48);
	CHECK(dflt_in_use() == 2, "%u default route nexthops in use, want 2", dflt_in_use());

	/* A second default of a higher metric: its own index, the answer
	 * the first's still. */
	a = answer(AF_INET, "0.0.0.0", 0);
	route_via(AF_INET, "0.0.0.0", 0, 100, "198.18.1.1", DEV_B, RIB_ROUTE_PREPEND);
	route_via(AF_INET, "10.1.0.0", 16, 0, "198.18.1.1", DEV_B, RIB_ROUTE_PREPEND);
	step("a second ipv4 default");
	CHECK(answer(AF_INET, "0.0.0.0", 0) == a, "the default's answer moved");
	CHECK(dflt_in_use() == 3, "%u default route nexthops in use, want 3", dflt_in_use());
	/* The first deleted: the second answers, by its own index. */
	route_del(AF_INET, "0.0.0.0", 0, 0);
	step("the first ipv4 default deleted");
	dflt_like("the second ipv4 default", AF_INET, "10.1.0.0", 16);
	a2 = answer(AF_INET, "0.0.0.0", 0);
	CHECK(a2 != a, "the second default answers with the first's index");
	/* Replaced by the first gateway again, then deleted and re-added. */
	route_via(AF_INET, "0.0.0.0", 0, 100, "198.18.0.1", DEV_A, RIB_ROUTE_REPLACE);
	step("ipv4 default replaced");
	dflt_like("the replaced ipv4 default", AF_INET, "10.0.0.0", 8);
	route_del(AF_INET, "0.0.0.0", 0, 100);
	step("ipv4 default deleted");
	CHECK(!answer(AF_INET, "0.0.0.0", 0), "a deleted default still answers");
	route_via(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A, RIB_ROUTE_PREPEND);
	step("ipv4 default added again");
	dflt_like("the re-added ipv4 default", AF_INET, "10.0.0.0", 8);
}

static void cases_multipath(void)
{
	__u32 g, a;

	/* The /16's group and the default's alias of it. */
	route_multipath(AF_INET, "10.2.0.0", 16, 0, "198.18.0.1", DEV_A,
			"198.18.1.1", DEV_B, RIB_ROUTE_PREPEND);
	route_multipath(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A,
			"198.18.1.1", DEV_B, RIB_ROUTE_REPLACE);
	step("multipath ipv4 default");
	dflt_like("multipath ipv4 default", AF_INET, "10.2.0.0", 16);
	a = answer(AF_INET, "0.0.0.0", 0);
	CHECK(r.nh_map[a].kind == XFIB_NH_GROUP, "the multipath default's kind %u", r.nh_map[a].kind);
	g = r.nh_map[a].group;
	/* The /16 goes: the alias keeps the group. */
	route_del(AF_INET, "10.2.0.0", 16, 0);
	step("the group's other route deleted");
	CHECK(answer(AF_INET, "0.0.0.0", 0) == a && r.nh_map[a].kind == XFIB_NH_GROUP &&
	      r.nh_map[a].group == g, "the multipath default's entry changed");
	CHECK(r.grp_map[g].nh[0] && r.grp_map[g].nh[255], "group %u lost its buckets", g);
	/* Back to one path. */
	route_via(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A, RIB_ROUTE_REPLACE);
	step("ipv4 default single again");
	dflt_like("single ipv4 default", AF_INET, "10.0.0.0", 8);
	CHECK(r.ngroups == 0, "%u groups left", r.ngroups);

	/* IPv6: a path of a multipath default deleted (as the kernel says
	 * it: a single-path route deleted). */
	route_via(AF_INET6, "2001:db8:101::", 48, 1024, "2001:db8:1::1", DEV_B,
		  RIB_ROUTE_PREPEND);
	route_multipath(AF_INET6, "::", 0, 1024, "2001:db8::1", DEV_A,
			"2001:db8:1::1", DEV_B, RIB_ROUTE_REPLACE);
	step("multipath ipv6 default");
	a = answer(AF_INET6, "::", 0);
	CHECK(XFIB_NH_IS_DFLT(a) && r.nh_map[a].kind == XFIB_NH_GROUP,
	      "the multipath ipv6 default answers %u, kind %u", a, r.nh_map[a].kind);
	msg_start(AF_INET6, "::", 0, 1024);
	msg.gw_family = AF_INET6;
	addr_of(AF_INET6, "2001:db8::1", msg.gw);
	msg.oif = DEV_A;
	rib_route_del(&r, &msg);
	step("a path of the ipv6 default deleted");
	dflt_like("the ipv6 default's last path", AF_INET6, "2001:db8:101::", 48);
	route_del(AF_INET6, "2001:db8:101::", 48, 1024);
	route_via(AF_INET6, "::", 0, 1024, "2001:db8::1", DEV_A, RIB_ROUTE_REPLACE);
	step("ipv6 default single again");
	dflt_like("single ipv6 default", AF_INET6, "2001:db8:100::", 48);
}

static void cases_nhobj(void)
{
	__u32 a, g;

	nhobj_via(10, AF_INET, "198.18.0.1", DEV_A);
	nhobj_via(11, AF_INET, "198.18.1.1", DEV_B);
	nhobj_group(20, 10, 11);
	step("objects");
	route_nhid(AF_INET, "0.0.0.0", 0, 0, 10, RIB_ROUTE_REPLACE);
	step("ipv4 default by object 10");
	dflt_like("default by object 10", AF_INET, "10.0.0.0", 8);
	/* The object changes: the default follows, by an index of its own. */
	nhobj_via(10, AF_INET, "198.18.1.1", DEV_B);
	step("object 10 changed");
	dflt_like("default by object 10, changed", AF_INET, "10.1.0.0", 16);
	nhobj_via(10, AF_INET, "198.18.0.1", DEV_A);
	step("object 10 back");
	/* By the group object, which another route uses too. */
	route_nhid(AF_INET, "10.3.0.0", 16, 0, 20, RIB_ROUTE_PREPEND);
	route_nhid(AF_INET, "0.0.0.0", 0, 0, 20, RIB_ROUTE_REPLACE);
	step("ipv4 default by group 20");
	dflt_like("default by group 20", AF_INET, "10.3.0.0", 16);
	a = answer(AF_INET, "0.0.0.0", 0);
	g = r.nh_map[a].group;
	/* The group's members change: rewritten in place, the default's
	 * entry unchanged. */
	nhobj_group(20, 10, 0);
	step("group 20 of one member");
	CHECK(answer(AF_INET, "0.0.0.0", 0) == a && r.nh_map[a].group == g,
	      "the default's entry changed with its group's members");
	CHECK(r.grp_map[g].nh[0] == r.grp_map[g].nh[255] &&
	      !XFIB_NH_IS_DFLT(r.grp_map[g].nh[0]),
	      "group %u's buckets: %u .. %u", g, r.grp_map[g].nh[0], r.grp_map[g].nh[255]);
	nhobj_group(20, 10, 11);
	route_del(AF_INET, "10.3.0.0", 16, 0);
	step("group 20's other route deleted");
	CHECK(answer(AF_INET, "0.0.0.0", 0) == a && r.nh_map[a].group == g &&
	      r.nh_map[a].kind == XFIB_NH_GROUP, "the default lost its group");
	/* The object deleted: the kernel deletes the routes by it. */
	rib_nhobj_del(&r, 20);
	step("group 20 deleted");
	CHECK(!answer(AF_INET, "0.0.0.0", 0), "a default by a deleted object answers");
	CHECK(r.ngroups == 0, "%u groups left", r.ngroups);
	route_via(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A, RIB_ROUTE_PREPEND);
	step("ipv4 default by gateway");
	rib_nhobj_del(&r, 10);
	rib_nhobj_del(&r, 11);
	step("objects deleted");
}

/* More distinct defaults than the range holds: the rest are the
 * kernel's, and the answer stays marked. */
static void cases_full(void)
{
	__u32 i, unsup = rib_nh_unsupported(&r), before = dflt_in_use();
	__u32 no_room = r.no_room;
	char gw[32];

	for (i = 1; i <= XFIB_NH_DFLT_COUNT + 4; i++) {
		snprintf(gw, sizeof(gw), "198.18.2.%u", i);
		route_via(AF_INET, "0.0.0.0", 0, 1000 + i, gw, DEV_A, RIB_ROUTE_PREPEND);
	}
	step("defaults beyond the range");
	CHECK(r.nh_dflt_nfree == 0, "%u left free", r.nh_dflt_nfree);
	/* 4 more than the range holds, and those before them in use */
	CHECK(r.no_room == no_room + 4 + before, "%u routes without room, want %u",
	      r.no_room, no_room + 4 + before);
	for (i = 1; i <= XFIB_NH_DFLT_COUNT + 4; i++) {
		struct rib_route *rt;

		msg_start(AF_INET, "0.0.0.0", 0, 1000 + i);
		rt = route_find(&r, &msg.key);
		CHECK(rt && (XFIB_NH_IS_DFLT(rt->vars->nh->idx) ||
			     rt->vars->nh->idx == unsup),
		      "default of metric %u: nexthop %u", 1000 + i,
		      rt ? rt->vars->nh->idx : 0);
	}
	dflt_like("the first default with the range full", AF_INET, "10.0.0.0", 8);
	for (i = 1; i <= XFIB_NH_DFLT_COUNT + 4; i++)
		route_del(AF_INET, "0.0.0.0", 0, 1000 + i);
	step("those defaults deleted");
	CHECK(dflt_in_use() == before, "%u in use, want %u", dflt_in_use(), before);
	CHECK(r.no_room == no_room, "%u routes without room after, want %u", r.no_room, no_room);
}

/* A restarted xfibd adopts the entries; its routes take them back. */
static void case_adopt(void)
{
	__u32 a4 = answer(AF_INET, "0.0.0.0", 0), a6;
	__u32 p4 = answer(AF_INET, "10.0.0.0", 8);

	route_multipath(AF_INET6, "::", 0, 1024, "2001:db8::1", DEV_A,
			"2001:db8:1::1", DEV_B, RIB_ROUTE_REPLACE);
	step("before the restart");
	rib_fini(&r);
	if (rib_init(&r, &dp, RT_TABLE_MAIN) || rib_adopt(&r))
		abort();
	CHECK(dflt_in_use() == 2, "%u default route entries adopted, want 2", dflt_in_use());
	rib_mark_stale(&r);
	link_up(DEV_A, "a");
	link_up(DEV_B, "b");
	route_via(AF_INET, "0.0.0.0", 0, 0, "198.18.0.1", DEV_A, RIB_ROUTE_DUMPED);
	route_via(AF_INET, "10.0.0.0", 8, 0, "198.18.0.1", DEV_A, RIB_ROUTE_DUMPED);
	route_via(AF_INET, "10.1.0.0", 16, 0, "198.18.1.1", DEV_B, RIB_ROUTE_DUMPED);
	route_via(AF_INET6, "2001:db8:100::", 48, 1024, "2001:db8::1", DEV_A,
		  RIB_ROUTE_DUMPED);
	route_multipath(AF_INET6, "::", 0, 1024, "2001:db8::1", DEV_A,
			"2001:db8:1::1", DEV_B, RIB_ROUTE_DUMPED);
	rib_sweep_stale(&r);
	step("after the restart's sync");
	CHECK(answer(AF_INET, "0.0.0.0", 0) == a4 && answer(AF_INET, "10.0.0.0", 8) == p4,
	      "ipv4: default %u, /8 %u after the restart, %u and %u before",
	      answer(AF_INET, "0.0.0.0", 0), answer(AF_INET, "10.0.0.0", 8), a4, p4);
	a6 = answer(AF_INET6, "::", 0);
	CHECK(XFIB_NH_IS_DFLT(a6) && r.nh_map[a6].kind == XFIB_NH_GROUP,
	      "ipv6 multipath default after the restart: %u kind %u", a6, r.nh_map[a6].kind);
	dflt_like("ipv4 default after the restart", AF_INET, "10.0.0.0", 8);
}

static void cases_flush(void)
{
	route_del(AF_INET, "0.0.0.0", 0, 0);
	route_del(AF_INET, "10.0.0.0", 8, 0);
	route_del(AF_INET, "10.1.0.0", 16, 0);
	route_del(AF_INET6, "::", 0, 1024);
	route_del(AF_INET6, "2001:db8:100::", 48, 1024);
	step("everything deleted");
	CHECK(r.nh_dflt_nfree == XFIB_NH_DFLT_COUNT, "%u default route indexes free", r.nh_dflt_nfree);
	CHECK(r.nexthops.count == 1, "%zu nexthops left (the unsupported one only)",
	      (size_t)r.nexthops.count);
	CHECK(r.ngroups == 0, "%u groups left", r.ngroups);
}

int main(void)
{
	mem_dp_open(&dp, &mem, false);
	if (rib_init(&r, &dp, RT_TABLE_MAIN))
		abort();
	link_up(DEV_A, "a");
	link_up(DEV_B, "b");
	cases_single();
	cases_multipath();
	cases_nhobj();
	cases_full();
	case_adopt();
	cases_flush();
	rib_fini(&r);
	if (failed) {
		printf("%d checks failed\n", failed);
		return 1;
	}
	printf("ok: default routes' nexthops\n");
	return 0;
}
