// SPDX-License-Identifier: GPL-2.0-only
/*
 * Routes as the kernel holds them, found through their prefix (the one
 * answer per prefix that the lookup structures get is rib_prefix.c's).
 *
 * IPv4 aliases. The kernel keeps every route of one key (table, prefix,
 * TOS, metric) that differs in anything else (type, nexthop, device,
 * protocol, preferred source, metrics), in a list: "ip route append" and
 * a second port holding an address in the same subnet add at the end,
 * "ip route prepend" at the front, "ip route replace" replaces the first,
 * and the first is the one lookups take. A notification does not say
 * where a route went, but its flags tell the operation: NLM_F_EXCL and
 * NLM_F_CREATE (a new key) or NLM_F_CREATE alone (prepend) put it first,
 * NLM_F_APPEND last, NLM_F_REPLACE in place of the first. A dump lists
 * them in order. A delete names the route by its attributes, so xfibd
 * tells aliases apart by a hash of those (rib_route_msg.ident). The same
 * route is never held twice by the kernel, so a route announced again
 * (a notification replayed after a dump that already had it) is already
 * in place and stays there.
 *
 * Expiry of IPv6 routes with a lifetime: rib_expiry.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "monoclock.h"
#include "rib_priv.h"

/* ---- the nexthop of a route ------------------------------------------ */

static void route_nh_key(const struct rib_route_msg *m, struct rib_nh_key *k)
{
	memset(k, 0, sizeof(*k));
	switch (m->type) {
	case RTN_UNICAST:
		if (m->unsupported || m->oif <= 0) {
			k->kind = XFIB_NH_UNSUPPORTED;
		} else if (m->gw_family) {
			k->kind = XFIB_NH_GATEWAY;
			k->family = m->gw_family;
			memcpy(k->gw, m->gw, 16);
		} else {
			k->kind = XFIB_NH_CONNECTED;
			k->family = m->key.family;
		}
		if (k->kind != XFIB_NH_UNSUPPORTED) {
			k->ifindex = m->oif;
			k->mtu = m->mtu > 0xffff ? 0xffff : m->mtu;
		}
		break;
	case RTN_BLACKHOLE:
		k->kind = XFIB_NH_BLACKHOLE;
		break;
	case RTN_UNREACHABLE:
	case RTN_PROHIBIT:
	case RTN_THROW:
		k->kind = XFIB_NH_UNREACHABLE;
		break;
	case RTN_LOCAL:
	case RTN_BROADCAST:
	case RTN_ANYCAST:
	case RTN_MULTICAST:
		k->kind = XFIB_NH_LOCAL;
		break;
	default:
		k->kind = XFIB_NH_UNSUPPORTED;
		break;
	}
}

/* What a route costs (x86-64): the layouts above are chosen for these. */
_Static_assert(sizeof(void *) != 8 || sizeof(struct rib_variant) == 64,
	       "a variant takes 64 bytes");
_Static_assert(sizeof(void *) != 8 || sizeof(struct rib_route) == 40,
	       "a route without a source prefix takes 40 bytes");
_Static_assert(sizeof(void *) != 8 ||
	       offsetof(struct rib_prefix, key.dst) + 4 <= 32,
	       "an IPv4 prefix takes 32 bytes");

/* Every route, through its prefix; rt may be freed in the body. */
#define for_each_route(r, p, rt, i)                                           \
	for (int _fam = 0; _fam < XFIB_FAMILIES; _fam++)                       \
	htab_for_each(&(r)->prefixes[_fam], p, _ptmp, i)                       \
		for (struct rib_route *_rtnext =                               \
			     ((rt) = (p)->routes) ? (rt)->pfx_next : NULL;     \
		     (rt); (rt) = _rtnext, _rtnext = (rt) ? (rt)->pfx_next : NULL)

/* Main, local, and the tables rules reach (rib_table.c). */
static bool route_table_mirrored(struct rib *r, const struct rib_route_key *k)
{
	return rib_table_class(r, family_index(k->family), k->table) !=
	       RIB_TCLASS_NONE;
}

