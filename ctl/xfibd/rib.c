// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control-plane copy of the kernel FIB and the index arrays it feeds.
 *
 * Writes to the dataplane follow one order, so a packet that reads any
 * index sees a complete entry: fill a nexthop/neighbour entry, then publish
 * what points at it (an instance, a hosts entry). Removal runs backwards:
 * unpublish, wait for an RCU grace period (rib_reclaim), then reuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "pin.h"
#include "rib.h"

static int family_index(int family)
{
	return family == AF_INET6 ? XFIB_V6 : XFIB_V4;
}

static struct rib_link *link_find(struct rib *r, int ifindex)
{
	return htab_find(&r->links, &ifindex);
}

/* ---- index allocation ------------------------------------------------ */

static int idx_alloc(__u32 *stack, __u32 *n, __u32 *idx)
{
	if (!*n)
		return -ENOSPC;
	*idx = stack[--*n];
	return 0;
}

static void idx_take(__u32 *stack, __u32 *n, __u32 idx)
{
	__u32 i;

	for (i = 0; i < *n; i++) {
		if (stack[i] == idx) {
			stack[i] = stack[--*n];
			return;
		}
	}
}

/* ---- dataplane writes ---------------------------------------------- */

static void iface_write(struct rib *r, struct rib_link *l)
{
	struct xfib_iface v = { .mtu = l->mtu, .ifindex = l->ifindex };
	int rpf = l->rpf4 > r->v4_rpf_all ? l->rpf4 : r->v4_rpf_all;

	memcpy(v.mac, l->mac, 6);
	if ((l->ifflags & IFF_UP) && (l->ifflags & IFF_RUNNING))
		v.flags |= XFIB_IF_UP;
	if (l->fwd4 > 0)
		v.flags |= XFIB_IF_FWD4;
	if (r->v6_fwd > 0)
		v.flags |= XFIB_IF_FWD6;
	if (rpf > 0)
		v.flags |= XFIB_IF_RPF;
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.xfib_ifaces),
				&l->ifindex, &v, BPF_ANY))
		pr_warn("update interface %s: %s", l->name, strerror(errno));
}

/* The first two words of a neighbour entry are each stored with one
 * atomic 8-byte write; the dataplane loads each once. */
static void neigh_write_words(struct rib *r, struct rib_neigh *n)
{
	struct xfib_neigh *e = &r->neigh_map[n->idx];
	struct rib_link *l = link_find(r, n->key.ifindex);
	union {
		__u64 w;
		__u8 b[8];
	} w0 = { 0 }, w1 = { 0 };

	memcpy(w0.b, n->mac, 6);
	w0.b[6] = n->usable && l ? XFIB_NEIGH_VALID : XFIB_NEIGH_INVALID;
	w0.b[7] = n->key.family;
	if (l)
		memcpy(w1.b, l->mac, 6);
	__atomic_store_n((__u64 *)e + 1, w1.w, __ATOMIC_RELEASE);
	__atomic_store_n((__u64 *)e, w0.w, __ATOMIC_RELEASE);
}

static void neigh_write_new(struct rib *r, struct rib_neigh *n)
{
	struct xfib_neigh *e = &r->neigh_map[n->idx];
	struct xfib_neigh_key hk = { .ifindex = n->key.ifindex,
				     .family = n->key.family };

	e->ifindex = n->key.ifindex;
	memcpy(e->addr, n->key.addr, 16);
	neigh_write_words(r, n);
	memcpy(hk.addr, n->key.addr, 16);
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.xfib_neigh_hosts),
				&hk, &n->idx, BPF_ANY))
		pr_warn("update neighbour hosts map: %s", strerror(errno));
}

static void nexthop_write(struct rib *r, struct rib_nexthop *nh)
{
	struct xfib_nexthop *e = &r->nh_map[nh->idx];

	e->family = nh->key.family;
	e->mtu = nh->key.mtu;
	if (nh->key.kind == XFIB_NH_GROUP) {
		e->ifindex = 0;
		e->group = nh->key.ifindex;
	} else {
		e->ifindex = nh->key.ifindex;
		e->group = 0;
	}
	e->neigh = nh->neigh ? nh->neigh->idx : 0;
	memcpy(e->gw, nh->key.gw, 16);
	/* kind last: it is what makes the entry mean something. */
	__atomic_store_n(&e->kind, nh->key.kind, __ATOMIC_RELEASE);
}

/* ---- neighbours ---------------------------------------------------- */

static struct rib_neigh *neigh_get(struct rib *r, int family, int ifindex,
				   const __u8 *addr, int addrlen)
{
	struct rib_neigh_key k = { .ifindex = ifindex, .family = family };
	struct rib_neigh *n;

	memcpy(k.addr, addr, addrlen);
	n = htab_find(&r->neighs, &k);
	if (n)
		return n;
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->key = k;
	if (idx_alloc(r->neigh_free, &r->neigh_nfree, &n->idx)) {
		pr_warn("neighbour table full (%u entries)", XFIB_NEIGH_MAX);
		free(n);
		return NULL;
	}
	htab_insert(&r->neighs, n);
	neigh_write_new(r, n);
	return n;
}

/* Frees n if nothing needs it any more. */
static void neigh_put(struct rib *r, struct rib_neigh *n)
{
	struct xfib_neigh_key hk = { .ifindex = n->key.ifindex,
				     .family = n->key.family };

	if (n->nh_refs || n->in_kernel)
		return;
	memcpy(hk.addr, n->key.addr, 16);
	bpf_map_delete_elem(bpf_map__fd(r->skel->maps.xfib_neigh_hosts), &hk);
	r->neigh_retired[r->neigh_nretired++] = n->idx;
	htab_remove(&r->neighs, n);
	free(n);
}

void rib_neigh_set(struct rib *r, int family, int ifindex, const __u8 *addr,
		   const __u8 *mac, bool usable)
{
	struct rib_neigh *n;

	n = neigh_get(r, family, ifindex, addr, family == AF_INET ? 4 : 16);
	if (!n)
		return;
	n->stale = false;
	n->in_kernel = true;
	if (mac)
		memcpy(n->mac, mac, 6);
	n->usable = usable && mac;
	neigh_write_words(r, n);
}

void rib_neigh_del(struct rib *r, int family, int ifindex, const __u8 *addr)
{
	struct rib_neigh_key k = { .ifindex = ifindex, .family = family };
	struct rib_neigh *n;

	memcpy(k.addr, addr, family == AF_INET ? 4 : 16);
	n = htab_find(&r->neighs, &k);
	if (!n)
		return;
	n->in_kernel = false;
	n->usable = false;
	neigh_write_words(r, n);
	neigh_put(r, n);
}

/* ---- nexthops ------------------------------------------------------ */

