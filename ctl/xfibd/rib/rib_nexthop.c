// SPDX-License-Identifier: GPL-2.0-only
/*
 * The RIB's shared core: neighbours, nexthops and multipath groups, the
 * indexes they hold in the dataplane's arrays, and what is said when an
 * array is full. Routes (rib_route.c), nexthop objects (rib_nhobj.c) and
 * prefixes (rib_prefix.c) take their nexthops here; this file calls none
 * of them.
 *
 * Writes to the dataplane follow one order, so a packet that reads any
 * index sees a complete entry: fill a nexthop/neighbour entry, then publish
 * what points at it (an instance, a hosts entry). Removal runs backwards:
 * unpublish, wait for an RCU grace period (rib_reclaim), then reuse.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "monoclock.h"
#include "rib_priv.h"

/* At most one line per this many ms about routes left to the kernel for
 * want of an index (the rest are counted). */
#define NO_ROOM_LOG_MS 10000

/* ---- dataplane writes ---------------------------------------------- */

/* The first two words of a neighbour entry are each stored with one
 * atomic 8-byte write; the dataplane loads each once. */
void neigh_write_words(struct rib *r, struct rib_neigh *n)
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
	/* A store of its own: the dataplane reads it apart from the words,
	 * and checks the member it names whatever it reads. */
	__atomic_store_n(&e->tx_port, fdb_neigh_port(r, n), __ATOMIC_RELEASE);
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
	if (r->dp.ops->neigh_host_set(r->dp.ctx, &hk, n->idx))
		pr_warn("update neighbour hosts map: %s", strerror(errno));
}

static void nexthop_write(struct rib *r, struct rib_nexthop *nh)
{
	struct xfib_nexthop *e = &r->nh_map[nh->idx];

	e->family = nh->key.family;
	e->mtu = nh->key.mtu;
	if (nh->key.kind == XFIB_NH_GROUP) {
		e->ifindex = r->grp_first[nh->key.ifindex];
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
		rib_no_room(r, "neighbour", XFIB_NEIGH_MAX);
		free(n);
		return NULL;
	}
	htab_insert(&r->neighs, n);
	neigh_write_new(r, n);
	return n;
}

/*
 * Frees n if nothing needs it any more. Its index is reused only once
 * xfib_neigh_hosts no longer leads to it: else an on-link destination
 * would take the next neighbour's MAC. Should the delete fail, n stays,
 * marked unusable in the array (the program hands its packets to the
 * kernel), until the resync asked for here puts it again.
 */
