/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The policy rules' walk (include/xfib/rules.h), written once for the XDP
 * program and for xfibctl lookup and verify (ctl/lib/dplookup.c), as the
 * kernel walks them for a packet it routes: net/core/fib_rules.c
 * fib_rules_lookup() and fib_rule_match(), with the families' matches and
 * actions (net/ipv4/fib_rules.c, net/ipv6/fib6_rules.c).
 *
 * Where it starts. xfibd publishes a walk only when the first rule is a
 * plain "lookup local" (else the family goes to the kernel), and the
 * family's main instance (table slot 0) is main merged with local, local
 * first. Its answer for the destination is therefore local's if local
 * has a route (a local, broadcast, anycast or multicast one: xfibd
 * publishes no walk while local holds any other kind), and then the
 * packet is the kernel's whatever the rules say; otherwise local has
 * none, the first rule falls through, and slot 0's answer is main's: the
 * walk starts at the second rule with it in hand, and "lookup main"
 * costs nothing.
 *
 * Each rule: its selectors, and-ed, then inverted by "not"; xfibd has
 * already decided the ones a forwarded packet's flow fixes (oif, uid,
 * fwmark with mark 0, an iif naming no device or a loopback one) and
 * sets XFIB_RULE_F_MATCH_NONE where one of them fails. A rule of class
 * KERNEL hands the packet to the kernel unless the selectors xfib can
 * read rule it out (and it has no "not"); a matching rule's action:
 *  - lookup: in main, slot 0's answer; in another table, its ranges or
 *    its instance (include/xfib/tables.h). No route, or a throw route,
 *    goes on to the next rule; so does an answer suppress_prefixlength
 *    rules out (the prefix that answered is no longer than it: a range
 *    keeps its prefix's length; slot 0 keeps none, but its answers from
 *    main's default routes have nexthop indexes of their own,
 *    XFIB_NH_IS_DFLT, which is all suppress_prefixlength 0 needs; an
 *    instance keeps none either, and the kernel decides), unless it is an
 *    error route's (blackhole, unreachable, prohibit): the kernel
 *    suppresses only a lookup that succeeded; and so does an answer
 *    suppress_ifgroup rules out, by the group of its device (struct
 *    xfib_iface.group; xfib_rule_ifgroup() below says which device);
 *  - goto: on at the target's index (always a later rule: the kernel
 *    refuses a goto backwards), or, unresolved, at the next;
 *  - nop: on at the next rule;
 *  - blackhole, unreachable, prohibit: to the kernel, which drops or
 *    answers with the ICMP error.
 * The end of the rules without an answer: no route (the kernel's).
 * Where a run of rules on the source alone starts (include/xfib/rules.h),
 * one bisection of the run's source ranges skips the rules of the run
 * that cannot match.
 *
 * The same walk checks an IPv4 packet's source, on a port with rp_filter
 * and, without it, where the source may be local (__fib_validate_source:
 * the flow reversed, as from the loopback device: iif 1, ports swapped;
 * rules with "iif lo", which that lookup matches and no forwarded packet
 * does, then go to the kernel).
 *
 * The includer defines the accessors below for its struct xfib_env, as
 * for include/xfib/decide.h.
 */
#ifndef XFIB_RULE_WALK_H
#define XFIB_RULE_WALK_H

#include <linux/types.h>
#include <linux/fib_rules.h>
#include "maps.h"
#include "rules.h"
#include "tables.h"
#include "flow_hash.h"
#include "counters.h"

#ifndef XFIB_INLINE
#define XFIB_INLINE static inline __attribute__((always_inline))
#endif

struct xfib_env;

/* xfib_tables[fam * XFIB_TABLE_SLOTS + slot] as one word; 0 if absent. */
XFIB_INLINE __u64 xfib_env_table(struct xfib_env *env, __u32 fam, __u32 slot);
/* xfib_table_answer() below, which the program runs as a function of
 * its own (checked once by the verifier). */
XFIB_INLINE __u32 xfib_env_table_answer(struct xfib_env *env, __u32 fam,
					__u32 slot, const struct xfib_rflow *f,
					__u32 *ans);
/* Nexthop entry idx, or NULL (as for include/xfib/decide.h). */
XFIB_INLINE const struct xfib_nexthop *xfib_env_nexthop(struct xfib_env *env,
							 __u32 idx);
/* Multipath group idx, or NULL (as for include/xfib/decide.h). */
XFIB_INLINE const struct xfib_nh_group *xfib_env_group(struct xfib_env *env,
							__u32 idx);
/* The port's state (xfib_ifaces), or NULL for a device xfib does not
 * know (as for include/xfib/decide.h). */
XFIB_INLINE const struct xfib_iface *xfib_env_iface(struct xfib_env *env,
						     __u32 ifindex);
/* xfib_rule_run_next() below for run x's ranges in set and the flow's
 * source, which the program too runs as a function of its own (the
 * verifier then checks the bisection's paths once, not each with the
 * rest of the rule). */
XFIB_INLINE __u32 xfib_env_rule_run(struct xfib_env *env,
				    const struct xfib_rule_set *set,
				    const struct xfib_rule *x,
				    const struct xfib_rflow *f);
/* xfib_rule_ifgroup() below, which the program too runs as a function of
 * its own (the verifier then checks its paths once, not with each of the
 * rule's). */
XFIB_INLINE int xfib_env_rule_ifgroup(struct xfib_env *env, __u32 fam,
				      __u32 group, __u32 nh_idx,
				      __u32 flow_hash, __u32 *hashed);
/* The answer of the dir24_8 (IPv4) or trie6 (IPv6) instance in
 * map-in-map slot inst for the flow's destination: a nexthop index, 0
 * for no route, ~0 if the instance cannot be read (a slot being
 * replaced: the kernel answers). */
XFIB_INLINE __u32 xfib_env_table_inst(struct xfib_env *env, __u32 fam,
				      __u32 inst, const struct xfib_rflow *f);
/* The family's range pool entry idx, or NULL. */
XFIB_INLINE const struct xfib_tr4 *xfib_env_tr4(struct xfib_env *env, __u32 idx);
XFIB_INLINE const struct xfib_tr6 *xfib_env_tr6(struct xfib_env *env, __u32 idx);

/* A big-endian word of a rule's address, as a host-order integer: one
 * load and a byte swap (the addresses are 8-byte aligned in the rule). */
XFIB_INLINE __u64 xfib_be64_at(const __u8 *p)
{
	__u64 v;

	__builtin_memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* Whether the flow's address (hi, lo) is in the rule's prefix p/len. */
XFIB_INLINE int xfib_rule_prefix_match(const __u8 *p, __u8 len, __u64 hi,
				       __u64 lo, int v4)
{
	__u64 m;

	if (!len)
		return 1;
	if (v4) {
		/* the IPv4 address in the top half of the first word */
		m = (0xffffffffull << (32 - len)) & 0xffffffffull;
		return (((xfib_be64_at(p) >> 32) ^ lo) & m) == 0;
	}
	if (len <= 64) {
		m = len == 64 ? ~0ull : ~(~0ull >> len);
		return ((xfib_be64_at(p) ^ hi) & m) == 0;
	}
	if (xfib_be64_at(p) != hi)
		return 0;
	m = len >= 128 ? ~0ull : ~(~0ull >> (len - 64));
	return ((xfib_be64_at(p + 8) ^ lo) & m) == 0;
}

/*
 * Whether rule x's selectors match flow f (before "not"). -1: only the
 * kernel can tell (protocol or ports behind an IPv6 extension header; an
 * "iif lo" rule for the source's lookup).
 */
XFIB_INLINE int xfib_rule_selectors(const struct xfib_rule *x,
				    const struct xfib_rflow *f, int v4)
{
	__u16 flags = x->flags;

	if (f->reverse && (flags & XFIB_RULE_F_IIF_LOOPBACK))
		return -1;
	if (flags & XFIB_RULE_F_MATCH_NONE)
		return 0;
	if ((flags & XFIB_RULE_F_IIF) && x->iif != f->iif)
		return 0;
	if (!xfib_rule_prefix_match(x->src, x->src_len, f->src_hi, f->src_lo, v4))
		return 0;
	if (!xfib_rule_prefix_match(x->dst, x->dst_len, f->dst_hi, f->dst_lo, v4))
		return 0;
	if (x->tos && (f->tos & x->tos_mask) != x->tos)
		return 0;
	if ((x->ip_proto || (flags & (XFIB_RULE_F_SPORT | XFIB_RULE_F_DPORT))) &&
	    f->l4_unknown)
		return -1;
	if (x->ip_proto && x->ip_proto != f->proto)
		return 0;
	if ((flags & XFIB_RULE_F_SPORT) &&
	    (f->sport < x->sport_lo || f->sport > x->sport_hi))
		return 0;
	if ((flags & XFIB_RULE_F_DPORT) &&
	    (f->dport < x->dport_lo || f->dport > x->dport_hi))
		return 0;
	return 1;
}

/* Bisection over a table's 2^log2n ranges from off (as bsearch4/6):
 * nexthop index in the low 24 bits, prefix length above. */
XFIB_INLINE __u32 xfib_table_lookup4(struct xfib_env *env, __u32 off,
				     __u32 log2n, __u32 key)
{
	const struct xfib_tr4 *r;
	__u32 pos = 0;
	int i;

#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (i = XFIB_TPOOL4_LOG2 - 1; i >= 0; i--) {
		__u32 probe;

		if ((__u32)i >= log2n)
			continue;
		probe = pos + (1u << i);
		r = xfib_env_tr4(env, (off + probe) & (XFIB_TPOOL4_SIZE - 1));
		if (!r)
			return XFIB_NH_IDX_NONE;
		if (r->start <= key)
			pos = probe;
	}
	r = xfib_env_tr4(env, (off + pos) & (XFIB_TPOOL4_SIZE - 1));
	return r ? r->nh_plen : XFIB_NH_IDX_NONE;
}

XFIB_INLINE __u32 xfib_table_lookup6(struct xfib_env *env, __u32 off,
				     __u32 log2n, __u64 hi, __u64 lo)
{
	const struct xfib_tr6 *r;
	__u32 pos = 0;
	int i;

#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (i = XFIB_TPOOL6_LOG2 - 1; i >= 0; i--) {
		__u32 probe;

		if ((__u32)i >= log2n)
			continue;
		probe = pos + (1u << i);
		r = xfib_env_tr6(env, (off + probe) & (XFIB_TPOOL6_SIZE - 1));
		if (!r)
			return XFIB_NH_IDX_NONE;
		if (r->hi < hi || (r->hi == hi && r->lo <= lo))
			pos = probe;
	}
	r = xfib_env_tr6(env, (off + pos) & (XFIB_TPOOL6_SIZE - 1));
	return r ? XFIB_TR4_PACK(r->nh, r->plen) : XFIB_NH_IDX_NONE;
}