static struct rib_nexthop *nexthop_get(struct rib *r, const struct rib_nh_key *k)
{
	struct rib_nexthop *nh = htab_find(&r->nexthops, k);

	if (nh) {
		nh->refs++;
		return nh;
	}
	nh = calloc(1, sizeof(*nh));
	if (!nh)
		return NULL;
	nh->key = *k;
	if (k->kind == XFIB_NH_GATEWAY) {
		nh->neigh = neigh_get(r, k->family, k->ifindex, k->gw,
				      k->family == AF_INET ? 4 : 16);
		if (!nh->neigh) {
			free(nh);
			return NULL;
		}
		nh->neigh->nh_refs++;
	}
	if (idx_alloc(r->nh_free, &r->nh_nfree, &nh->idx)) {
		pr_warn("nexthop table full (%u entries)", XFIB_NEXTHOP_MAX);
		if (nh->neigh) {
			nh->neigh->nh_refs--;
			neigh_put(r, nh->neigh);
		}
		free(nh);
		return NULL;
	}
	nh->refs = 1;
	htab_insert(&r->nexthops, nh);
	nexthop_write(r, nh);
	return nh;
}

static void group_destroy(struct rib *r, struct rib_group *g);

static void nexthop_free(struct rib *r, struct rib_nexthop *nh)
{
	r->nh_retired[r->nh_nretired++] = nh->idx;
	htab_remove(&r->nexthops, nh);
	if (nh->key.kind == XFIB_NH_GROUP) {
		if (nh->group)
			group_destroy(r, nh->group);
		r->grp_retired[r->grp_nretired++] = nh->key.ifindex;
		r->ngroups--;
	}
	if (nh->neigh) {
		nh->neigh->nh_refs--;
		neigh_put(r, nh->neigh);
	}
	free(nh);
}

static void nexthop_put(struct rib *r, struct rib_nexthop *nh)
{
	if (nh && --nh->refs == 0)
		nexthop_free(r, nh);
}

__u32 rib_nh_unsupported(struct rib *r)
{
	struct rib_nh_key k = { .kind = XFIB_NH_UNSUPPORTED };

	if (!r->nh_unsupported)
		r->nh_unsupported = nexthop_get(r, &k);
	return r->nh_unsupported ? r->nh_unsupported->idx : XFIB_NH_IDX_NONE;
}

/* ---- multipath groups ---------------------------------------------- */

/*
 * Buckets in proportion to the weights (largest remainder first), each
 * member's in one run, as the kernel's hash-threshold splits its hash
 * range. A member whose share is below half a bucket gets none. Each
 * bucket is one 4-byte store: a packet reads the old member or the new.
 */
static void group_write(struct rib *r, __u32 gidx, const struct rib_group_key *k)
{
	__u32 *b = r->grp_map[gidx].nh;
	__u32 cnt[XFIB_GROUP_MEMBERS];
	__u64 rem[XFIB_GROUP_MEMBERS], total = 0;
	__u32 i, j, used = 0, pos = 0;

	if (!k->n) {
		/* No live member: the kernel decides. */
		__u32 unsup = rib_nh_unsupported(r);

		for (j = 0; j < XFIB_GROUP_BUCKETS; j++)
			__atomic_store_n(&b[j], unsup, __ATOMIC_RELEASE);
		return;
	}
	for (i = 0; i < k->n; i++)
		total += k->m[i].weight;
	for (i = 0; i < k->n; i++) {
		cnt[i] = (__u64)XFIB_GROUP_BUCKETS * k->m[i].weight / total;
		rem[i] = (__u64)XFIB_GROUP_BUCKETS * k->m[i].weight % total;
		used += cnt[i];
	}
	while (used < XFIB_GROUP_BUCKETS) {
		__u32 best = 0;

		for (i = 1; i < k->n; i++)
			if (rem[i] > rem[best])
				best = i;
		cnt[best]++;
		rem[best] = 0;
		used++;
	}
	for (i = 0; i < k->n; i++)
		for (j = 0; j < cnt[i]; j++)
			__atomic_store_n(&b[pos++], k->m[i].nh, __ATOMIC_RELEASE);
}

/*
 * Takes a reference on each path's nexthop and fills key and member[],
 * the weights of paths to the same nexthop added. Members are ordered by
 * what they are, not by index: a group rebuilt with other indexes (by a
 * restarted xfibd) lays its buckets out the same, and flows stay put.
 */
static int group_members(struct rib *r, const struct rib_path *p, __u16 n,
			 struct rib_group_key *k, struct rib_nexthop **member)
{
	__u32 i, j;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < n; i++) {
		struct rib_nexthop *nh = nexthop_get(r, &p[i].key);

		if (!nh)
			goto err;
		for (j = 0; j < k->n &&
			    memcmp(&member[j]->key, &nh->key, sizeof(nh->key)) < 0; j++)
			;
		if (j < k->n && member[j] == nh) {
			k->m[j].weight += p[i].weight;
			nexthop_put(r, nh);
			continue;
		}
		memmove(&k->m[j + 1], &k->m[j], (k->n - j) * sizeof(k->m[0]));
		memmove(&member[j + 1], &member[j], (k->n - j) * sizeof(member[0]));
		k->m[j].nh = nh->idx;
		k->m[j].weight = p[i].weight;
		member[j] = nh;
		k->n++;
	}
	return 0;
err:
	for (j = 0; j < k->n; j++)
		nexthop_put(r, member[j]);
	return -ENOMEM;
}

/* A new group of the members group_members() took, written to the
 * dataplane. It takes over their references; NULL on failure. */
static struct rib_group *group_new(struct rib *r, const struct rib_group_key *k,
				   struct rib_nexthop **member, bool shared)
{
	struct rib_nh_key fk = { .kind = XFIB_NH_GROUP };
	struct rib_group *g = calloc(1, sizeof(*g));
	__u32 gidx, i;

	if (!g)
		goto err;
	if (idx_alloc(r->grp_free, &r->grp_nfree, &gidx)) {
		if (!r->nh_fallbacks)
			pr_warn("multipath group table full (%u groups)",
				XFIB_GROUP_MAX);
		goto err;
	}
	g->key = *k;
	memcpy(g->member, member, k->n * sizeof(member[0]));
	group_write(r, gidx, &g->key);
	/* The nexthop that routes point at, written after its buckets. */
	fk.ifindex = gidx;
	g->nh = nexthop_get(r, &fk);
	if (!g->nh) {
		r->grp_free[r->grp_nfree++] = gidx;
		goto err;
	}
	g->nh->group = g;
	g->shared = shared;
	if (shared)
		htab_insert(&r->groups, g);
	r->ngroups++;
	return g;
err:
	for (i = 0; i < k->n; i++)
		nexthop_put(r, member[i]);
	free(g);
	return NULL;
}

