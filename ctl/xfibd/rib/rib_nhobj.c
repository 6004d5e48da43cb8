// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel nexthop objects (ip nexthop) and the routes that use them.
 *
 * Routing daemons create many objects (zebra one per path and one per
 * set of paths), and hosts may hold tens of thousands, most of them used
 * by no route. So an object costs the dataplane nothing by itself, and
 * every change to one costs work in proportion to what uses it, never
 * to how many objects or routes there are:
 *  - each object lists the route variants that use it (users) and, for a
 *    single nexthop, the groups that list it (parents);
 *  - routes by a single object point at the deduplicated nexthop of its
 *    path, and are re-pointed when the object changes;
 *  - a group object takes an xfib_nh_groups entry when its first route
 *    comes, rewritten bucket by bucket when the object or a member
 *    changes (its routes never need an update), and freed with its last
 *    route;
 *  - an id named before the kernel announced it (a dump lists groups
 *    before members of higher ids) gets a placeholder that lists its
 *    users and parents until it comes.
 * What the kernel removes without a message (the routes of a deleted
 * object, objects of a device that goes down, groups left empty) is
 * removed here the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rib_priv.h"

static struct rib_nhobj *nhobj_find(struct rib *r, __u32 id)
{
	return htab_find(&r->nhobjs, &id);
}

/* The object of id, a placeholder if it is not known yet. */
static struct rib_nhobj *nhobj_get(struct rib *r, __u32 id)
{
	struct rib_nhobj *o = nhobj_find(r, id);

	if (o)
		return o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->id = id;
	htab_insert(&r->nhobjs, o);
	return o;
}

static void nhobj_free(struct rib *r, struct rib_nhobj *o)
{
	htab_remove(&r->nhobjs, o);
	free(o->grp);
	free(o->parents);
	free(o);
}

/* Frees a placeholder nothing names any more. */
static void nhobj_put_placeholder(struct rib *r, struct rib_nhobj *o)
{
	if (!o->known && !o->users && !o->nparents)
		nhobj_free(r, o);
}

/* ---- groups and their members ---------------------------------------- */

static int parent_add(struct rib_nhobj *m, __u32 gid)
{
	if (m->nparents == m->parents_cap) {
		__u32 cap = m->parents_cap ? 2 * m->parents_cap : 4;
		__u32 *p = realloc(m->parents, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		m->parents = p;
		m->parents_cap = cap;
	}
	m->parents[m->nparents++] = gid;
	return 0;
}

static void parent_del(struct rib_nhobj *m, __u32 gid)
{
	__u32 i;

	for (i = 0; i < m->nparents; i++) {
		if (m->parents[i] == gid) {
			m->parents[i] = m->parents[--m->nparents];
			return;
		}
	}
}

/* Group g stops or starts naming its members. */
static void group_unlink_members(struct rib *r, struct rib_nhobj *g)
{
	__u16 i;

	for (i = 0; i < g->ngrp; i++) {
		struct rib_nhobj *m = nhobj_find(r, g->grp[i].id);

		if (!m)
			continue;
		parent_del(m, g->id);
		nhobj_put_placeholder(r, m);
	}
}

static void group_link_members(struct rib *r, struct rib_nhobj *g)
{
	__u16 i;

	for (i = 0; i < g->ngrp; i++) {
		struct rib_nhobj *m = nhobj_get(r, g->grp[i].id);

		/* Out of memory: this member's changes will not reach the
		 * group until the next resync rewrites it. */
		if (!m || parent_add(m, g->id))
			rib_want_resync(r);
	}
}

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
		const struct rib_nhobj *m = nhobj_find(r, o->grp[i].id);

		if (!m || !m->known || m->is_group)
			continue;
		p[n] = m->path;
		p[n++].weight = o->grp[i].weight;
	}
	return n;
}

/* The device of group o's first member, in the order of NHA_GROUP, as
 * the kernel's nh_entries[0] (fib_info_nhc(fi, 0) of a route by it); 0
 * while that member is not known. */
static __u32 nhobj_first_dev(struct rib *r, const struct rib_nhobj *o)
{
	const struct rib_nhobj *m;

	if (!o->ngrp)
		return 0;
	m = nhobj_find(r, o->grp[0].id);
	if (!m || !m->known || m->is_group || !m->path.key.ifindex)
		return 0;
	return m->path.key.ifindex;
}

/* ---- what routes by an object use ------------------------------------ */

/* The nexthop a route by o (with route MTU mtu; a default route's if
 * dflt) uses, with a reference, or NULL when there is no room for it. */
