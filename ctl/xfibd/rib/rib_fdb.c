// SPDX-License-Identifier: GPL-2.0-only
/*
 * The bridges' forwarding databases, as the kernel announces them
 * (AF_BRIDGE neighbours with NDA_MASTER), mirrored into xfib_fdb: which
 * member of a bridge a MAC is behind. The dataplane routes out of a
 * bridge by the member it names, and into it only from a member the
 * entry of the frame's source names (include/xfib/maps.h).
 *
 * A bridge learns and refreshes its entries from the frames it receives;
 * those routed in XDP it never sees. So the dataplane marks the entry of
 * each source it routes from as seen, and xfibd renews every seen entry
 * the bridge ages with RTM_NEWNEIGH NTF_USE (br_fdb_update(), as a frame
 * from it would), several times per ageing time.
 *
 * A route out of a bridge reads the member from its neighbour's entry
 * (tx_port), which is rewritten whenever the neighbour or the FDB entry
 * of its MAC changes. Between a host's move and its mirroring, the
 * dataplane counts the move in xfib_br_moving, and routes out of that
 * bridge are the kernel's until every moved entry has been rewritten
 * (rib_fdb_moving_settle).
 *
 * Only VLAN 0's entries are mirrored: a bridge that filters VLANs is not
 * routed through.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rib_priv.h"

/* Renewed at least this often, and at most: a quarter of the shortest
 * ageing time of a bridge, within these bounds. */
#define FDB_RENEW_MIN_MS 1000
#define FDB_RENEW_MAX_MS 60000

int fdb_init(struct rib *r)
{
	return htab_init(&r->fdb, offsetof(struct rib_fdb, node),
			 offsetof(struct rib_fdb, key),
			 sizeof(struct xfib_fdb_key));
}

void fdb_fini(struct rib *r)
{
	struct rib_fdb *e;
	size_t i;

	htab_for_each(&r->fdb, e, t, i)
		free(e);
	htab_free(&r->fdb);
}

__u32 fdb_neigh_port(const struct rib *r, const struct rib_neigh *n)
{
	struct xfib_fdb_key k = { .bridge = n->key.ifindex };
	const struct rib_fdb *e;

	memcpy(k.mac, n->mac, 6);
	e = htab_find(&r->fdb, &k);
	return e && !(e->val.flags & XFIB_FDB_LOCAL) ? e->val.port : 0;
}

/* The neighbours on bridge k->bridge whose MAC is k->mac take the
 * entry's member (or none). Bridges' neighbours are few next to a
 * router's routes; FDB changes are rare next to packets. */
static void fdb_neighs_update(struct rib *r, const struct xfib_fdb_key *k)
{
	struct rib_neigh *n;
	size_t i;

	if (!r->neigh_map)
		return;
	htab_for_each(&r->neighs, n, t, i)
		if (n->key.ifindex == k->bridge && !memcmp(n->mac, k->mac, 6))
			__atomic_store_n(&r->neigh_map[n->idx].tx_port,
					 fdb_neigh_port(r, n), __ATOMIC_RELEASE);
}

static void fdb_publish(struct rib *r, struct rib_fdb *e)
{
	int err;

	if (!r->dp.ops->fdb_set)
		return;
	err = r->dp.ops->fdb_set(r->dp.ctx, &e->key, &e->val);
	if (err && !r->fdb_full_warned) {
		/* Left out: the kernel forwards to and from that host. */
		pr_warn("bridge FDB entry not mirrored: %s (at most %u entries)",
			strerror(-err), XFIB_FDB_MAX);
		r->fdb_full_warned = true;
	}
}

void rib_fdb_set(struct rib *r, const struct xfib_fdb_key *k, __u32 port,
		 __u8 flags)
{
	struct rib_fdb *e = htab_find(&r->fdb, k);

	if (k->vlan)
		return;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e)
			return; /* the kernel forwards for that host */
		e->key = *k;
		if (htab_insert(&r->fdb, e)) {
			free(e);
			return;
		}
	} else if (e->val.port == port && e->val.flags == flags) {
		e->stale = false;
		return;
	}
	e->stale = false;
	e->val.port = port;
	e->val.flags = flags;
	e->moved_seen = false;
	fdb_publish(r, e);
	fdb_neighs_update(r, k);
}

static void fdb_free(struct rib *r, struct rib_fdb *e)
{
	struct xfib_fdb_key k = e->key;

	if (r->dp.ops->fdb_del)
		r->dp.ops->fdb_del(r->dp.ctx, &e->key);
	htab_remove(&r->fdb, e);
	free(e);
	fdb_neighs_update(r, &k);
}

void rib_fdb_del(struct rib *r, const struct xfib_fdb_key *k)
{
	struct rib_fdb *e = htab_find(&r->fdb, k);

	if (e)
		fdb_free(r, e);
}

