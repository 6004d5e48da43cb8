// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RIB's invariants, checked by the netlink fuzzer after every input:
 * every index the RIB hands out is accounted for exactly once (live, free
 * or waiting for a grace period), every live entry says in the arrays
 * what the RIB says it is, every reference points at a live entry,
 * xfib_ifaces holds the links' ports, and xfib_nonlocal4 rules out no
 * local IPv4 answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rib_priv.h"

/* Counts each index once; false if one is counted twice or out of range. */
static bool take(__u8 *seen, __u32 max, __u32 idx)
{
	if (idx >= max || seen[idx])
		return false;
	seen[idx] = 1;
	return true;
}

static bool stack_take(__u8 *seen, __u32 max, const __u32 *s, __u32 n)
{
	__u32 i;

	for (i = 0; i < n; i++)
		if (!take(seen, max, s[i]))
			return false;
	return true;
}

/* All of [first, max) seen exactly once. */
static bool all_seen(const __u8 *seen, __u32 first, __u32 max)
{
	__u32 i;

	for (i = first; i < max; i++)
		if (!seen[i])
			return false;
	return true;
}

#define FAIL(...) do { snprintf(why, len, __VA_ARGS__); goto out; } while (0)

static bool check_neighbours(const struct rib *r, __u8 *seen, char *why, size_t len)
{
	struct rib_neigh *n;
	struct rib_nexthop *nh;
	bool ok = false;
	size_t b;

	memset(seen, 0, XFIB_NEIGH_MAX);
	htab_for_each(&r->neighs, n, t1, b) {
		const struct xfib_neigh *e;
		__u32 refs = 0;
		size_t b2;

		if (!take(seen, XFIB_NEIGH_MAX, n->idx) || !n->idx)
			FAIL("neighbour index %u used twice or invalid", n->idx);
		e = &r->neigh_map[n->idx];
		if (e->ifindex != n->key.ifindex || e->family != n->key.family ||
		    memcmp(e->addr, n->key.addr, 16))
			FAIL("neighbour %u: the array holds another neighbour", n->idx);
		if (e->tx_port != fdb_neigh_port(r, n))
			FAIL("neighbour %u: bridge member %u, its FDB says %u",
			     n->idx, e->tx_port, fdb_neigh_port(r, n));
		htab_for_each(&r->nexthops, nh, t2, b2)
			refs += nh->neigh == n;
		if (refs != n->nh_refs)
			FAIL("neighbour %u: %u nexthops use it, nh_refs %u", n->idx,
			     refs, n->nh_refs);
	}
	if (!stack_take(seen, XFIB_NEIGH_MAX, r->neigh_free, r->neigh_nfree) ||
	    !stack_take(seen, XFIB_NEIGH_MAX, r->neigh_retired, r->neigh_nretired) ||
	    !all_seen(seen, 1, XFIB_NEIGH_MAX))
		FAIL("neighbour indexes: lost, or both free and in use");
	ok = true;
out:
	return ok;
}

static bool check_nexthops(const struct rib *r, __u8 *seen, char *why, size_t len)
{
	struct rib_nexthop *nh;
	bool ok = false;
	size_t b;

	memset(seen, 0, XFIB_NEXTHOP_MAX);
	htab_for_each(&r->nexthops, nh, t1, b) {
		const struct xfib_nexthop *e;

		if (nh->idx < XFIB_NH_DFLT_FIRST || !take(seen, XFIB_NEXTHOP_MAX, nh->idx))
			FAIL("nexthop index %u used twice or invalid", nh->idx);
		if (XFIB_NH_IS_DFLT(nh->idx) != !!nh->key.dflt)
			FAIL("nexthop %u: a default route's index for another's nexthop, or the reverse",
			     nh->idx);
		/* A group's alias has its base, but one adopted and not
		 * taken back (rib_adopt). */
		if (nh->key.dflt && (!nh_kind_dflt(nh->key.kind) ||
				     (nh->key.kind == XFIB_NH_GROUP ?
				      !nh->base && nh->refs : !!nh->base)))
			FAIL("nexthop %u: a default route's of kind %u, base %s", nh->idx,
			     nh->key.kind, nh->base ? "set" : "none");
		if (!nh->key.dflt && nh->base)
			FAIL("nexthop %u: a base, but no default route's", nh->idx);
		if (nh->base && (nh->base->key.kind != XFIB_NH_GROUP || nh->base->key.dflt ||
				 nh->base->key.ifindex != nh->key.ifindex ||
				 htab_find(&r->nexthops, &nh->base->key) != nh->base ||
				 !nh->base->refs))
			FAIL("nexthop %u: its base is not the live nexthop of its group", nh->idx);
		e = &r->nh_map[nh->idx];
		if (e->kind != nh->key.kind)
			FAIL("nexthop %u: kind %u in the array, %u in the RIB",
			     nh->idx, e->kind, nh->key.kind);
		if ((nh->key.kind == XFIB_NH_GATEWAY) != !!nh->neigh)
			FAIL("nexthop %u: gateway without neighbour, or the reverse", nh->idx);
		if (nh->neigh && (htab_find(&r->neighs, &nh->neigh->key) != nh->neigh ||
				  e->neigh != nh->neigh->idx))
			FAIL("nexthop %u: its neighbour is not the RIB's", nh->idx);
		if (nh->key.kind == XFIB_NH_GROUP && e->group >= XFIB_GROUP_MAX)
			FAIL("nexthop %u: group %u out of range", nh->idx, e->group);
		if (nh->key.kind == XFIB_NH_GROUP && e->ifindex != r->grp_first[e->group])
			FAIL("nexthop %u: first device %u, its group's is %u", nh->idx,
			     e->ifindex, r->grp_first[e->group]);
	}
	for (b = 0; b < r->nh_dflt_nfree; b++)
		if (!XFIB_NH_IS_DFLT(r->nh_dflt_free[b]))
			FAIL("nexthop %u free among the default routes'", r->nh_dflt_free[b]);
	for (b = 0; b < r->nh_nfree; b++)
		if (XFIB_NH_IS_DFLT(r->nh_free[b]))
			FAIL("default route's nexthop %u free among the others", r->nh_free[b]);
	if (!stack_take(seen, XFIB_NEXTHOP_MAX, r->nh_free, r->nh_nfree) ||
	    !stack_take(seen, XFIB_NEXTHOP_MAX, r->nh_dflt_free, r->nh_dflt_nfree) ||
	    !stack_take(seen, XFIB_NEXTHOP_MAX, r->nh_retired, r->nh_nretired) ||
	    !all_seen(seen, XFIB_NH_DFLT_FIRST, XFIB_NEXTHOP_MAX))
		FAIL("nexthop indexes: lost, or both free and in use");
	ok = true;
out:
	return ok;
}

