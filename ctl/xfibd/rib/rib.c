// SPDX-License-Identifier: GPL-2.0-only
/*
 * The control-plane copy of the kernel FIB and the index arrays it feeds:
 * its setup, the full resynchronisation (mark everything stale, dump,
 * sweep what the dump did not confirm), the adoption of a previous
 * xfibd's entries, and the grace periods after which freed indexes are
 * reused. The parts it holds are in the other rib_*.c files (rib_priv.h
 * lists them); this file is their top and none of them calls it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "rib_priv.h"

/* ---- full sync ----------------------------------------------------- */

void rib_mark_stale(struct rib *r)
{
	struct rib_link *l;
	struct rib_neigh *n;
	size_t i;

	htab_for_each(&r->links, l, t1, i) {
		l->stale = true;
		l->naddr4 = 0; /* read again by the address dump */
	}
	htab_for_each(&r->neighs, n, t2, i)
		n->stale = true;
	fdb_mark_stale(r);
	routes_mark_stale(r);
	nhobjs_mark_stale(r);
}

void rib_sweep_stale(struct rib *r)
{
	struct rib_link *l;
	struct rib_neigh *n;
	struct rib_nexthop *nh;
	size_t i;

	routes_sweep_stale(r);
	nhobjs_sweep_stale(r);
	tables_loaded(r);
	htab_for_each(&r->neighs, n, t2, i) {
		if (!n->stale)
			continue;
		if (n->in_kernel) {
			n->in_kernel = false;
			n->usable = false;
			neigh_write_words(r, n);
		}
		/* Also one a failed delete left (neigh_put()). */
		neigh_put(r, n);
	}
	/* The dump may have left a link without the IPv4 addresses it had
	 * (rp_filter flags): each port is rewritten, if it changed. */
	htab_for_each(&r->links, l, t3, i) {
		if (l->stale)
			rib_link_del(r, l->ifindex);
		else
			iface_write(r, l);
	}
	port_sweep(r);
	fdb_sweep_stale(r);
	/* Adopted nexthops that no route took back. */
	htab_for_each(&r->nexthops, nh, t4, i)
		if (nh->refs == 0)
			nexthop_free(r, nh);
}

/* ---- adoption ------------------------------------------------------ */

/*
 * Takes over entry i of the nexthop array as a previous xfibd left it: 1
 * if adopted, 0 if there is none or it is left alone (inconsistent
 * leftovers: the next instance will not use it), -ENOMEM. Its index is
 * out of use either way: a published instance may name it.
 */