void neigh_put(struct rib *r, struct rib_neigh *n)
{
	struct xfib_neigh_key hk = { .ifindex = n->key.ifindex,
				     .family = n->key.family };
	int err;

	if (n->nh_refs || n->in_kernel)
		return;
	memcpy(hk.addr, n->key.addr, 16);
	err = r->dp.ops->neigh_host_del(r->dp.ctx, &hk);
	if (err && err != -ENOENT) {
		pr_warn("delete from the neighbour hosts map: %s; resynchronising",
			strerror(-err));
		rib_want_resync(r);
		return;
	}
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

void link_neighs_refresh(struct rib *r, int ifindex, bool drop)
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


/* ---- nexthops ------------------------------------------------------ */

struct rib_nexthop *nexthop_get(struct rib *r, const struct rib_nh_key *k)
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
	if (k->dflt ? idx_alloc(r->nh_dflt_free, &r->nh_dflt_nfree, &nh->idx) :
		      idx_alloc(r->nh_free, &r->nh_nfree, &nh->idx)) {
		if (k->dflt)
			rib_no_room(r, "default route nexthop", XFIB_NH_DFLT_COUNT);
		else
			rib_no_room(r, "nexthop", XFIB_NEXTHOP_MAX);
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

void nexthop_free(struct rib *r, struct rib_nexthop *nh)
{
	struct rib_nexthop *base = nh->base;

	r->nh_retired[r->nh_nretired++] = nh->idx;
	htab_remove(&r->nexthops, nh);
	/* A default route's alias of a group leaves the group to its own
	 * nexthop, base. */
	if (nh->key.kind == XFIB_NH_GROUP && !nh->key.dflt) {
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
	nexthop_put(r, base);
}

void nexthop_put(struct rib *r, struct rib_nexthop *nh)
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

struct rib_nexthop *nexthop_unsupported(struct rib *r)
{
	/* Kept referenced by r->nh_unsupported: found, never allocated. */
	if (!rib_nh_unsupported(r))
		return NULL;
	r->nh_unsupported->refs++;
	return r->nh_unsupported;
}

void rib_no_room(struct rib *r, const char *what, __u32 capacity)
{
	__u64 now = mono_ms();

	if (r->no_room_logged && now - r->no_room_logged < NO_ROOM_LOG_MS) {
		r->no_room_new++;
		return;
	}
	pr_warn("%s table full (%u entries): routes that need one more go to the kernel (%u so far)",
		what, capacity, r->no_room + 1);
	r->no_room_logged = now;
	r->no_room_new = 0;
}

void rib_report_no_room(struct rib *r)
{
	if (!r->no_room_new ||
	    mono_ms() - r->no_room_logged < NO_ROOM_LOG_MS)
		return;
	pr_warn("%u more times a full nexthop, neighbour or group table; %u routes go to the kernel for want of room",
		r->no_room_new, r->no_room);
	r->no_room_logged = mono_ms();
	r->no_room_new = 0;
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

/* The group's first device into the entries of its nexthop and of a
 * default route's alias of it: one store each (include/xfib/maps.h). */
static void group_first_write(struct rib *r, struct rib_group *g)
{
	struct rib_nh_key k = g->nh->key;
	struct rib_nexthop *a;

	r->grp_first[k.ifindex] = g->key.first_dev;
	__atomic_store_n(&r->nh_map[g->nh->idx].ifindex, g->key.first_dev,
			 __ATOMIC_RELEASE);
	k.dflt = 1;
	a = htab_find(&r->nexthops, &k);
	if (a)
		__atomic_store_n(&r->nh_map[a->idx].ifindex, g->key.first_dev,
				 __ATOMIC_RELEASE);
}

/*
 * Takes a reference on each path's nexthop and fills key and member[],
 * the weights of paths to the same nexthop added. Members are ordered by
 * what they are, not by index: a group rebuilt with other indexes (by a
 * restarted xfibd) lays its buckets out the same, and flows stay put.
 */
int group_members(struct rib *r, const struct rib_path *p, __u16 n,
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
struct rib_group *group_new(struct rib *r, const struct rib_group_key *k,
				   struct rib_nexthop **member, bool shared)
{
	struct rib_nh_key fk = { .kind = XFIB_NH_GROUP };
	struct rib_group *g = calloc(1, sizeof(*g));
	__u32 gidx, i;

	if (!g)
		goto err;
	if (idx_alloc(r->grp_free, &r->grp_nfree, &gidx)) {
		rib_no_room(r, "multipath group", XFIB_GROUP_MAX);
		goto err;
	}
	g->key = *k;
	memcpy(g->member, member, k->n * sizeof(member[0]));
	group_write(r, gidx, &g->key);
	/* Before the nexthop's entry is written (nexthop_write). */
	r->grp_first[gidx] = k->first_dev;
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
void group_set(struct rib *r, struct rib_group *g, const struct rib_path *p,
	       __u16 n, __u32 first_dev)
{
	struct rib_nexthop *old[XFIB_GROUP_MEMBERS];
	__u32 i, nold = g->key.n;

	memcpy(old, g->member, nold * sizeof(old[0]));
	if (group_members(r, p, n, &g->key, g->member)) {
		/* Keep the old members rather than lose the group. */
		pr_warn("multipath group %u: out of memory", g->nh->key.ifindex);
		return;
	}
	g->key.first_dev = first_dev;
	group_write(r, g->nh->key.ifindex, &g->key);
	if (r->grp_first[g->nh->key.ifindex] != first_dev)
		group_first_write(r, g);
	for (i = 0; i < nold; i++)
		nexthop_put(r, old[i]);
}

/* Called when the group's nexthop is freed. */
static void group_destroy(struct rib *r, struct rib_group *g)
{
	__u32 i;

	if (g->shared)
		htab_remove(&r->groups, g);
	if (g->obj)
		g->obj->group = NULL;
	for (i = 0; i < g->key.n; i++)
		nexthop_put(r, g->member[i]);
	free(g);
}

/*
 * A default route's nexthop for a group is an alias, an entry of its own
 * naming the same xfib_nh_groups entry (include/xfib/maps.h): the
 * group's buckets, rewritten in place when a nexthop object changes,
 * serve both. The group is the base's to free; the alias holds a
 * reference to it.
 */
struct rib_nexthop *group_nh_dflt(struct rib *r, struct rib_nexthop *gnh)
{
	struct rib_nh_key k = gnh->key;
	struct rib_nexthop *a;

	k.dflt = 1;
	a = htab_find(&r->nexthops, &k);
	if (a) {
		a->refs++;
		/* One adopted from a previous xfibd has no base yet: the
		 * group its entry names is gnh's (the key says so). */
		if (a->base)
			nexthop_put(r, gnh);
		else
			a->base = gnh;
		return a;
	}
	a = nexthop_get(r, &k);
	if (!a) {
		nexthop_put(r, gnh);
		return NULL;
	}
	a->base = gnh;
	return a;
}

/*
 * The nexthop for a set of paths, with a reference: the path's own for
 * one, else a group shared with every route of the same paths and first
 * device (struct rib_group_key); a default route's (dflt) of either. One
 * path whose route's first path is another (dead) one takes a group of
 * its own too, which names that device.
 */
struct rib_nexthop *paths_nexthop(struct rib *r, const struct rib_path *p,
				  __u16 n, __u32 first_dev, bool dflt)
{
	struct rib_nexthop *member[XFIB_GROUP_MEMBERS];
	struct rib_group_key *k;
	struct rib_nh_key one;
	struct rib_group *g;
	__u32 i;

	if (n == 1 && (!first_dev || first_dev == p[0].key.ifindex)) {
		one = p[0].key;
		nh_key_dflt(&one, dflt);
		return nexthop_get(r, &one);
	}
	k = malloc(sizeof(*k));
	if (!k || group_members(r, p, n, k, member)) {
		free(k);
		return NULL;
	}
	k->first_dev = first_dev;
	g = htab_find(&r->groups, k);
	if (g) {
		for (i = 0; i < k->n; i++)
			nexthop_put(r, member[i]);
		g->nh->refs++;
	} else {
		g = group_new(r, k, member, true);
	}
	free(k);
	if (!g)
		return NULL;
	return dflt ? group_nh_dflt(r, g->nh) : g->nh;
}

/* The paths of a group's members, for rebuilding it without some. */
__u16 group_paths(const struct rib_group *g, struct rib_path *p)
{
	__u32 i;

	for (i = 0; i < g->key.n; i++) {
		p[i].key = g->member[i]->key;
		p[i].weight = g->key.m[i].weight;
	}
	return g->key.n;
}
