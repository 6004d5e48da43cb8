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
}

static void fdb_free(struct rib *r, struct rib_fdb *e)
{
	if (r->dp.ops->fdb_del)
		r->dp.ops->fdb_del(r->dp.ctx, &e->key);
	htab_remove(&r->fdb, e);
	free(e);
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
