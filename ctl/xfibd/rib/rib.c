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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netconf.h>
#include <linux/rtnetlink.h>
#include <net/if.h>

#include "log.h"
#include "monoclock.h"
#include "rib_priv.h"

/* At most one line per this many ms about routes left to the kernel for
 * want of an index (the rest are counted). */
#define NO_ROOM_LOG_MS 10000

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

/*
 * The port's rp_filter flags. The kernel's mode is the larger of
 * net.ipv4.conf.all.rp_filter and the port's (IN_DEV_RPFILTER); 1 is
 * strict, any other non-zero value loose (__fib_validate_source()
 * tests rpf == 1). On a port without an IPv4 address the kernel accepts
 * only a source whose route leaves by the port, as in strict mode,
 * whatever the mode.
 */
static __u8 iface_rpf_flags(const struct rib *r, const struct rib_link *l)
{
	int rpf = l->rpf4 > r->v4_rpf_all ? l->rpf4 : r->v4_rpf_all;

	if (rpf <= 0)
		return 0;
	if (rpf == 1 || !l->naddr4)
		return XFIB_IF_RPF;
	return XFIB_IF_RPF | XFIB_IF_RPF_LOOSE;
}

/* What xfib_ifaces says of link l (rib_check compares). */
void iface_value(const struct rib *r, const struct rib_link *l,
		 struct xfib_iface *out)
{
	struct xfib_iface v = { .mtu = l->mtu, .ifindex = l->ifindex };

	memcpy(v.mac, l->mac, 6);
	if ((l->ifflags & IFF_UP) && (l->ifflags & IFF_RUNNING))
		v.flags |= XFIB_IF_UP;
	if (l->fwd4 > 0)
		v.flags |= XFIB_IF_FWD4;
	if (r->v6_fwd > 0)
		v.flags |= XFIB_IF_FWD6;
	v.flags |= iface_rpf_flags(r, l);
	if (l->no_ipv6)
		v.flags |= XFIB_IF_NO_IPV6;
	if (l->no_xmit)
		v.flags |= XFIB_IF_NO_XMIT;
	*out = v;
}

/* A port beyond XFIB_PORT_MAX is not in xfib_ifaces: the program hands
 * its packets, and those routed out of it, to the kernel. Said once per
 * link. */
static void iface_write(struct rib *r, struct rib_link *l)
{
	struct xfib_iface v;

	if ((__u32)l->ifindex >= XFIB_PORT_MAX) {
		if (!l->port_warned)
			pr_warn("link %s: ifindex %d is beyond xfib's %u ports: "
				"the kernel forwards what arrives on it or "
				"leaves by it", l->name, l->ifindex,
				XFIB_PORT_MAX);
		l->port_warned = true;
		return;
	}
	iface_value(r, l, &v);
	port_write(r, l->ifindex, &v);
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
	if (r->dp.ops->neigh_host_set(r->dp.ctx, &hk, n->idx))
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
static void neigh_put(struct rib *r, struct rib_neigh *n)
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
	if (idx_alloc(r->nh_free, &r->nh_nfree, &nh->idx)) {
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
	       __u16 n)
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
	if (g->obj)
		g->obj->group = NULL;
	for (i = 0; i < g->key.n; i++)
		nexthop_put(r, g->member[i]);
	free(g);
}

/*
 * The nexthop for a set of paths, with a reference: the path's own for
 * one, else a group shared with every route of the same paths.
 */