static struct rib_nexthop *nhobj_nexthop(struct rib *r, struct rib_nhobj *o,
					 __u32 mtu, bool dflt)
{
	struct rib_nexthop *member[XFIB_GROUP_MEMBERS];
	struct rib_path p[XFIB_GROUP_MEMBERS];
	struct rib_group_key k;
	struct rib_nh_key nk;

	if (!o->known)
		return nexthop_unsupported(r);
	if (!o->is_group) {
		nk = o->path.key;
		if (nk.kind == XFIB_NH_GATEWAY || nk.kind == XFIB_NH_CONNECTED)
			nk.mtu = mtu > 0xffff ? 0xffff : mtu;
		nh_key_dflt(&nk, dflt);
		return nexthop_get(r, &nk);
	}
	if (o->group) {
		o->group->nh->refs++;
	} else {
		if (group_members(r, p, nhobj_paths(r, o, p), &k, member))
			return NULL;
		k.first_dev = nhobj_first_dev(r, o);
		o->group = group_new(r, &k, member, false);
		if (!o->group)
			return NULL;
		/* The reference group_new() took is the caller's. */
		o->group->obj = o;
	}
	return dflt ? group_nh_dflt(r, o->group->nh) : o->group->nh;
}

static struct rib_nexthop *variant_nexthop(struct rib *r, struct rib_nhobj *o,
					   struct rib_variant *v)
{
	struct rib_nexthop *nh = nhobj_nexthop(r, o, v->mtu, variant_dflt(v));

	variant_no_room(r, v, !nh);
	return nh ?: nexthop_unsupported(r);
}

struct rib_nexthop *nhobj_attach(struct rib *r, struct rib_variant *v)
{
	struct rib_nhobj *o = nhobj_get(r, v->nhid);

	if (!o) {
		/* No memory to remember it by: the kernel decides, and a
		 * resync puts it right. */
		v->nhid = 0;
		rib_want_resync(r);
		return nexthop_unsupported(r);
	}
	v->user_next = o->users;
	if (o->users)
		o->users->user_pprev = &v->user_next;
	v->user_pprev = &o->users;
	o->users = v;
	o->nusers++;
	return variant_nexthop(r, o, v);
}

void nhobj_detach(struct rib *r, struct rib_variant *v)
{
	struct rib_nhobj *o = nhobj_find(r, v->nhid);

	*v->user_pprev = v->user_next;
	if (v->user_next)
		v->user_next->user_pprev = v->user_pprev;
	v->user_next = NULL;
	v->user_pprev = NULL;
	if (o) {
		o->nusers--;
		nhobj_put_placeholder(r, o);
	}
}

/* Points every route by o at what o now stands for. */
static void nhobj_repoint(struct rib *r, struct rib_nhobj *o)
{
	struct rib_variant *v;

	for (v = o->users; v; v = v->user_next) {
		struct rib_nexthop *nh = variant_nexthop(r, o, v);

		if (nh == v->nh)
			nexthop_put(r, nh);
		else
			variant_set_nh(r, v, nh);
	}
}

/* Brings the dataplane in line with a changed object: a group in use is
 * rewritten in place, routes by anything else are re-pointed. */
static void nhobj_apply(struct rib *r, struct rib_nhobj *o)
{
	struct rib_path p[XFIB_GROUP_MEMBERS];

	if (o->is_group && o->group)
		group_set(r, o->group, p, nhobj_paths(r, o, p),
			  nhobj_first_dev(r, o));
	else if (o->users)
		nhobj_repoint(r, o);
}

/* A single nexthop changed or came: the groups that list it too. */
static void nhobj_apply_parents(struct rib *r, struct rib_nhobj *o)
{
	__u32 i;

	for (i = 0; i < o->nparents; i++) {
		struct rib_nhobj *g = nhobj_find(r, o->parents[i]);

		if (g && g->known && g->is_group)
			nhobj_apply(r, g);
	}
}

/* ---- announcements --------------------------------------------------- */

static bool nhobj_msg_same(const struct rib_nhobj *o, const struct rib_nhobj_msg *m)
{
	if (!o->known || o->is_group != m->is_group)
		return false;
	if (!m->is_group)
		return !memcmp(&o->path, &m->path, sizeof(m->path));
	return o->ngrp == m->ngrp &&
	       !memcmp(o->grp, m->grp, m->ngrp * sizeof(m->grp[0]));
}