void rib_route_prefetch(struct rib *r, const struct rib_route_key *k)
{
	struct rib_prefix_key pk;

	prefix_key(r, k, &pk);
	htab_prefetch(&r->prefixes[family_index(k->family)], &pk);
}

/* ---- routes and their variants --------------------------------------- */

void variant_no_room(struct rib *r, struct rib_variant *v, bool no_room)
{
	if (v->no_room == no_room)
		return;
	v->no_room = no_room;
	if (no_room)
		r->no_room++;
	else
		r->no_room--;
}

static struct objpool *route_pool(struct rib *r, __u8 src_plen)
{
	return src_plen ? &r->route_src_pool : &r->route_pool;
}

static void route_free(struct rib *r, struct rib_route *rt)
{
	r->fam[family_index(rt->pfx->key.family)].routes--;
	route_changed(r, rt);
	prefix_unlink(rt->pfx, rt);
	objpool_free(route_pool(r, rt->src_plen), rt);
}

static struct rib_route *route_get(struct rib *r, const struct rib_route_key *k)
{
	struct rib_prefix *p = prefix_get(r, k);
	struct rib_route *rt;

	if (!p)
		return NULL;
	rt = route_in(p, k);
	if (rt)
		return rt;
	rt = objpool_zalloc(route_pool(r, k->src_plen));
	if (!rt) {
		/* A prefix left without routes goes at the next commit. */
		prefix_mark(r, p);
		return NULL;
	}
	rt->table = k->table;
	rt->priority = k->priority;
	rt->tos = k->tos;
	rt->src_plen = k->src_plen;
	if (k->src_plen)
		memcpy(rt->src, k->src, 16);
	rt->pfx = p;
	rt->pfx_next = p->routes;
	p->routes = rt;
	r->fam[family_index(k->family)].routes++;
	return rt;
}

/* The link that points at v. */
static struct rib_variant **variant_link(struct rib_variant *v)
{
	struct rib_variant **pp = &v->rt->vars;

	while (*pp != v)
		pp = &(*pp)->next;
	return pp;
}

/* Insertion points: first, last, after those a dump has seen. */
static struct rib_variant **pos_first(struct rib_route *rt)
{
	return &rt->vars;
}

static struct rib_variant **pos_last(struct rib_route *rt)
{
	struct rib_variant **pp = &rt->vars;

	while (*pp)
		pp = &(*pp)->next;
	return pp;
}

static struct rib_variant **pos_after_seen(struct rib_route *rt)
{
	struct rib_variant **pp = &rt->vars;

	while (*pp && !(*pp)->stale)
		pp = &(*pp)->next;
	return pp;
}

static struct rib_variant *variant_insert(struct rib_route *rt,
					  struct rib_variant **pos,
					  struct rib_variant *v)
{
	v->rt = rt;
	v->next = *pos;
	*pos = v;
	rt->nvar++;
	return v;
}

static struct rib_variant *variant_new(struct rib *r, struct rib_route *rt,
				      struct rib_variant **pos)
{
	struct rib_variant *v = objpool_zalloc(&r->variant_pool);

	return v ? variant_insert(rt, pos, v) : NULL;
}

void variant_remove(struct rib *r, struct rib_variant *v)
{
	struct rib_route *rt = v->rt;

	*variant_link(v) = v->next;
	rt->nvar--;
	if (v->nhid)
		nhobj_detach(r, v);
	variant_no_room(r, v, false);
	nexthop_put(r, v->nh);
	objpool_free(&r->variant_pool, v);
	route_changed(r, rt);
	if (!rt->nvar)
		route_free(r, rt);
}

void variant_set_nh(struct rib *r, struct rib_variant *v, struct rib_nexthop *nh)
{
	struct rib_nexthop *old = v->nh;

	v->nh = nh;
	nexthop_put(r, old);
	route_changed(r, v->rt);
}

/* The nexthop m's route uses, with a reference; the kernel's when there
 * is no room for it: left out, a covering route would forward its packets
 * elsewhere. */