/*
 * Table slot's answer for the flow's destination, packed as
 * XFIB_TR4_PACK (nexthop index, prefix length), into *ans; XFIB_NEXT, or
 * XFIB_PASS_RULE for a table the kernel keeps to itself.
 */
XFIB_INLINE __u32 xfib_table_answer(struct xfib_env *env, __u32 fam,
				    __u32 slot, const struct xfib_rflow *f,
				    __u32 *ans)
{
	__u64 w = xfib_env_table(env, fam, slot & (XFIB_TABLE_SLOTS - 1));
	struct xfib_table_desc d;

	__builtin_memcpy(&d, &w, sizeof(d));
	*ans = XFIB_NH_IDX_NONE;
	if (d.state == XFIB_TABLE_EMPTY)
		return XFIB_NEXT;
	if (d.state == XFIB_TABLE_INSTANCE) {
		__u32 nh;

		/* Only the family's own table algorithm, in a slot of the
		 * rules' tables: anything else is a descriptor this
		 * program does not know. */
		if (d.algo != (fam == XFIB_V4 ? XFIB_ALGO_DIR24_8 : XFIB_ALGO_TRIE6) ||
		    d.off < XFIB_SLOTS || d.off >= XFIB_INST_SLOTS)
			return XFIB_PASS_RULE;
		nh = xfib_env_table_inst(env, fam, d.off, f);
		if (nh == ~0u)
			return XFIB_PASS_RULE;
		*ans = XFIB_TR4_PACK(nh, XFIB_TABLE_PLEN_UNKNOWN);
		return XFIB_NEXT;
	}
	if (d.state != XFIB_TABLE_READY)
		return XFIB_PASS_RULE;
	if (fam == XFIB_V4)
		*ans = xfib_table_lookup4(env, d.off, d.log2n, (__u32)f->dst_lo);
	else
		*ans = xfib_table_lookup6(env, d.off, d.log2n, f->dst_hi, f->dst_lo);
	return XFIB_NEXT;
}