/* Rewrites g in place with new paths: packets see the old members or the
 * new, never neither. Only for groups of nexthop objects (not shared). */
static void group_set(struct rib *r, struct rib_group *g,
		      const struct rib_path *p, __u16 n)
{
	struct rib_nexthop *old[XFIB_GROUP_MEMBERS];
	__u32 i, nold = g->key.n;

	memcpy(old, g->member, nold * sizeof(old[0]));
	if (group_members(r, p, n, &g->key, g->member)) {
		/* Keep the old members rather than lose the group. */
		pr_warn("multipath group %u: out of memory", g->nh->key.ifindex);
		return;
	}
	group_write(r, g->nh->key.ifindex, &g->key);
	for (i = 0; i < nold; i++)
		nexthop_put(r, old[i]);
}

/* Called when the group's nexthop is freed. */
static void group_destroy(struct rib *r, struct rib_group *g)
{
	__u32 i;

	if (g->shared)
		htab_remove(&r->groups, g);
	for (i = 0; i < g->key.n; i++)
		nexthop_put(r, g->member[i]);
	free(g);
}

/*
 * The nexthop for a set of paths, with a reference: the path's own for
 * one, else a group shared with every route of the same paths.
 */
static struct rib_nexthop *paths_nexthop(struct rib *r, const struct rib_path *p,
					 __u16 n)
{
	struct rib_nexthop *member[XFIB_GROUP_MEMBERS];
	struct rib_group_key *k;
	struct rib_group *g;
	__u32 i;

	if (n == 1)
		return nexthop_get(r, &p[0].key);
	k = malloc(sizeof(*k));
	if (!k || group_members(r, p, n, k, member)) {
		free(k);
		return NULL;
	}
	g = htab_find(&r->groups, k);
	if (g) {
		for (i = 0; i < k->n; i++)
			nexthop_put(r, member[i]);
		g->nh->refs++;
	} else {
		g = group_new(r, k, member, true);
	}
	free(k);
	return g ? g->nh : NULL;
}

/* The paths of a group's members, for rebuilding it without some. */
static __u16 group_paths(const struct rib_group *g, struct rib_path *p)
{
	__u32 i;

	for (i = 0; i < g->key.n; i++) {
		p[i].key = g->member[i]->key;
		p[i].weight = g->key.m[i].weight;
	}
	return g->key.n;
}

/* ---- routes -------------------------------------------------------- */

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

static bool route_table_mirrored(struct rib *r, __u32 table)
{
	return table == r->table || table == RT_TABLE_LOCAL;
}

/* ---- prefixes: one answer per prefix ------------------------------- */

static void prefix_mark(struct rib *r, struct rib_prefix *p)
{
	struct rib_family_state *f = &r->fam[family_index(p->key.family)];

	f->dirty = true;
	f->changes++;
	if (!p->dirty) {
		p->dirty = true;
		p->dirty_next = r->dirty_prefixes;
		r->dirty_prefixes = p;
	}
}

static struct rib_prefix *prefix_get(struct rib *r, const struct rib_route_key *rk)
{
	struct rib_prefix_key k = {
		.family = rk->family,
		.local = rk->table == RT_TABLE_LOCAL,
		.plen = rk->plen,
	};
	struct rib_prefix *p;

	memcpy(k.dst, rk->dst, 16);
	p = htab_find(&r->prefixes, &k);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->key = k;
	htab_insert(&r->prefixes, p);
	return p;
}

static void prefix_unlink(struct rib_prefix *p, struct rib_route *rt)
{
	struct rib_route **pp;

	for (pp = &p->routes; *pp; pp = &(*pp)->pfx_next) {
		if (*pp == rt) {
			*pp = rt->pfx_next;
			return;
		}
	}
}

static void route_changed(struct rib *r, struct rib_route *rt)
{
	prefix_mark(r, rt->pfx);
}

/*
 * The answer for a prefix, as the kernel would give it: the route of
 * lowest metric. With TOS-specific IPv4 routes the kernel picks by the
 * packet's TOS, so the prefix goes to the kernel.
 */
static __u32 prefix_answer(struct rib *r, const struct rib_prefix *p)
{
	const struct rib_route *rt, *best = NULL;

	for (rt = p->routes; rt; rt = rt->pfx_next) {
		if (rt->key.tos)
			return rib_nh_unsupported(r);
		if (!best || rt->key.priority < best->key.priority)
			best = rt;
	}
	return rib_route_nh(r, best);
}

static void change_record(struct rib *r, const struct rib_prefix *p)
{
	struct rib_family_state *f = &r->fam[family_index(p->key.family)];
	struct rib_change *c;

	if (f->chg_overflow)
		return;
	if (f->nchg == f->chg_cap) {
		size_t cap = f->chg_cap ? f->chg_cap * 2 : 256;

		c = realloc(f->chg, cap * sizeof(*c));
		if (!c) {
			/* Cannot say what changed: rebuild everything. */
			f->chg_overflow = true;
			return;
		}
		f->chg = c;
		f->chg_cap = cap;
	}
	c = &f->chg[f->nchg++];
	memcpy(c->dst, p->key.dst, 16);
	c->plen = p->key.plen;
	c->local = p->key.local;
}

void rib_commit(struct rib *r)
{
	struct rib_prefix *p, *next;

	if (r->nh_fallbacks > 1)
		pr_warn("and %u more routes without a nexthop: the kernel forwards to them",
			r->nh_fallbacks - 1);
	r->nh_fallbacks = 0;

	for (p = r->dirty_prefixes; p; p = next) {
		struct ptree *t = &r->tree[family_index(p->key.family)][p->key.local];
		__u32 nh, old;
		int err;

		next = p->dirty_next;
		p->dirty = false;
		p->dirty_next = NULL;
		if (!p->routes) {
			if (ptree_del(t, p->key.dst, p->key.plen) == 0)
				change_record(r, p);
			htab_remove(&r->prefixes, p);
			free(p);
			continue;
		}
		nh = prefix_answer(r, p);
		if (ptree_get(t, p->key.dst, p->key.plen, &old) == 0 && old == nh)
			continue;
		err = ptree_set(t, p->key.dst, p->key.plen, nh);
		if (err < 0) {
			/* Out of memory: the tree, and so the dataplane, keeps
			 * the old answer; a resync retries. */
			pr_warn("prefix tree: %s", strerror(-err));
			r->resync_wanted = true;
			continue;
		}
		change_record(r, p);
	}
	r->dirty_prefixes = NULL;
}

bool rib_pending(const struct rib *r)
{
	return r->dirty_prefixes || r->fam[XFIB_V4].dirty || r->fam[XFIB_V6].dirty;
}