static struct rib_nexthop *route_nexthop(struct rib *r, const struct rib_route_msg *m,
					 struct rib_variant *v)
{
	struct rib_nexthop *nh;
	struct rib_nh_key k;

	if (v->nhid)
		return nhobj_attach(r, v);
	if (m->type == RTN_UNICAST && !m->unsupported && m->paths > 1) {
		/* IPv6's suppress_ifgroup reads the member taken, not
		 * the first path's device. */
		nh = paths_nexthop(r, m->path, m->npath,
				   m->key.family == AF_INET ? m->first_oif : 0,
				   variant_dflt(v));
	} else {
		route_nh_key(m, &k);
		nh_key_dflt(&k, variant_dflt(v));
		nh = nexthop_get(r, &k);
	}
	variant_no_room(r, v, !nh);
	return nh ?: nexthop_unsupported(r);
}

/* Writes m into v: what it is, what it uses, when it ends. */
static void variant_fill(struct rib *r, struct rib_variant *v,
			 const struct rib_route_msg *m)
{
	struct rib_nexthop *old = v->nh;

	if (v->nhid)
		nhobj_detach(r, v);
	v->oif = m->oif;
	v->nhid = m->nhid;
	if (!v->nhid)
		memcpy(v->gw, m->gw, 16); /* else nhobj_attach links it */
	v->mtu = m->mtu;
	v->paths = m->paths;
	v->type = m->type;
	v->stale = false;
	/* Before the old one is let go: the same nexthop stays allocated. */
	v->nh = route_nexthop(r, m, v);
	nexthop_put(r, old);
	if (m->key.family == AF_INET)
		v->ident = m->ident;
	else
		variant_expiry_set(r, v, m);
	route_changed(r, v->rt);
}

static struct rib_variant *variant_by_ident(struct rib_route *rt, __u64 ident)
{
	struct rib_variant *v;

	for (v = rt->vars; v; v = v->next)
		if (v->ident == ident)
			return v;
	return NULL;
}

/* The IPv4 alias m describes, put where the kernel has it. */
static struct rib_variant *route_set_v4(struct rib *r, struct rib_route *rt,
					const struct rib_route_msg *m,
					enum rib_route_op op)
{
	struct rib_variant *v = variant_by_ident(rt, m->ident);

	if (v) {
		if (op == RIB_ROUTE_DUMPED && v->stale) {
			*variant_link(v) = v->next;
			rt->nvar--;
			return variant_insert(rt, pos_after_seen(rt), v);
		}
		return v;
	}
	switch (op) {
	case RIB_ROUTE_DUMPED:
		return variant_new(r, rt, pos_after_seen(rt));
	case RIB_ROUTE_APPEND:
		return variant_new(r, rt, pos_last(rt));
	case RIB_ROUTE_REPLACE:
		if (rt->vars)
			return rt->vars; /* refilled in place */
		return variant_new(r, rt, pos_first(rt));
	default:
		return variant_new(r, rt, pos_first(rt));
	}
}

/* The IPv6 variant m describes: the route of the same nexthop. */
static struct rib_variant *variant_find_v6(const struct rib_route *rt,
					   const struct rib_route_msg *m)
{
	struct rib_variant *v;

	for (v = rt->vars; v; v = v->next) {
		if (m->nhid || v->nhid) {
			if (m->nhid == v->nhid)
				return v;
			continue;
		}
		if (m->paths > 1 || v->paths > 1) {
			if (m->paths > 1 && v->paths > 1)
				return v;
			continue;
		}
		if (v->oif == m->oif && !memcmp(v->gw, m->gw, 16))
			return v;
	}
	return NULL;
}

static struct rib_variant *route_set_v6(struct rib *r, struct rib_route *rt,
					const struct rib_route_msg *m,
					enum rib_route_op op)
{
	struct rib_variant *v = variant_find_v6(rt, m);