/* The rule a walk that reaches the first rule of a run, of 2^log2n
 * ranges from set->range[off], goes on at for source (hi, lo):
 * bisection over the run's ranges (include/xfib/rules.h). */
XFIB_INLINE __u32 xfib_rule_run_next(const struct xfib_rule_set *set,
				     __u32 off, __u32 log2n, __u64 hi, __u64 lo)
{
	const struct xfib_rule_range *r;
	__u32 pos = 0;
	int b;

#ifdef __clang__
#pragma clang loop unroll(full)
#endif
	for (b = XFIB_RUN_RANGES_LOG2 - 1; b >= 0; b--) {
		__u32 probe;

		if ((__u32)b >= log2n)
			continue;
		probe = pos + (1u << b);
		r = &set->range[(off + probe) & (XFIB_RUN_RANGES - 1)];
		if (r->hi < hi || (r->hi == hi && r->lo <= lo))
			pos = probe;
	}
	return set->range[(off + pos) & (XFIB_RUN_RANGES - 1)].rule;
}

/*
 * suppress_ifgroup (fib4_rule_suppress(), fib6_rule_suppress()): whether
 * a rule's suppress_ifgroup group suppresses the answer nh_idx, which a
 * lookup found (not no route): 1 suppressed, 0 not, -1 only the kernel
 * can tell. The device whose group is compared is, for IPv4, that of the
 * route's first path (fib_info_nhc(fi, 0)), whichever path the flow then
 * takes: a multipath group's nexthop names it (include/xfib/maps.h); for
 * IPv6, that of the path the lookup selected (rt6i_idev, after the
 * multipath selection): the member the packet's flow hash picks, as
 * xfib_group_member() (include/xfib/decide.h) will. A blackhole,
 * unreachable or prohibit route's lookup failed (the kernel suppresses
 * no error), and is never suppressed; an answer xfib cannot place on a
 * device (local, unsupported) or a device xfib does not know is the
 * kernel's. *hashed: 1 for an IPv6 multipath answer (judged on the
 * member flow_hash picks), else 0.
 */