void rib_nhobj_set(struct rib *r, const struct rib_nhobj_msg *m)
{
	struct rib_nhobj *o;
	void *grp = NULL;
	bool type_changed;

	o = nhobj_find(r, m->id);
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
	o = o ?: nhobj_get(r, m->id);
	if (!o) {
		free(grp);
		return;
	}
	if (!o->known)
		r->nhobjs_known++;
	type_changed = o->known && o->is_group != m->is_group;
	if (o->is_group)
		group_unlink_members(r, o);
	o->known = true;
	o->stale = false;
	o->is_group = m->is_group;
	o->path = m->path;
	free(o->grp);
	o->grp = grp;
	o->ngrp = m->is_group ? m->ngrp : 0;
	if (o->is_group)
		group_link_members(r, o);
	/* The kernel does not turn a nexthop into a group or back; should it
	 * ever, the routes by it take the other kind of nexthop. */
	if (type_changed)
		nhobj_repoint(r, o);
	else
		nhobj_apply(r, o);
	if (!o->is_group)
		nhobj_apply_parents(r, o);
}

/* Takes id out of group g, deleting g if it is left empty (the kernel
 * does). */
static void group_drop_member(struct rib *r, struct rib_nhobj *g, __u32 id)
{
	__u16 j, k = 0;

	for (j = 0; j < g->ngrp; j++)
		if (g->grp[j].id != id)
			g->grp[k++] = g->grp[j];
	g->ngrp = k;
	if (k)
		nhobj_apply(r, g);
	else
		rib_nhobj_del(r, g->id);
}

/*
 * The kernel removes the routes that use a deleted nexthop object without
 * announcing it, and takes the object out of its groups, deleting a group
 * left empty. Do the same.
 */
void rib_nhobj_del(struct rib *r, __u32 id)
{
	struct rib_nhobj *o = nhobj_find(r, id);
	__u32 *parents, n, i;

	if (!o || !o->known)
		return;
	/* The routes by it; o stays (known) while its users go. */
	while (o->users)
		variant_remove(r, o->users);
	if (o->is_group)
		group_unlink_members(r, o);
	/* The groups that list it, from a copy: deleting an emptied group
	 * unlinks it from its members, o among them. */
	parents = o->parents;
	n = o->nparents;
	o->parents = NULL;
	o->nparents = o->parents_cap = 0;
	for (i = 0; i < n; i++) {
		struct rib_nhobj *g = nhobj_find(r, parents[i]);

		if (g && g->known && g->is_group)
			group_drop_member(r, g, id);
	}
	free(parents);
	r->nhobjs_known--;
	nhobj_free(r, o);
}

/* The kernel deletes the nexthop objects of a device that goes down or
 * loses its carrier, silently. */
void nhobj_flush_dev(struct rib *r, int ifindex)
{
	struct rib_nhobj *o;
	size_t i, n = 0;
	__u32 *ids;

	if (!r->nhobjs_known)
		return;
	ids = malloc(r->nhobjs.count * sizeof(*ids));
	if (!ids) {
		rib_want_resync(r);
		return;
	}
	htab_for_each(&r->nhobjs, o, tmp, i) {
		const struct rib_nh_key *k = &o->path.key;

		if (o->known && !o->is_group && k->ifindex == (__u32)ifindex &&
		    (k->kind == XFIB_NH_GATEWAY || k->kind == XFIB_NH_CONNECTED))
			ids[n++] = o->id;
	}
	for (i = 0; i < n; i++)
		rib_nhobj_del(r, ids[i]);
	free(ids);
}

/* ---- full sync ------------------------------------------------------- */

void nhobjs_mark_stale(struct rib *r)
{
	struct rib_nhobj *o;
	size_t i;

	htab_for_each(&r->nhobjs, o, tmp, i)
		o->stale = o->known;
}

void nhobjs_sweep_stale(struct rib *r)
{
	struct rib_nhobj *o;
	size_t i, n = 0;
	__u32 *ids;

	/* Deleting an object can delete a group: collect first. */
	ids = malloc(r->nhobjs.count * sizeof(*ids) + 1);
	if (!ids) {
		rib_want_resync(r);
		return;
	}
	htab_for_each(&r->nhobjs, o, tmp, i)
		if (o->stale)
			ids[n++] = o->id;
	for (i = 0; i < n; i++)
		rib_nhobj_del(r, ids[i]);
	free(ids);
}

void nhobjs_free_all(struct rib *r)
{
	struct rib_nhobj *o;
	size_t i;

	/* Their groups are freed with the nexthops (rib_fini). */
	htab_for_each(&r->nhobjs, o, tmp, i) {
		free(o->grp);
		free(o->parents);
		free(o);
	}
}