/* A default route of the mirrored table, and only such a route, has a
 * default route's nexthop, where its kind has one (nh_kind_dflt). */
static bool check_variants(const struct rib *r, char *why, size_t len)
{
	const struct rib_variant *v;
	const struct rib_route *rt;
	struct rib_prefix *p;
	bool ok = false;
	size_t b;
	int fam;

	for (fam = 0; fam < XFIB_FAMILIES; fam++) {
		htab_for_each(&r->prefixes[fam], p, t1, b) {
			for (rt = p->routes; rt; rt = rt->pfx_next) {
				for (v = rt->vars; v; v = v->next) {
					bool dflt = variant_dflt(v);

					if (v->nh->key.dflt && !dflt)
						FAIL("a route of /%u in table %u has a default route's nexthop %u",
						     p->key.plen, rt->table, v->nh->idx);
					if (dflt && !v->nh->key.dflt &&
					    nh_kind_dflt(v->nh->key.kind))
						FAIL("a default route of table %u has nexthop %u, not one of its own",
						     rt->table, v->nh->idx);
				}
			}
		}
	}
	ok = true;
out:
	return ok;
}

/* A group's buckets name only its members, and its members are live. */
static bool group_ok(const struct rib *r, const struct rib_group *g)
{
	const __u32 *bk;
	__u32 i, j;

	if (!g->nh || g->nh->key.kind != XFIB_NH_GROUP ||
	    g->nh->key.ifindex >= XFIB_GROUP_MAX || g->key.n > XFIB_GROUP_MEMBERS ||
	    r->grp_first[g->nh->key.ifindex] != g->key.first_dev)
		return false;
	for (i = 0; i < g->key.n; i++)
		if (!g->member[i] || htab_find(&r->nexthops, &g->member[i]->key) != g->member[i])
			return false;
	bk = r->grp_map[g->nh->key.ifindex].nh;
	for (i = 0; i < XFIB_GROUP_BUCKETS && g->key.n; i++) {
		for (j = 0; j < g->key.n && g->member[j]->idx != bk[i]; j++)
			;
		if (j == g->key.n)
			return false;
	}
	return true;
}

static bool check_groups(const struct rib *r, char *why, size_t len)
{
	struct rib_group *g;
	struct rib_nhobj *o;
	bool ok = false;
	size_t b;

	htab_for_each(&r->groups, g, t1, b)
		if (!group_ok(r, g))
			FAIL("multipath group: a bucket or member is not live");
	htab_for_each(&r->nhobjs, o, t2, b)
		if (o->group && !group_ok(r, o->group))
			FAIL("group of nexthop object %u: a bucket or member is not live", o->id);
	ok = true;
out:
	return ok;
}

/* xfib_ifaces holds every link below XFIB_PORT_MAX as the RIB has it
 * (or the change waits for a grace period), and nothing else. */
static bool check_ports(const struct rib *r, char *why, size_t len)
{
	const struct rib_port *s;
	const struct xfib_port *e;
	struct rib_link *l;
	struct xfib_iface v;
	bool ok = false;
	__u32 i;

	for (i = 0; i < XFIB_PORT_MAX; i++) {
		e = &r->dp.port[i];
		s = &r->ports[i];
		l = htab_find(&r->links, &(int){ (int)i });
		if (e->live && e->live != s->last)
			FAIL("port %u: live %u, %u published", i, e->live, s->last);
		if (!l) {
			if (e->live || s->pending)
				FAIL("port %u: in xfib_ifaces without a link", i);
			continue;
		}
		iface_value(r, l, &v);
		if (s->pending ? memcmp(&s->want, &v, sizeof(v)) :
		    !e->live || memcmp(xfib_port_iface(e, e->live), &v, sizeof(v)))
			FAIL("port %u (%s): xfib_ifaces does not say what the RIB does",
			     i, l->name);
		if (s->pending && !r->ports_pending)
			FAIL("port %u: a change waits, unflagged", i);
	}
	ok = true;
out:
	return ok;
}

bool rib_check(const struct rib *r, char *why, size_t len)
{
	__u8 *seen = malloc(XFIB_NEXTHOP_MAX > XFIB_NEIGH_MAX ? XFIB_NEXTHOP_MAX :
							       XFIB_NEIGH_MAX);
	bool ok = seen && check_neighbours(r, seen, why, len) &&
		  check_nexthops(r, seen, why, len) && check_variants(r, why, len) &&
		  check_groups(r, why, len) &&
		  check_ports(r, why, len) && local4_check(r, why, len);

	if (!seen)
		snprintf(why, len, "out of memory");
	free(seen);
	return ok;
}