XFIB_INLINE int xfib_rule_ifgroup(struct xfib_env *env, __u32 fam,
				  __u32 group, __u32 nh_idx, __u32 flow_hash,
				  __u32 *hashed)
{
	const struct xfib_nexthop *nh = xfib_env_nexthop(env, nh_idx);
	const struct xfib_nh_group *g;
	const struct xfib_iface *dev;

	*hashed = 0;
	if (!nh)
		return -1;
	if (nh->kind == XFIB_NH_BLACKHOLE || nh->kind == XFIB_NH_UNREACHABLE)
		return 0;
	if (nh->kind == XFIB_NH_GROUP && fam != XFIB_V4) {
		g = xfib_env_group(env, nh->group);
		if (!g)
			return -1;
		nh = xfib_env_nexthop(env, g->nh[xfib_flow_bucket(flow_hash)]);
		if (!nh)
			return -1;
		*hashed = 1;
	}
	if (nh->kind != XFIB_NH_GATEWAY && nh->kind != XFIB_NH_CONNECTED &&
	    (nh->kind != XFIB_NH_GROUP || fam != XFIB_V4))
		return -1;
	dev = xfib_env_iface(env, nh->ifindex);
	if (!dev)
		return -1;
	return dev->group == group;
}

/* One rule, at w->rule (or, where a run of rules on the source starts,
 * the run's first that matches): 1 when the walk is decided (w->reason),
 * 0 to go on at w->rule. */