static int nexthop_adopt(struct rib *r, __u32 i)
{
	const struct xfib_nexthop *e = &r->nh_map[i];
	bool dflt = XFIB_NH_IS_DFLT(i);
	struct rib_nexthop *nh;

	if (e->kind == XFIB_NH_NONE)
		return 0;
	if (dflt)
		idx_take(r->nh_dflt_free, &r->nh_dflt_nfree, i);
	else
		idx_take(r->nh_free, &r->nh_nfree, i);
	if (e->kind == XFIB_NH_GROUP && e->group >= XFIB_GROUP_MAX)
		return 0;
	nh = calloc(1, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	nh->key.kind = e->kind;
	nh->key.family = e->family;
	nh->key.mtu = e->mtu;
	nh->key.ifindex = e->ifindex;
	memcpy(nh->key.gw, e->gw, 16);
	nh->key.dflt = dflt;
	nh->idx = i;
	if (e->kind == XFIB_NH_GROUP) {
		/* Its buckets keep serving until a route takes a new group;
		 * freed with the nexthop at the sweep. A default route's
		 * alias of a group takes the group too, so that no new group
		 * does while the entry may name it, but leaves it to the
		 * group's own nexthop (of the higher indexes) to free. */
		nh->key.ifindex = e->group;
		r->grp_first[e->group] = e->ifindex;
		idx_take(r->grp_free, &r->grp_nfree, e->group);
		r->ngroups += !dflt;
	}
	if (e->kind == XFIB_NH_GATEWAY) {
		struct rib_neigh_key k = { .ifindex = e->ifindex,
					   .family = e->family };

		memcpy(k.addr, e->gw, 16);
		nh->neigh = htab_find(&r->neighs, &k);
		if (!nh->neigh || nh->neigh->idx != e->neigh) {
			free(nh);
			return 0;
		}
		nh->neigh->nh_refs++;
	}
	htab_insert(&r->nexthops, nh);
	return 1;
}

int rib_adopt(struct rib *r)
{
	__u32 i, nh_n = 0, neigh_n = 0;
	int err;

	fdb_adopt(r);
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
	for (i = XFIB_NH_DFLT_FIRST; i < XFIB_NEXTHOP_MAX; i++) {
		err = nexthop_adopt(r, i);
		if (err < 0)
			return err;
		nh_n += err;
	}
	if (nh_n || neigh_n)
		pr_info("adopted %u nexthops and %u neighbours from the pinned maps",
			nh_n, neigh_n);
	return 0;
}

/* ---- grace periods ------------------------------------------------- */

int rib_rcu_sync(struct rib *r)
{
	int err = r->dp.ops->grace_period(r->dp.ctx);

	/* fib.c publishes the two families from two threads. */
	if (!err)
		__atomic_add_fetch(&r->epoch, 1, __ATOMIC_RELAXED);
	return err;
}

bool rib_retired_pending(const struct rib *r)
{
	return r->nh_nretired || r->neigh_nretired || r->grp_nretired ||
	       r->ports_pending;
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
		__u32 idx = r->nh_retired[i];

		memset(&r->nh_map[idx], 0, sizeof(*r->nh_map));
		if (XFIB_NH_IS_DFLT(idx))
			r->nh_dflt_free[r->nh_dflt_nfree++] = idx;
		else
			r->nh_free[r->nh_nfree++] = idx;
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
	port_flush(r);
	return 0;
}

void rib_write_daemon_info(struct rib *r, struct xfib_daemon *info)
{
	info->pid = getpid();
	info->table = r->table;
	info->links = r->links.count;
	info->neighs = r->neighs.count;
	info->nexthops = r->nexthops.count;
	info->groups = r->ngroups;
	info->nhobjs = r->nhobjs_known;
	info->no_room = r->no_room;
	r->dp.ops->daemon_info(r->dp.ctx, info);
}

void rib_mem(const struct rib *r, struct rib_mem *m)
{
	const struct htab *t[] = { &r->links, &r->neighs, &r->nexthops,
				   &r->prefixes[XFIB_V4], &r->prefixes[XFIB_V6],
				   &r->groups, &r->nhobjs };
	size_t i;
	int f, s;

	memset(m, 0, sizeof(*m));
	m->routes = objpool_bytes(&r->route_pool) +
		    objpool_bytes(&r->route_src_pool) +
		    objpool_bytes(&r->variant_pool) +
		    objpool_bytes(&r->prefix_pool[XFIB_V4]) +
		    objpool_bytes(&r->prefix_pool[XFIB_V6]);
	for (f = 0; f < XFIB_FAMILIES; f++) {
		m->trees += ptree_mem_bytes(&r->tree[f][0]) +
			    ptree_mem_bytes(&r->tree[f][1]);
		for (s = 1; s < XFIB_TABLE_SLOTS; s++)
			m->trees += ptree_mem_bytes(&r->tslot[f][s].tree);
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		m->buckets += t[i]->nbuckets * sizeof(*t[i]->buckets);
}

/* ---- setup --------------------------------------------------------- */

int rib_init(struct rib *r, const struct rib_dp *dp, __u32 table)
{
	__u32 i;
	int err;

	memset(r, 0, sizeof(*r));
	r->dp = *dp;
	r->nh_map = dp->nh;
	r->neigh_map = dp->neigh;
	r->grp_map = dp->grp;
	r->table = table;
	r->v6_fwd = -1;
	r->v4_rpf_all = 0;
	/* Assumed until the first rule dump says otherwise (before any publish). */
	r->fam[XFIB_V4].rules_ok = r->fam[XFIB_V6].rules_ok = true;
	objpool_init(&r->route_pool, sizeof(struct rib_route));
	objpool_init(&r->route_src_pool, sizeof(struct rib_route) + 16);
	objpool_init(&r->variant_pool, sizeof(struct rib_variant));
	for (i = 0; i < XFIB_FAMILIES; i++)
		objpool_init(&r->prefix_pool[i],
			     offsetof(struct rib_prefix, key) + prefix_key_len(i));
	err = htab_init(&r->links, offsetof(struct rib_link, node),
			offsetof(struct rib_link, ifindex), sizeof(int));
	err = err ?: htab_init(&r->neighs, offsetof(struct rib_neigh, node),
			       offsetof(struct rib_neigh, key),
			       sizeof(struct rib_neigh_key));
	err = err ?: htab_init(&r->nexthops, offsetof(struct rib_nexthop, node),
			       offsetof(struct rib_nexthop, key),
			       sizeof(struct rib_nh_key));
	for (i = 0; i < XFIB_FAMILIES; i++)
		err = err ?: htab_init(&r->prefixes[i],
				       offsetof(struct rib_prefix, node),
				       offsetof(struct rib_prefix, key),
				       prefix_key_len(i));
	err = err ?: htab_init(&r->groups, offsetof(struct rib_group, node),
			       offsetof(struct rib_group, key),
			       sizeof(struct rib_group_key));
	err = err ?: htab_init(&r->nhobjs, offsetof(struct rib_nhobj, node),
			       offsetof(struct rib_nhobj, id), sizeof(__u32));
	err = err ?: ptree_init(&r->tree[XFIB_V4][0], 32);
	err = err ?: ptree_init(&r->tree[XFIB_V4][1], 32);
	err = err ?: ptree_init(&r->tree[XFIB_V6][0], 128);
	err = err ?: ptree_init(&r->tree[XFIB_V6][1], 128);
	err = err ?: tables_init(r);
	err = err ?: fdb_init(r);
	if (err)
		return err;

	r->nh_free = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->nh_dflt_free = calloc(XFIB_NH_DFLT_COUNT, sizeof(__u32));
	r->nh_retired = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->neigh_free = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->neigh_retired = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->grp_free = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->grp_retired = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->grp_first = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->ports = calloc(XFIB_PORT_MAX, sizeof(*r->ports));
	if (!r->nh_free || !r->nh_dflt_free || !r->nh_retired || !r->neigh_free ||
	    !r->neigh_retired || !r->grp_free || !r->grp_retired || !r->grp_first || !r->ports)
		return -ENOMEM;
	port_init(r);
	err = local4_init(r);
	if (err)
		return err;
	/* Stacks pop from the top: push high indexes first. */
	for (i = XFIB_NEXTHOP_MAX - 1; i >= XFIB_NH_IDX_FIRST_FREE; i--)
		r->nh_free[r->nh_nfree++] = i;
	for (i = XFIB_NH_DFLT_FIRST + XFIB_NH_DFLT_COUNT; i-- > XFIB_NH_DFLT_FIRST;)
		r->nh_dflt_free[r->nh_dflt_nfree++] = i;
	for (i = XFIB_NEIGH_MAX - 1; i >= 1; i--)
		r->neigh_free[r->neigh_nfree++] = i;
	for (i = XFIB_GROUP_MAX; i-- > 0;)
		r->grp_free[r->grp_nfree++] = i;
	return 0;
}

void rib_fini(struct rib *r)
{
	struct rib_group *g;
	struct rib_prefix *p;
	struct rib_link *l;
	int f;
	struct rib_neigh *n;
	struct rib_nexthop *nh;
	size_t i;

	/* Only our memory: the dataplane keeps its maps and keeps forwarding. */
	routes_free_all(r);
	htab_for_each(&r->nexthops, nh, t2, i) {
		/* Groups of nexthop objects are not in r->groups. */
		if (nh->group && !nh->group->shared)
			free(nh->group);
		free(nh);
	}
	htab_for_each(&r->groups, g, t6, i)
		free(g);
	nhobjs_free_all(r);
	htab_for_each(&r->neighs, n, t3, i)
		free(n);
	htab_for_each(&r->links, l, t4, i) {
		free(l->addr4);
		free(l);
	}
	tables_fini(r);
	fdb_fini(r);
	objpool_fini(&r->route_pool);
	objpool_fini(&r->route_src_pool);
	objpool_fini(&r->variant_pool);
	for (f = 0; f < XFIB_FAMILIES; f++) {
		htab_for_each(&r->prefixes[f], p, t5, i)
			objpool_free(&r->prefix_pool[f], p);
		objpool_fini(&r->prefix_pool[f]);
		htab_free(&r->prefixes[f]);
		ptree_fini(&r->tree[f][0]);
		ptree_fini(&r->tree[f][1]);
		free(r->fam[f].chg);
		free(r->dirty[f]);
		free(r->rules[f].v);
		free(r->rules_new[f].v);
	}
	htab_free(&r->nhobjs);
	htab_free(&r->groups);
	htab_free(&r->nexthops);
	htab_free(&r->neighs);
	htab_free(&r->links);
	free(r->nh_free);
	free(r->nh_dflt_free);
	free(r->nh_retired);
	free(r->neigh_free);
	free(r->neigh_retired);
	free(r->grp_free);
	free(r->grp_retired);
	free(r->grp_first);
	free(r->ports);
	free(r->exp);
	local4_fini(r);
}