	if (!v && op == RIB_ROUTE_REPLACE) {
		/* IPv6 replaces the route of that metric; with several, we
		 * cannot tell which one: ask. */
		if (rt->nvar == 1)
			return rt->vars;
		if (rt->nvar > 1)
			rib_want_resync(r);
	}
	return v ?: variant_new(r, rt, pos_last(rt));
}

/* Is variant v's single path (oif, gw) one of m's paths? */
static bool msg_has_path(const struct rib_route_msg *m, const struct rib_variant *v)
{
	__u16 i;

	for (i = 0; i < m->npath; i++)
		if (m->path[i].key.ifindex == (__u32)v->oif &&
		    !memcmp(m->path[i].key.gw, v->gw, 16))
			return true;
	return false;
}

/*
 * IPv6 keeps each path of a multipath route as a sibling route and
 * announces the whole set whenever one joins ("ip -6 route append"): the
 * single-path variants held for its paths are now its siblings.
 */
static void route_merge_siblings(struct rib *r, struct rib_variant *mp,
				 const struct rib_route_msg *m)
{
	struct rib_variant *v, *next;

	for (v = mp->rt->vars; v; v = next) {
		next = v->next;
		if (v != mp && v->paths <= 1 && !v->nhid && msg_has_path(m, v))
			variant_remove(r, v);
	}
}

void rib_route_set(struct rib *r, const struct rib_route_msg *m,
		   enum rib_route_op op)
{
	struct rib_route *rt;
	struct rib_variant *v;

	if (!route_table_mirrored(r, &m->key))
		return;
	/* Every route can fall back to it, so it must exist first. */
	if (!rib_nh_unsupported(r))
		return;
	rt = route_get(r, &m->key);
	if (!rt)
		return;
	if (m->key.family == AF_INET)
		v = route_set_v4(r, rt, m, op);
	else
		v = route_set_v6(r, rt, m, op);
	if (!v) {
		if (!rt->nvar)
			route_free(r, rt);
		return;
	}
	variant_fill(r, v, m);
	if (m->key.family == AF_INET6 && m->paths > 1 && !m->nhid)
		route_merge_siblings(r, v, m);
}

/* A multipath variant of a route (a shared group), not a nexthop object. */
static bool variant_is_multipath(const struct rib_variant *v)
{
	return v->paths > 1 && !v->nhid && v->nh->key.kind == XFIB_NH_GROUP &&
	       nexthop_group(v->nh);
}

/*
 * Rebuilds multipath variant v without the paths drop() selects: the
 * kernel takes a path out of a route when its device goes down, or, for
 * IPv6, when one path is deleted. Returns the paths dropped; v (and its
 * route) may be gone then.
 */
static int variant_drop_paths(struct rib *r, struct rib_variant *v,
			      bool (*drop)(const struct rib_nh_key *, const void *),
			      const void *arg)
{
	struct rib_path p[XFIB_GROUP_MEMBERS];
	struct rib_nexthop *nh;
	__u16 n, j, kept = 0;
	__u32 first_dev;

	n = group_paths(nexthop_group(v->nh), p);
	/* An IPv4 route keeps its dead paths, the first one too. */
	first_dev = nexthop_group(v->nh)->key.first_dev;
	for (j = 0; j < n; j++)
		if (!drop(&p[j].key, arg))
			p[kept++] = p[j];
	if (kept == n)
		return 0;
	if (!kept) {
		variant_remove(r, v);
		return n;
	}
	nh = paths_nexthop(r, p, kept, first_dev, variant_dflt(v));
	if (!nh) {
		/* Keep the variant; the kernel handles packets to the dead
		 * path (its egress is down). A resync retries. */
		rib_want_resync(r);
		return 0;
	}
	v->paths = kept;
	if (kept == 1) {
		v->oif = p[0].key.ifindex;
		memcpy(v->gw, p[0].key.gw, 16);
	}
	variant_set_nh(r, v, nh);
	return n - kept;
}

static bool path_on_dev(const struct rib_nh_key *k, const void *arg)
{
	return k->ifindex == *(const __u32 *)arg;
}