XFIB_INLINE int xfib_rule_step(struct xfib_env *env, __u32 fam,
			       const struct xfib_rule_set *set,
			       const struct xfib_rflow *f, struct xfib_rwalk *w)
{
	const struct xfib_nexthop *nh;
	const struct xfib_rule *x;
	__u32 i = w->rule, ans, r, hashed;
	int m;

	if (i >= set->hdr.count || i >= XFIB_RULES_MAX)
		goto end;
	x = &set->rule[i];
	if (x->run) {
		r = xfib_env_rule_run(env, set, x, f);
		if (r == ~0u)
			goto kernel;
		i = r;
		if (i >= set->hdr.count || i >= XFIB_RULES_MAX)
			goto end;
		x = &set->rule[i];
	}
	w->rule = i + 1;
	m = xfib_rule_selectors(x, f, fam == XFIB_V4);
	if (m < 0)
		goto kernel;
	/* A rule only the kernel can tell about: its other selectors may
	 * still rule it out, unless "not" turns what they say around. */
	if (x->cls == XFIB_RULE_KERNEL) {
		if (m || (x->flags & XFIB_RULE_F_INVERT))
			goto kernel;
		return 0;
	}
	if (x->flags & XFIB_RULE_F_INVERT)
		m = !m;
	if (!m)
		return 0;
	switch (x->action) {
	case FR_ACT_TO_TBL:
		if (x->tslot == XFIB_TSLOT_LOCAL)
			return 0;
		if (x->tslot == XFIB_TSLOT_MAIN) {
			if (w->main_nh == XFIB_NH_IDX_NONE)
				return 0;
			/* Slot 0 keeps no prefix lengths, only which answers
			 * are a /0's (include/xfib/maps.h): xfibd gives it
			 * suppress_prefixlength 0 and no other (those get a
			 * copy of main in a slot of their own). */
			if (x->suppress_prefixlen != 0xffffffffu) {
				if (x->suppress_prefixlen)
					goto kernel;
				if (XFIB_NH_IS_DFLT(w->main_nh)) {
					w->suppressed = 1;
					return 0;
				}
			}
			ans = w->main_nh;
			goto ifgroup;
		}
		if (x->tslot >= XFIB_TABLE_SLOTS)
			goto kernel;
		r = xfib_env_table_answer(env, fam, x->tslot, f, &ans);
		if (r != XFIB_NEXT)
			goto kernel;
		if (XFIB_TR4_NH(ans) == XFIB_NH_IDX_NONE)
			return 0;
		if (x->suppress_prefixlen != 0xffffffffu &&
		    XFIB_TR4_PLEN(ans) == XFIB_TABLE_PLEN_UNKNOWN)
			goto kernel; /* a large table's: only the kernel
				      * knows the prefix's length */
		if (x->suppress_prefixlen != 0xffffffffu &&
		    XFIB_TR4_PLEN(ans) <= x->suppress_prefixlen) {
			/* fib_rules_lookup() suppresses only a lookup that
			 * succeeded: a blackhole, unreachable or prohibit
			 * route's error stands (and a route xfib does not
			 * mirror may be one). */
			nh = xfib_env_nexthop(env, XFIB_TR4_NH(ans));
			if (!nh || nh->kind == XFIB_NH_UNSUPPORTED)
				goto kernel;
			if (nh->kind != XFIB_NH_BLACKHOLE &&
			    nh->kind != XFIB_NH_UNREACHABLE) {
				w->suppressed = 1;
				return 0;
			}
		}
		ans = XFIB_TR4_NH(ans);
ifgroup:
		if (x->suppress_ifgroup != 0xffffffffu) {
			m = xfib_env_rule_ifgroup(env, fam, x->suppress_ifgroup,
						  ans, w->flow_hash, &hashed);
			if (m < 0)
				goto kernel;
			/* The kernel's own hash may select another member:
			 * xfibctl verify leaves such an answer to it. */
			if (hashed)
				w->suppressed = 1;
			if (m) {
				w->suppressed = 1;
				return 0;
			}
		}
		w->nh = ans;
		break;
	case FR_ACT_GOTO:
		if (x->goto_idx != XFIB_RULE_NO_TARGET && x->goto_idx > i)
			w->rule = x->goto_idx;
		return 0;
	case FR_ACT_NOP:
		return 0;
	default: /* blackhole, unreachable, prohibit */
		goto kernel;
	}
	w->reason = XFIB_NEXT;
	w->table = x->table;
	w->rule = i;
	return 1;
kernel:
	w->reason = XFIB_PASS_RULE;
	w->rule = i;
	return 1;
end:
	w->reason = XFIB_NEXT; /* no route: the kernel's */
	w->nh = XFIB_NH_IDX_NONE;
	w->rule = set->hdr.count;
	return 1;
}