struct rib_nexthop *paths_nexthop(struct rib *r, const struct rib_path *p,
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
__u16 group_paths(const struct rib_group *g, struct rib_path *p)
{
	__u32 i;

	for (i = 0; i < g->key.n; i++) {
		p[i].key = g->member[i]->key;
		p[i].weight = g->key.m[i].weight;
	}
	return g->key.n;
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
		/* Until the kernel says it takes redirected frames. */
		l->no_xmit = r->xmit_learned;
		r->xmit_wanted |= r->xmit_learned;
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
	if (l->no_ipv6 != m->no_ipv6 && !mac_changed)
		pr_info("link %s: IPv6 %s", l->name,
			m->no_ipv6 ? "disabled" : "enabled");
	l->no_ipv6 = m->no_ipv6;
	l->stale = false;
	iface_write(r, l);
	if (mac_changed)
		link_neighs_refresh(r, l->ifindex, false);
	if (was_up && !(m->ifflags & IFF_UP)) {
		pr_info("link %s down: flushing its routes", l->name);
		routes_flush_dev(r, l->ifindex, 0, false);
	}
	if ((was_up && !(m->ifflags & IFF_UP)) ||
	    (was_running && !(m->ifflags & IFF_RUNNING)))
		nhobj_flush_dev(r, l->ifindex);
	if (!was_up && (m->ifflags & IFF_UP)) {
		/* The kernel restores some routes silently: read them back. */
		rib_want_resync(r);
	}
}

void rib_link_ipv6(struct rib *r, int ifindex, bool disabled)
{
	struct rib_link *l = link_find(r, ifindex);

	if (!l || l->no_ipv6 == disabled)
		return;
	pr_info("link %s: IPv6 %s", l->name, disabled ? "disabled" : "enabled");
	l->no_ipv6 = disabled;
	iface_write(r, l);
}

void rib_link_del(struct rib *r, int ifindex)
{
	struct rib_link *l = link_find(r, ifindex);

	routes_flush_dev(r, ifindex, 0, true);
	nhobj_flush_dev(r, ifindex);
	link_neighs_refresh(r, ifindex, true);
	port_write(r, ifindex, NULL);
	if (l) {
		htab_remove(&r->links, l);
		free(l->addr4);
		free(l);
	}
}

void rib_link_xmit(struct rib *r, int ifindex, bool xmit)
{
	struct rib_link *l = link_find(r, ifindex);
	bool known;

	if (!l || (l->xmit_known && l->no_xmit == !xmit))
		return;
	known = l->xmit_known;
	l->xmit_known = true;
	if (l->no_xmit == !xmit)
		return;
	l->no_xmit = !xmit;
	if (known && !xmit)
		pr_info("link %s cannot take XDP-redirected frames: the kernel forwards what leaves by it",
			l->name);
	else if (known)
		pr_info("link %s takes XDP-redirected frames again", l->name);
	else
		pr_debug("link %s %s XDP-redirected frames", l->name,
			 xmit ? "takes" : "cannot take");
	iface_write(r, l);
}

static struct rib_addr4 *addr4_find(struct rib_link *l, const struct rib_addr4 *a)
{
	__u32 i;

	for (i = 0; i < l->naddr4; i++)
		if (!memcmp(&l->addr4[i], a, sizeof(*a)))
			return &l->addr4[i];
	return NULL;
}

/* Addresses are kept, not counted: a notification replayed after a dump
 * that already had its change changes nothing. */
void rib_addr4_set(struct rib *r, int ifindex, const struct rib_addr4 *a,
		   bool dumped)
{
	struct rib_link *l = link_find(r, ifindex);

	if (!l || addr4_find(l, a))
		return;
	/* The first address back: the kernel revives the multipath paths
	 * that died with the last one (fib_sync_up), silently. */
	if (!l->naddr4 && !dumped)
		rib_want_resync(r);
	if (l->naddr4 == l->addr4_cap) {
		__u32 cap = l->addr4_cap ? 2 * l->addr4_cap : 4;
		void *p = realloc(l->addr4, cap * sizeof(*l->addr4));

		if (!p)
			return; /* only a flush would be missed: resync then */
		l->addr4 = p;
		l->addr4_cap = cap;
	}
	l->addr4[l->naddr4++] = *a;
	/* Loose rp_filter applies again (iface_rpf_flags()). */
	if (l->naddr4 == 1)
		iface_write(r, l);
}

void rib_addr4_del(struct rib *r, int ifindex, const struct rib_addr4 *a)
{
	struct rib_link *l = link_find(r, ifindex);
	struct rib_addr4 *e = l ? addr4_find(l, a) : NULL;

	if (!e)
		return;
	*e = l->addr4[--l->naddr4];
	if (l->naddr4)
		return;
	iface_write(r, l); /* rp_filter is strict now (iface_rpf_flags()) */
	/* fib_disable_ip(): nothing IPv4 leaves by a device without an IPv4
	 * address, and the kernel says nothing about it. */
	pr_info("link %s has no IPv4 address left: flushing its IPv4 routes",
		l->name);
	routes_flush_dev(r, ifindex, AF_INET, true);
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
	struct rib_link *l;
	struct rib_neigh *n;
	size_t i;

	htab_for_each(&r->links, l, t1, i) {
		l->stale = true;
		l->naddr4 = 0; /* read again by the address dump */
	}
	htab_for_each(&r->neighs, n, t2, i)
		n->stale = true;
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
	int f;

	memset(m, 0, sizeof(*m));
	m->routes = objpool_bytes(&r->route_pool) +
		    objpool_bytes(&r->route_src_pool) +
		    objpool_bytes(&r->variant_pool) +
		    objpool_bytes(&r->prefix_pool[XFIB_V4]) +
		    objpool_bytes(&r->prefix_pool[XFIB_V6]);
	for (f = 0; f < XFIB_FAMILIES; f++)
		m->trees += ptree_mem_bytes(&r->tree[f][0]) +
			    ptree_mem_bytes(&r->tree[f][1]);
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
	if (err)
		return err;

	r->nh_free = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->nh_retired = calloc(XFIB_NEXTHOP_MAX, sizeof(__u32));
	r->neigh_free = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->neigh_retired = calloc(XFIB_NEIGH_MAX, sizeof(__u32));
	r->grp_free = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->grp_retired = calloc(XFIB_GROUP_MAX, sizeof(__u32));
	r->ports = calloc(XFIB_PORT_MAX, sizeof(*r->ports));
	if (!r->nh_free || !r->nh_retired || !r->neigh_free ||
	    !r->neigh_retired || !r->grp_free || !r->grp_retired || !r->ports)
		return -ENOMEM;
	port_init(r);
	err = local4_init(r);
	if (err)
		return err;
	/* Stacks pop from the top: push high indexes first. */
	for (i = XFIB_NEXTHOP_MAX - 1; i >= XFIB_NH_IDX_FIRST_FREE; i--)
		r->nh_free[r->nh_nfree++] = i;
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
	}
	htab_free(&r->nhobjs);
	htab_free(&r->groups);
	htab_free(&r->nexthops);
	htab_free(&r->neighs);
	htab_free(&r->links);
	free(r->nh_free);
	free(r->nh_retired);
	free(r->neigh_free);
	free(r->neigh_retired);
	free(r->grp_free);
	free(r->grp_retired);
	free(r->ports);
	free(r->exp);
	local4_fini(r);
}