static bool path_is(const struct rib_nh_key *k, const void *arg)
{
	const struct rib_route_msg *m = arg;

	return k->ifindex == (__u32)m->oif && !memcmp(k->gw, m->gw, 16);
}

void rib_route_del(struct rib *r, const struct rib_route_msg *m)
{
	struct rib_route *rt = route_find(r, &m->key);
	struct rib_variant *v, *next;

	if (!rt)
		return;
	if (m->key.family == AF_INET) {
		/* Not found: a delete the last dump already had. */
		v = variant_by_ident(rt, m->ident);
		if (v)
			variant_remove(r, v);
		return;
	}
	v = variant_find_v6(rt, m);
	if (v) {
		variant_remove(r, v);
		return;
	}
	/* Deleting one path of an IPv6 multipath route is announced as the
	 * deletion of a single-path route we never saw. */
	if (m->paths != 1 || m->nhid)
		return;
	for (v = rt->vars; v; v = next) {
		next = v->next;
		if (variant_is_multipath(v) && variant_drop_paths(r, v, path_is, m))
			return;
	}
}

/*
 * The kernel flushes the routes through a device that goes down or away,
 * or, for IPv4, that loses its last address, without announcing the IPv4
 * ones (fib_table_flush). Do the same here. Down (gone false), the local
 * table keeps its RTN_LOCAL routes: the addresses stay the router's. It
 * loses the IPv4 broadcast routes; IPv6 announces what it removes. Gone,
 * nothing through the device remains. Routes by nexthop object go with
 * their objects (nhobj_flush_dev).
 */
void routes_flush_dev(struct rib *r, int ifindex, int family, bool gone)
{
	__u32 dev = ifindex;
	struct rib_variant *v, *next;
	struct rib_prefix *p;
	struct rib_route *rt;
	size_t i;

	for_each_route(r, p, rt, i) {
		bool local = rt->table == RT_TABLE_LOCAL;

		if (family && p->key.family != family)
			continue;
		if (local && !gone && p->key.family != AF_INET)
			continue;
		/* Removing the last variant frees rt: next is NULL then. */
		for (v = rt->vars; v; v = next) {
			next = v->next;
			if (v->nhid || (local && !gone && v->type == RTN_LOCAL))
				continue;
			if (variant_is_multipath(v))
				variant_drop_paths(r, v, path_on_dev, &dev);
			else if (v->oif == ifindex)
				variant_remove(r, v);
		}
	}
}

/* ---- full sync ------------------------------------------------------- */

void routes_mark_stale(struct rib *r)
{
	struct rib_variant *v;
	struct rib_route *rt;
	struct rib_prefix *p;
	size_t i;

	/* A first sync starts empty: nothing to sweep after it. */
	r->routes_stale = r->fam[XFIB_V4].routes || r->fam[XFIB_V6].routes;
	for_each_route(r, p, rt, i)
		for (v = rt->vars; v; v = v->next)
			v->stale = true;
}

void routes_sweep_stale(struct rib *r)
{
	struct rib_variant *v, *next;
	struct rib_route *rt;
	struct rib_prefix *p;
	size_t i;

	if (!r->routes_stale)
		return;
	r->routes_stale = false;
	for_each_route(r, p, rt, i) {
		for (v = rt->vars; v; v = next) {
			next = v->next;
			if (v->stale)
				variant_remove(r, v);
		}
	}
}

void routes_flush_class(struct rib *r, int fam, __u8 tclass)
{
	struct rib_prefix *p;
	size_t i;

	htab_for_each(&r->prefixes[fam], p, tmp, i)
		if (p->key.tclass == tclass)
			while (p->routes)
				variant_remove(r, p->routes->vars);
}

void routes_free_all(struct rib *r)
{
	struct rib_variant *v, *next;
	struct rib_route *rt;
	struct rib_prefix *p;
	size_t i;

	for_each_route(r, p, rt, i) {
		for (v = rt->vars; v; v = next) {
			next = v->next;
			objpool_free(&r->variant_pool, v);
		}
		objpool_free(route_pool(r, rt->src_plen), rt);
	}
}