/*
 * The walk decided by the packet's source alone, where it can be: when
 * the walk's first rule starts a run (include/xfib/rules.h), the run
 * names, for the flow's source, the first of its rules that matches, and
 * that rule is a lookup without suppress_prefixlength or
 * suppress_ifgroup that finds a route,
 * the walk ends there with it. Reads the flow's source and destination
 * only (no ports, no TOS: a rule of a run reads none), so the program
 * asks this before it reads the rest of the flow. 1: decided, as
 * xfib_rule_step() would have (w->nh, w->rule, w->table); 0: walk. The
 * caller has ruled out a local route (see the top of this file).
 */
XFIB_INLINE int xfib_rules_by_source(struct xfib_env *env, __u32 fam,
				     const struct xfib_rule_set *set,
				     const struct xfib_rflow *f,
				     struct xfib_rwalk *w)
{
	const struct xfib_rule *x = &set->rule[set->hdr.first & (XFIB_RULES_MAX - 1)];
	__u32 k, end, nh, ans;

	if (!set->hdr.walk || set->hdr.first >= set->hdr.count || !x->run)
		return 0;
	end = set->range[x->run_off & (XFIB_RUN_RANGES - 1)].run_end;
	k = xfib_env_rule_run(env, set, x, f);
	/* the rule after the run: one the source alone does not decide */
	if (k >= end || k >= set->hdr.count || k >= XFIB_RULES_MAX)
		return 0;
	x = &set->rule[k];
	if (x->action != FR_ACT_TO_TBL || x->suppress_prefixlen != 0xffffffffu ||
	    x->suppress_ifgroup != 0xffffffffu)
		return 0;
	if (x->tslot == XFIB_TSLOT_MAIN) {
		nh = w->main_nh;
	} else if (x->tslot < XFIB_TABLE_SLOTS) {
		if (xfib_env_table_answer(env, fam, x->tslot, f, &ans) != XFIB_NEXT)
			return 0;
		nh = XFIB_TR4_NH(ans);
	} else {
		return 0;
	}
	if (nh == XFIB_NH_IDX_NONE)
		return 0;
	w->nh = nh;
	w->reason = XFIB_NEXT;
	w->rule = k;
	w->table = x->table;
	return 1;
}

#endif /* XFIB_RULE_WALK_H */