static void route_free(struct rib *r, struct rib_route *rt)
{
	__u16 i;

	r->fam[family_index(rt->key.family)].routes--;
	route_changed(r, rt);
	prefix_unlink(rt->pfx, rt);
	htab_remove(&r->routes, rt);
	for (i = 0; i < rt->nvar; i++)
		nexthop_put(r, rt->var[i].nh);
	free(rt->var);
	free(rt);
}

static void variant_remove(struct rib *r, struct rib_route *rt, __u16 i)
{
	nexthop_put(r, rt->var[i].nh);
	rt->var[i] = rt->var[--rt->nvar];
	route_changed(r, rt);
	if (!rt->nvar)
		route_free(r, rt);
}

/* The variant of rt that m describes, or -1. */
static int variant_find(const struct rib_route *rt, const struct rib_route_msg *m)
{
	__u16 i;

	for (i = 0; i < rt->nvar; i++) {
		const struct rib_variant *v = &rt->var[i];

		if (m->nhid || v->nhid) {
			if (m->nhid == v->nhid)
				return i;
			continue;
		}
		if (m->paths > 1 || v->paths > 1) {
			if (m->paths > 1 && v->paths > 1)
				return i;
			continue;
		}
		if (v->oif == m->oif && !memcmp(v->gw, m->gw, 16))
			return i;
	}
	return -1;
}

/* The nexthop m's route uses, with a reference. */
static struct rib_nexthop *route_nexthop_of(struct rib *r,
					     const struct rib_route_msg *m)
{
	struct rib_nh_key k;

	if (m->type == RTN_UNICAST && !m->unsupported) {
		if (m->nhid) {
			struct rib_nhobj *o = htab_find(&r->nhobjs, &m->nhid);

			if (o && o->group) {
				o->group->nh->refs++;
				return o->group->nh;
			}
			/* Not (yet) known: the kernel decides until
			 * rib_nhobj_set() brings it. */
			r->nhid_waiting = true;
			k = (struct rib_nh_key){ .kind = XFIB_NH_UNSUPPORTED };
			return nexthop_get(r, &k);
		}
		if (m->paths > 1)
			return paths_nexthop(r, m->path, m->npath);
	}
	route_nh_key(m, &k);
	return nexthop_get(r, &k);
}

/*
 * As route_nexthop_of(), but a route whose nexthop or group cannot be
 * had (a full table, no memory) goes to the kernel: left out, a covering
 * route would forward its packets elsewhere.
 */
static struct rib_nexthop *route_nexthop(struct rib *r, const struct rib_route_msg *m)
{
	struct rib_nh_key k = { .kind = XFIB_NH_UNSUPPORTED };
	struct rib_nexthop *nh = route_nexthop_of(r, m);
	char a[INET6_ADDRSTRLEN];

	if (nh)
		return nh;
	/* One line per batch: the rest are counted (rib_commit). */
	if (!r->nh_fallbacks++)
		pr_warn("no nexthop for route %s/%u: the kernel forwards to it",
			inet_ntop(m->key.family, m->key.dst, a, sizeof(a)),
			m->key.plen);
	rib_nh_unsupported(r); /* kept referenced: found, not allocated */
	return nexthop_get(r, &k);
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

static void variant_set_nh(struct rib *r, struct rib_route *rt, __u16 i,
			   struct rib_nexthop *nh, const struct rib_path *single)
{
	struct rib_variant *v = &rt->var[i];