/* The entries a previous xfibd left, taken over until the first full
 * sync keeps those the kernel still has. */
static void fdb_adopt_one(void *ctx, const struct xfib_fdb_key *k,
			  const struct xfib_fdb *v)
{
	struct rib *r = ctx;
	struct rib_fdb *e;

	if (htab_find(&r->fdb, k))
		return;
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->key = *k;
	e->val = *v;
	e->stale = true;
	if (htab_insert(&r->fdb, e))
		free(e);
}

void fdb_adopt(struct rib *r)
{
	if (r->dp.ops->fdb_walk)
		r->dp.ops->fdb_walk(r->dp.ctx, fdb_adopt_one, r);
}

void fdb_mark_stale(struct rib *r)
{
	struct rib_fdb *e;
	size_t i;

	htab_for_each(&r->fdb, e, t, i)
		e->stale = true;
}

void fdb_sweep_stale(struct rib *r)
{
	struct rib_fdb *e;
	size_t i;

	htab_for_each(&r->fdb, e, t, i)
		if (e->stale)
			fdb_free(r, e);
}

/* Entries of a bridge that goes away: the kernel announces no deletion
 * of them. */
void fdb_flush_bridge(struct rib *r, int bridge)
{
	struct rib_fdb *e;
	size_t i;

	htab_for_each(&r->fdb, e, t, i)
		if (e->key.bridge == (__u32)bridge)
			fdb_free(r, e);
}

/*
 * A bridge's count may be cleared once no entry of its is marked moved
 * in the map: each move the dataplane counted was then mirrored (the
 * bridge's notification rewrote the entry, and its neighbours' members)
 * or found not to be one (rib_fdb_renew clears the mark). The dataplane
 * marks the entry before it counts, and the count is cleared only if it
 * did not change meanwhile.
 */
bool rib_fdb_moving_settle(struct rib *r)
{
	struct xfib_fdb cur;
	struct rib_link *l;
	struct rib_fdb *e;
	bool left = false, marked;
	size_t i, i2;
	__u64 n;

	if (!r->dp.br_moving || !r->dp.ops->fdb_get)
		return false;
	htab_for_each(&r->links, l, t, i) {
		if (!l->is_bridge || (__u32)l->ifindex >= XFIB_PORT_MAX)
			continue;
		n = __atomic_load_n(&r->dp.br_moving[l->ifindex], __ATOMIC_ACQUIRE);
		if (!n)
			continue;
		marked = false;
		htab_for_each(&r->fdb, e, t2, i2)
			if (e->key.bridge == (__u32)l->ifindex &&
			    !r->dp.ops->fdb_get(r->dp.ctx, &e->key, &cur) &&
			    cur.moved) {
				marked = true;
				break;
			}
		if (marked || !__atomic_compare_exchange_n(&r->dp.br_moving[l->ifindex],
							   &n, 0, false,
							   __ATOMIC_ACQ_REL,
							   __ATOMIC_ACQUIRE))
			left = true;
	}
	return left;
}

__u64 rib_fdb_renew_ms(const struct rib *r)
{
	__u64 ms = FDB_RENEW_MAX_MS;
	const struct rib_link *l;
	size_t i;

	htab_for_each(&r->links, l, t, i)
		if (l->is_bridge && l->br_ageing_ms && l->br_ageing_ms / 4 < ms)
			ms = l->br_ageing_ms / 4;
	return ms < FDB_RENEW_MIN_MS ? FDB_RENEW_MIN_MS : ms;
}

/*
 * The dataplane's marks on each entry: seen (renewed with use() if the
 * bridge ages the entry) and moved. A move the bridge learned comes with
 * its notification, whose write of the new port clears the mark; one
 * still marked a whole period later was not learned (a sticky entry, a
 * port that does not learn), and its mark is cleared: the entry is right
 * as it is. Marks are cleared by writing the entry as published; one set
 * in between is lost, and counts a period later.
 */
__u32 rib_fdb_renew(struct rib *r,
		    void (*use)(void *ctx, const struct xfib_fdb_key *k,
				__u32 port),
		    void *ctx)
{
	struct xfib_fdb cur;
	struct rib_fdb *e;
	bool rewrite;
	__u32 n = 0;
	size_t i;

	if (!r->dp.ops->fdb_get)
		return 0;
	htab_for_each(&r->fdb, e, t, i) {
		if (r->dp.ops->fdb_get(r->dp.ctx, &e->key, &cur))
			continue;
		rewrite = cur.seen;
		if (cur.seen && (e->val.flags & XFIB_FDB_DYNAMIC)) {
			use(ctx, &e->key, e->val.port);
			n++;
		}
		if (cur.moved && e->moved_seen)
			rewrite = true;
		e->moved_seen = cur.moved && !rewrite;
		if (rewrite)
			fdb_publish(r, e);
	}
	return n;
}