	nexthop_put(r, v->nh);
	v->nh = nh;
	if (single) {
		v->paths = 1;
		v->oif = single->key.ifindex;
		memcpy(v->gw, single->key.gw, 16);
	}
	route_changed(r, rt);
}

/*
 * Rebuilds multipath variant i of rt without the paths drop() selects:
 * the kernel takes a path out of a route when its device goes down, or,
 * for IPv6, when one path is deleted. Returns the paths dropped.
 */
static int variant_drop_paths(struct rib *r, struct rib_route *rt, __u16 i,
			      bool (*drop)(const struct rib_nh_key *, const void *),
			      const void *arg)
{
	struct rib_path p[XFIB_GROUP_MEMBERS];
	struct rib_group *g = rt->var[i].nh->group;
	struct rib_nexthop *nh;
	__u16 n, j, kept = 0;

	n = group_paths(g, p);
	for (j = 0; j < n; j++)
		if (!drop(&p[j].key, arg))
			p[kept++] = p[j];
	if (kept == n)
		return 0;
	if (!kept) {
		variant_remove(r, rt, i);
		return n;
	}
	nh = paths_nexthop(r, p, kept);
	if (!nh) {
		/* Keep the variant; the kernel handles packets to the dead
		 * path (its egress is down). A resync retries. */
		r->resync_wanted = true;
		return 0;
	}
	rt->var[i].paths = kept;
	variant_set_nh(r, rt, i, nh, kept == 1 ? &p[0] : NULL);
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

/* A multipath variant of a route (a shared group), not a nexthop object. */
static bool variant_is_multipath(const struct rib_variant *v)
{
	return v->paths > 1 && !v->nhid && v->nh->key.kind == XFIB_NH_GROUP &&
	       v->nh->group;
}

void rib_route_set(struct rib *r, const struct rib_route_msg *m, bool replace,
		   bool append)
{
	struct rib_route *rt = htab_find(&r->routes, &m->key);
	struct rib_variant *v;
	struct rib_nexthop *nh;
	int i = -1, j;

	if (!route_table_mirrored(r, m->key.table))
		return;
	nh = route_nexthop(r, m);
	if (!nh)
		return;
	if (!rt) {
		rt = calloc(1, sizeof(*rt));
		if (!rt) {
			nexthop_put(r, nh);
			return;
		}
		rt->key = m->key;
		rt->pfx = prefix_get(r, &m->key);
		if (!rt->pfx) {
			nexthop_put(r, nh);
			free(rt);
			return;
		}
		rt->pfx_next = rt->pfx->routes;
		rt->pfx->routes = rt;
		htab_insert(&r->routes, rt);
		r->fam[family_index(m->key.family)].routes++;
	} else if (m->key.family == AF_INET) {
		/*
		 * A second IPv4 route with the same key (an alias, "ip route
		 * append"): which one forwards, and which one a later delete
		 * removes, is the kernel's business. Ask it with a dump.
		 */
		if (append && !replace && !rt->var[0].stale) {
			pr_debug("ipv4 route alias appended: resync");
			r->resync_wanted = true;
		}
		i = 0;
	} else {
		i = variant_find(rt, m);
		if (i < 0 && replace) {
			/* IPv6 replaces the route of that metric; with
			 * several, we cannot tell which one: ask. */
			if (rt->nvar == 1)
				i = 0;
			else
				r->resync_wanted = true;
		}
	}
	if (i < 0) {
		v = realloc(rt->var, (rt->nvar + 1) * sizeof(*v));
		if (!v) {
			nexthop_put(r, nh);
			if (!rt->nvar)
				route_free(r, rt);
			return;
		}
		rt->var = v;
		i = rt->nvar++;
		rt->var[i].nh = NULL;
	}
	v = &rt->var[i];
	nexthop_put(r, v->nh);
	v->nh = nh;
	v->oif = m->oif;
	memcpy(v->gw, m->gw, 16);
	v->nhid = m->nhid;
	v->paths = m->paths;
	v->type = m->type;
	v->stale = false;
	route_changed(r, rt);

	/*
	 * IPv6 keeps each path of a multipath route as a sibling route and
	 * announces the whole set whenever one joins ("ip -6 route append"):
	 * single-path variants we hold for its paths are now its siblings.
	 */
	if (m->key.family == AF_INET6 && m->paths > 1 && !m->nhid) {
		for (j = rt->nvar - 1; j >= 0; j--) {
			if (j == i || rt->var[j].paths > 1 || rt->var[j].nhid ||
			    !msg_has_path(m, &rt->var[j]))
				continue;
			variant_remove(r, rt, j);
			if (i == rt->nvar) /* moved into slot j */
				i = j;
		}
	}
}

void rib_route_del(struct rib *r, const struct rib_route_msg *m)
{
	struct rib_route *rt = htab_find(&r->routes, &m->key);
	int i;

	if (!rt)
		return;
	if (m->key.family == AF_INET) {
		route_free(r, rt);
		return;
	}
	i = variant_find(rt, m);
	if (i >= 0) {
		variant_remove(r, rt, i);
		return;
	}
	/* Deleting one path of an IPv6 multipath route is announced as the
	 * deletion of a single-path route we never saw. */
	if (m->paths != 1 || m->nhid)
		return;
	for (i = rt->nvar - 1; i >= 0; i--) {
		if (variant_is_multipath(&rt->var[i]) &&
		    variant_drop_paths(r, rt, i, path_is, m))
			return;
	}
}

/*
 * The nexthop index the dataplane uses for rt: one answer, or the kernel
 * when IPv6 holds several routes of the same metric that are not
 * siblings (the kernel picks one of them by its own rules).
 */
__u32 rib_route_nh(struct rib *r, const struct rib_route *rt)
{
	__u32 idx = rt->var[0].nh->idx;
	__u16 i;

	for (i = 1; i < rt->nvar; i++)
		if (rt->var[i].nh->idx != idx)
			return rib_nh_unsupported(r);
	return idx;
}

/*
 * The kernel flushes the routes through a device that goes down or away,
 * without announcing the IPv4 ones (fib_table_flush). Do the same here.
 * Down (gone false), the local table keeps its RTN_LOCAL routes: the
 * addresses stay the router's. It loses the IPv4 broadcast routes; IPv6
 * announces what it removes. Gone, nothing through the device remains.
 */
static void routes_flush_dev(struct rib *r, int ifindex, bool gone)
{
	__u32 dev = ifindex;
	struct rib_route *rt;
	size_t b;
	int i;

	htab_for_each(&r->routes, rt, tmp, b) {
		bool local = rt->key.table == RT_TABLE_LOCAL;

		if (local && !gone && rt->key.family != AF_INET)
			continue;
		/* Backwards: removing the last variant frees rt. Nexthop
		 * objects are flushed on their own (nhobj_flush_dev). */
		for (i = rt->nvar - 1; i >= 0; i--) {
			const struct rib_variant *v = &rt->var[i];
			const struct rib_nh_key *k = &v->nh->key;

			if (local && !gone && v->type == RTN_LOCAL)
				continue;
			if (variant_is_multipath(v))
				variant_drop_paths(r, rt, i, path_on_dev, &dev);
			else if ((k->kind != XFIB_NH_GROUP && k->ifindex == dev) ||
				 (local && v->oif == ifindex))
				variant_remove(r, rt, i);
		}
	}
}

/* ---- nexthop objects ------------------------------------------------- */

/* The paths o stands for: its own, or its members' with the group's
 * weights (members not known yet are left out until they are). */
static __u16 nhobj_paths(struct rib *r, const struct rib_nhobj *o,
			 struct rib_path *p)
{
	__u16 i, n = 0;

	if (!o->is_group) {
		p[0] = o->path;
		return 1;
	}
	for (i = 0; i < o->ngrp; i++) {
		const struct rib_nhobj *m = htab_find(&r->nhobjs, &o->grp[i].id);

		if (!m || m->is_group)
			continue;
		p[n] = m->path;
		p[n++].weight = o->grp[i].weight;
	}
	return n;
}

/* Routes that named o's id before o was known point at its group now. */
static void routes_take_nhobj(struct rib *r, struct rib_nhobj *o)
{
	struct rib_route *rt;
	bool waiting = false;
	size_t b;
	__u16 v;

	htab_for_each(&r->routes, rt, tmp, b) {
		for (v = 0; v < rt->nvar; v++) {
			if (!rt->var[v].nhid ||
			    rt->var[v].nh->key.kind != XFIB_NH_UNSUPPORTED)
				continue;
			if (rt->var[v].nhid != o->id) {
				waiting = true;
				continue;
			}
			o->group->nh->refs++;
			variant_set_nh(r, rt, v, o->group->nh, NULL);
		}
	}
	r->nhid_waiting = waiting;
}

/* Writes o's group: routes by o's id see the change at once. */
static void nhobj_apply(struct rib *r, struct rib_nhobj *o)
{
	struct rib_nexthop *member[XFIB_GROUP_MEMBERS];
	struct rib_path p[XFIB_GROUP_MEMBERS];
	struct rib_group_key k;
	__u16 n = nhobj_paths(r, o, p);

	if (o->group)
		group_set(r, o->group, p, n);
	else if (!group_members(r, p, n, &k, member))
		o->group = group_new(r, &k, member, false);
}

static bool nhobj_has_member(const struct rib_nhobj *g, __u32 id)
{
	__u16 i;

	for (i = 0; i < g->ngrp; i++)
		if (g->grp[i].id == id)
			return true;
	return false;
}

/* Ids of the groups that list id, or of the single nexthops on a device
 * (id 0, dev): what a change or a flush has to visit. Returns how many. */
static size_t nhobj_collect(struct rib *r, __u32 id, __u32 dev, __u32 **out)
{
	struct rib_nhobj *o;
	size_t i, n = 0;

	*out = malloc(r->nhobjs.count * sizeof(**out) + 1);
	if (!*out)
		return 0;
	htab_for_each(&r->nhobjs, o, tmp, i) {
		if (id ? o->is_group && nhobj_has_member(o, id) :
			 !o->is_group && o->path.key.kind != XFIB_NH_GROUP &&
				 o->path.key.ifindex == dev &&
				 (o->path.key.kind == XFIB_NH_GATEWAY ||
				  o->path.key.kind == XFIB_NH_CONNECTED))
			(*out)[n++] = o->id;
	}
	return n;
}

static bool nhobj_msg_same(const struct rib_nhobj *o, const struct rib_nhobj_msg *m)
{
	if (!o->group || o->is_group != m->is_group)
		return false;
	if (!m->is_group)
		return !memcmp(&o->path, &m->path, sizeof(m->path));
	return o->ngrp == m->ngrp &&
	       !memcmp(o->grp, m->grp, m->ngrp * sizeof(m->grp[0]));
}

void rib_nhobj_set(struct rib *r, const struct rib_nhobj_msg *m)
{
	struct rib_nhobj *o = htab_find(&r->nhobjs, &m->id);
	size_t i, n;
	__u32 *ids;
	void *grp = NULL;

	if (o && nhobj_msg_same(o, m)) {
		o->stale = false;
		return;
	}
	if (m->is_group && m->ngrp) {
		grp = malloc(m->ngrp * sizeof(m->grp[0]));
		if (!grp)
			return;
		memcpy(grp, m->grp, m->ngrp * sizeof(m->grp[0]));
	}
	if (!o) {
		o = calloc(1, sizeof(*o));
		if (!o) {
			free(grp);
			return;
		}
		o->id = m->id;
		htab_insert(&r->nhobjs, o);
	}
	o->stale = false;
	o->is_group = m->is_group;
	o->path = m->path;
	free(o->grp);
	o->grp = grp;
	o->ngrp = m->is_group ? m->ngrp : 0;
	nhobj_apply(r, o);
	if (r->nhid_waiting && o->group)
		routes_take_nhobj(r, o);
	/* Groups that name it, whether they saw it before or not. */
	if (!o->is_group) {
		n = nhobj_collect(r, o->id, 0, &ids);
		for (i = 0; i < n; i++)
			nhobj_apply(r, htab_find(&r->nhobjs, &ids[i]));
		free(ids);
	}
}

/*
 * The kernel removes the routes that use a deleted nexthop object without
 * announcing it, and takes the object out of its groups, deleting a group
 * left empty. Do the same.
 */
void rib_nhobj_del(struct rib *r, __u32 id)
{
	struct rib_nhobj *o = htab_find(&r->nhobjs, &id);
	struct rib_route *rt;
	size_t b, i, n;
	__u32 *ids = NULL;
	int v;

	if (!o)
		return;
	htab_for_each(&r->routes, rt, tmp, b)
		for (v = rt->nvar - 1; v >= 0; v--)
			if (rt->var[v].nhid == id)
				variant_remove(r, rt, v);
	htab_remove(&r->nhobjs, o);
	n = o->is_group ? 0 : nhobj_collect(r, id, 0, &ids);
	for (i = 0; i < n; i++) {
		struct rib_nhobj *g = htab_find(&r->nhobjs, &ids[i]);
		__u16 j, k = 0;

		if (!g)
			continue;
		for (j = 0; j < g->ngrp; j++)
			if (g->grp[j].id != id)
				g->grp[k++] = g->grp[j];
		g->ngrp = k;
		if (k)
			nhobj_apply(r, g);
		else
			rib_nhobj_del(r, g->id);
	}
	free(ids);
	if (o->group)
		nexthop_put(r, o->group->nh);
	free(o->grp);
	free(o);
}

/* The kernel deletes the nexthop objects of a device that goes down or
 * loses its carrier, silently. */
static void nhobj_flush_dev(struct rib *r, int ifindex)
{
	size_t i, n;
	__u32 *ids;

	if (!r->nhobjs.count)
		return;
	n = nhobj_collect(r, 0, ifindex, &ids);
	for (i = 0; i < n; i++)
		rib_nhobj_del(r, ids[i]);
	free(ids);
}

/* ---- links --------------------------------------------------------- */

static void link_neighs_refresh(struct rib *r, int ifindex, bool drop)
{
	struct rib_neigh *n;
	size_t i;

	htab_for_each(&r->neighs, n, tmp, i) {
		if (n->key.ifindex != (__u32)ifindex)
			continue;
		if (drop) {
			n->in_kernel = false;
			n->usable = false;
		}
		neigh_write_words(r, n);
		if (drop)
			neigh_put(r, n);
	}
}

void rib_link_set(struct rib *r, const struct rib_link_msg *m)
{
	struct rib_link *l = link_find(r, m->ifindex);
	bool was_up, was_running, mac_changed;

	if (!l) {
		l = calloc(1, sizeof(*l));
		if (!l)
			return;
		l->ifindex = m->ifindex;
		l->fwd4 = l->rpf4 = -1;
		htab_insert(&r->links, l);
		was_up = m->ifflags & IFF_UP;
		was_running = m->ifflags & IFF_RUNNING;
		mac_changed = true;
	} else {
		was_up = l->ifflags & IFF_UP;
		was_running = l->ifflags & IFF_RUNNING;
		mac_changed = memcmp(l->mac, m->mac, 6) != 0;
	}
	snprintf(l->name, sizeof(l->name), "%s", m->name);
	memcpy(l->mac, m->mac, 6);
	l->mtu = m->mtu;
	l->ifflags = m->ifflags;
	l->stale = false;
	iface_write(r, l);
	if (mac_changed)
		link_neighs_refresh(r, l->ifindex, false);
	if (was_up && !(m->ifflags & IFF_UP)) {
		pr_info("link %s down: flushing its routes", l->name);
		routes_flush_dev(r, l->ifindex, false);
	}
	if ((was_up && !(m->ifflags & IFF_UP)) ||
	    (was_running && !(m->ifflags & IFF_RUNNING)))
		nhobj_flush_dev(r, l->ifindex);
	if (!was_up && (m->ifflags & IFF_UP)) {
		/* The kernel restores some routes silently: read them back. */
		r->resync_wanted = true;
	}
}

void rib_link_del(struct rib *r, int ifindex)
{
	struct rib_link *l = link_find(r, ifindex);

	routes_flush_dev(r, ifindex, true);
	nhobj_flush_dev(r, ifindex);
	link_neighs_refresh(r, ifindex, true);
	bpf_map_delete_elem(bpf_map__fd(r->skel->maps.xfib_ifaces), &ifindex);
	if (l) {
		htab_remove(&r->links, l);
		free(l);
	}
}

void rib_addr_change(struct rib *r, int ifindex, int delta)
{
	struct rib_link *l = link_find(r, ifindex);

	if (l)
		l->addrs += delta;
}

void rib_netconf(struct rib *r, int family, int ifindex, int fwd, int rpf)
{
	struct rib_link *l;
	size_t i;

	if (family == AF_INET6) {
		/* ip6_forward() checks the "all" switch, not the device's. */
		if (ifindex != NETCONFA_IFINDEX_ALL || fwd < 0 || fwd == r->v6_fwd)
			return;
		r->v6_fwd = fwd;
	} else if (ifindex == NETCONFA_IFINDEX_ALL) {
		if (rpf < 0 || rpf == r->v4_rpf_all)
			return;
		r->v4_rpf_all = rpf;
	} else if (ifindex > 0) {
		l = link_find(r, ifindex);
		if (!l)
			return;
		if (fwd >= 0)
			l->fwd4 = fwd;
		if (rpf >= 0)
			l->rpf4 = rpf;
		iface_write(r, l);
		return;
	} else {
		return;
	}
	htab_for_each(&r->links, l, tmp, i)
		iface_write(r, l);
}

/* ---- full sync ----------------------------------------------------- */

void rib_mark_stale(struct rib *r)
{
	struct rib_nhobj *o;
	struct rib_link *l;
	struct rib_neigh *n;
	struct rib_route *rt;
	size_t i;
	int v;

	htab_for_each(&r->links, l, t1, i) {
		l->stale = true;
		l->addrs = 0; /* recounted by the address dump */
	}
	htab_for_each(&r->neighs, n, t2, i)
		n->stale = true;
	htab_for_each(&r->routes, rt, t3, i)
		for (v = 0; v < rt->nvar; v++)
			rt->var[v].stale = true;
	htab_for_each(&r->nhobjs, o, t4, i)
		o->stale = true;
}

void rib_sweep_stale(struct rib *r)
{
	struct rib_nhobj *o;
	struct rib_link *l;
	struct rib_neigh *n;
	struct rib_route *rt;
	struct rib_nexthop *nh;
	size_t i;
	int v;

	size_t nstale = 0;
	__u32 *stale;

	htab_for_each(&r->routes, rt, t1, i)
		for (v = rt->nvar - 1; v >= 0; v--)
			if (rt->var[v].stale)
				variant_remove(r, rt, v);
	/* Deleting a nexthop object can delete a group: collect first. */
	stale = malloc(r->nhobjs.count * sizeof(*stale) + 1);
	if (stale) {
		htab_for_each(&r->nhobjs, o, t5, i)
			if (o->stale)
				stale[nstale++] = o->id;
		for (i = 0; i < nstale; i++)
			rib_nhobj_del(r, stale[i]);
		free(stale);
	}
	htab_for_each(&r->neighs, n, t2, i) {
		if (n->stale && n->in_kernel) {
			n->in_kernel = false;
			n->usable = false;
			neigh_write_words(r, n);
			neigh_put(r, n);
		}
	}
	htab_for_each(&r->links, l, t3, i)
		if (l->stale)
			rib_link_del(r, l->ifindex);
	/* Adopted nexthops that no route took back. */
	htab_for_each(&r->nexthops, nh, t4, i)
		if (nh->refs == 0)
			nexthop_free(r, nh);
}

/* ---- adoption ------------------------------------------------------ */

int rib_adopt(struct rib *r)
{
	__u32 i, nh_n = 0, neigh_n = 0;

	for (i = 1; i < XFIB_NEIGH_MAX; i++) {
		struct xfib_neigh *e = &r->neigh_map[i];
		struct rib_neigh *n;

		if (!e->family)
			continue;
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->key.ifindex = e->ifindex;
		n->key.family = e->family;
		memcpy(n->key.addr, e->addr, 16);
		n->idx = i;
		memcpy(n->mac, e->dmac, 6);
		n->usable = e->state == XFIB_NEIGH_VALID;
		/* Kept as the kernel's until a dump says otherwise. */
		n->in_kernel = true;
		n->stale = true;
		idx_take(r->neigh_free, &r->neigh_nfree, i);
		htab_insert(&r->neighs, n);
		neigh_n++;
	}
	for (i = XFIB_NH_IDX_FIRST_FREE; i < XFIB_NEXTHOP_MAX; i++) {
		struct xfib_nexthop *e = &r->nh_map[i];
		struct rib_nexthop *nh;

		if (e->kind == XFIB_NH_NONE)
			continue;
		nh = calloc(1, sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		nh->key.kind = e->kind;
		nh->key.family = e->family;
		nh->key.mtu = e->mtu;
		nh->key.ifindex = e->ifindex;
		memcpy(nh->key.gw, e->gw, 16);
		nh->idx = i;
		if (e->kind == XFIB_NH_GROUP) {
			/* Its buckets keep serving until a route takes a new
			 * group; freed with the nexthop at the sweep. */
			if (e->group >= XFIB_GROUP_MAX) {
				free(nh);
				idx_take(r->nh_free, &r->nh_nfree, i);
				continue;
			}
			nh->key.ifindex = e->group;
			idx_take(r->grp_free, &r->grp_nfree, e->group);
			r->ngroups++;
		}
		if (e->kind == XFIB_NH_GATEWAY) {
			struct rib_neigh_key k = { .ifindex = e->ifindex,
						   .family = e->family };

			memcpy(k.addr, e->gw, 16);
			nh->neigh = htab_find(&r->neighs, &k);
			if (!nh->neigh || nh->neigh->idx != e->neigh) {
				/* Inconsistent leftovers: leave the index
				 * alone, the next instance will not use it. */
				free(nh);
				idx_take(r->nh_free, &r->nh_nfree, i);
				continue;
			}
			nh->neigh->nh_refs++;
		}
		idx_take(r->nh_free, &r->nh_nfree, i);
		htab_insert(&r->nexthops, nh);
		nh_n++;
	}
	if (nh_n || neigh_n)
		pr_info("adopted %u nexthops and %u neighbours from the pinned maps",
			nh_n, neigh_n);
	return 0;
}

/* ---- grace periods ------------------------------------------------- */

int rib_rcu_sync(struct rib *r)
{
	__u32 key = 0;

	/* Updating a map-in-map returns after synchronize_rcu(): every XDP
	 * program that started before this call has finished. */
	if (bpf_map_update_elem(bpf_map__fd(r->skel->maps.xfib_rcu_sync), &key,
				&r->rcu_inner_fd, BPF_ANY))
		return -errno;
	return 0;
}

bool rib_retired_pending(const struct rib *r)
{
	return r->nh_nretired || r->neigh_nretired || r->grp_nretired;
}

int rib_reclaim(struct rib *r)
{
	__u32 i;
	int err;

	if (!rib_retired_pending(r))
		return 0;
	err = rib_rcu_sync(r);
	if (err)
		return err;
	for (i = 0; i < r->nh_nretired; i++) {
		memset(&r->nh_map[r->nh_retired[i]], 0, sizeof(*r->nh_map));
		r->nh_free[r->nh_nfree++] = r->nh_retired[i];
	}
	for (i = 0; i < r->neigh_nretired; i++) {
		memset(&r->neigh_map[r->neigh_retired[i]], 0,
		       sizeof(*r->neigh_map));
		r->neigh_free[r->neigh_nfree++] = r->neigh_retired[i];
	}
	for (i = 0; i < r->grp_nretired; i++) {
		memset(&r->grp_map[r->grp_retired[i]], 0, sizeof(*r->grp_map));
		r->grp_free[r->grp_nfree++] = r->grp_retired[i];
	}
	r->nh_nretired = r->neigh_nretired = r->grp_nretired = 0;
	return 0;
}

void rib_write_daemon_info(struct rib *r, struct xfib_daemon *info)
{
	__u32 key = 0;

	info->pid = getpid();
	info->table = r->table;
	info->links = r->links.count;
	info->neighs = r->neighs.count;
	info->nexthops = r->nexthops.count;
	info->groups = r->ngroups;
	bpf_map_update_elem(bpf_map__fd(r->skel->maps.xfib_daemon), &key, info,
			    BPF_ANY);
}

/* ---- setup --------------------------------------------------------- */

int rib_init(struct rib *r, struct xfib_fwd_bpf *skel, __u32 table)
{
	__u32 i;
	int err;

	memset(r, 0, sizeof(*r));
	r->skel = skel;
	r->table = table;
	r->v6_fwd = -1;
	r->v4_rpf_all = 0;
	r->rcu_inner_fd = -1;
	/* Assumed until the first rule dump says otherwise (before any publish). */
	r->fam[XFIB_V4].rules_ok = r->fam[XFIB_V6].rules_ok = true;
	err = htab_init(&r->links, offsetof(struct rib_link, node),
			offsetof(struct rib_link, ifindex), sizeof(int));
	err = err ?: htab_init(&r->neighs, offsetof(struct rib_neigh, node),
			       offsetof(struct rib_neigh, key),
			       sizeof(struct rib_neigh_key));
	err = err ?: htab_init(&r->nexthops, offsetof(struct rib_nexthop, node),
			       offsetof(struct rib_nexthop, key),
			       sizeof(struct rib_nh_key));
	err = err ?: htab_init(&r->routes, offsetof(struct rib_route, node),
			       offsetof(struct rib_route, key),
			       sizeof(struct rib_route_key));
	err = err ?: htab_init(&r->prefixes, offsetof(struct rib_prefix, node),
			       offsetof(struct rib_prefix, key),
			       sizeof(struct rib_prefix_key));
	err = err ?: htab_init(&r->groups, offsetof(struct rib_group, node),
			       offsetof(struct rib_group, key),
			       sizeof(struct rib_group_key));
	err = err ?: htab_init(&r->nhobjs, offsetof(struct rib_nhobj, node),
			       offsetof(struct rib_nhobj, id), sizeof(__u32));
	err = err ?: ptree_init(&r->tree[XFIB_V4][0], 32);
	err = err ?: ptree_init(&r->tree[XFIB_V4][1], 32);
	err = err ?: ptree_init(&r->tree[XFIB_V6][0], 128);
	err = err ?: ptree_init(&r->tree[XFIB_V6][1], 128);
	if (err)
		return err;

	r->nh_free = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->nh_retired = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->neigh_free = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->neigh_retired = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->grp_free = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->grp_retired = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	if (!r->nh_free || !r->nh_retired || !r->neigh_free ||
	    !r->neigh_retired || !r->grp_free || !r->grp_retired)
		return -ENOMEM;
	/* Stacks pop from the top: push high indexes first. */
	for (i = XFIB_NEXTHOP_MAX - 1; i >= XFIB_NH_IDX_FIRST_FREE; i--)
		r->nh_free[r->nh_nfree++] = i;
	for (i = XFIB_NEIGH_MAX - 1; i >= 1; i--)
		r->neigh_free[r->neigh_nfree++] = i;
	for (i = XFIB_GROUP_MAX; i-- > 0;)
		r->grp_free[r->grp_nfree++] = i;

	r->nh_map = xfib_map_mmap(skel->maps.xfib_nexthops, true, &r->nh_map_len);
	r->neigh_map = xfib_map_mmap(skel->maps.xfib_neighs, true,
				     &r->neigh_map_len);
	r->grp_map = xfib_map_mmap(skel->maps.xfib_nh_groups, true,
				   &r->grp_map_len);
	if (!r->nh_map || !r->neigh_map || !r->grp_map)
		return -errno;

	r->rcu_inner_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "xfib_rcu_inner",
					 sizeof(__u32), sizeof(__u32), 1, NULL);
	if (r->rcu_inner_fd < 0)
		return -errno;
	return 0;
}

void rib_fini(struct rib *r)
{
	struct rib_nhobj *o;
	struct rib_group *g;
	struct rib_prefix *p;
	struct rib_link *l;
	int f;
	struct rib_neigh *n;
	struct rib_route *rt;
	struct rib_nexthop *nh;
	size_t i;

	/* Only our memory: the dataplane keeps its maps and keeps forwarding. */
	htab_for_each(&r->routes, rt, t1, i) {
		free(rt->var);
		free(rt);
	}
	htab_for_each(&r->nexthops, nh, t2, i)
		free(nh);
	htab_for_each(&r->groups, g, t6, i)
		free(g);
	htab_for_each(&r->nhobjs, o, t7, i) {
		if (o->group)
			free(o->group);
		free(o->grp);
		free(o);
	}
	htab_for_each(&r->neighs, n, t3, i)
		free(n);
	htab_for_each(&r->links, l, t4, i)
		free(l);
	htab_for_each(&r->prefixes, p, t5, i)
		free(p);
	for (f = 0; f < XFIB_FAMILIES; f++) {
		ptree_fini(&r->tree[f][0]);
		ptree_fini(&r->tree[f][1]);
		free(r->fam[f].chg);
	}
	htab_free(&r->nhobjs);
	htab_free(&r->groups);
	htab_free(&r->prefixes);
	htab_free(&r->routes);
	htab_free(&r->nexthops);
	htab_free(&r->neighs);
	htab_free(&r->links);
	if (r->nh_map)
		munmap(r->nh_map, r->nh_map_len);
	if (r->neigh_map)
		munmap(r->neigh_map, r->neigh_map_len);
	if (r->grp_map)
		munmap(r->grp_map, r->grp_map_len);
	if (r->rcu_inner_fd >= 0)
		close(r->rcu_inner_fd);
	free(r->nh_free);
	free(r->nh_retired);
	free(r->neigh_free);
	free(r->neigh_retired);
	free(r->grp_free);
	free(r->grp_retired);
}
