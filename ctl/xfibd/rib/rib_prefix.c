// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prefixes: the routes of one destination prefix (and table: the mirrored
 * one, the kernel's local table, or one a policy rule reaches), and the
 * one answer per prefix that the lookup structures get. A route change marks its prefix dirty;
 * rib_commit() works out each dirty prefix's answer, as the kernel would
 * give it, writes it into the family's prefix tree and records the
 * prefixes whose answer changed, which the lookup structures then consume
 * (fib.c: in place, or by a rebuild). Routes themselves are rib_route.c's;
 * this file reads them but calls none of its functions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "rib_priv.h"

void prefix_mark(struct rib *r, struct rib_prefix *p)
{
	int fam = family_index(p->key.family);
	struct rib_family_state *f = &r->fam[fam];

	f->dirty = true;
	/* Changes of main and local count for main's algorithm choice. */
	if (p->key.tclass <= RIB_TCLASS_LOCAL)
		f->changes++;
	if (p->dirty)
		return;
	p->dirty = true;
	if (r->dirty_all)
		return;
	if (r->ndirty[fam] == r->dirty_cap[fam]) {
		size_t cap = r->dirty_cap[fam] ? r->dirty_cap[fam] * 2 : 256;
		struct rib_prefix **d = realloc(r->dirty[fam], cap * sizeof(*d));

		if (!d) {
			r->dirty_all = true;
			return;
		}
		r->dirty[fam] = d;
		r->dirty_cap[fam] = cap;
	}
	r->dirty[fam][r->ndirty[fam]++] = p;
}

void prefix_key(const struct rib *r, const struct rib_route_key *rk,
		struct rib_prefix_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = rk->family;
	k->tclass = rib_table_class(r, family_index(rk->family), rk->table);
	k->plen = rk->plen;
	memcpy(k->dst, rk->dst, 16);
}

struct rib_prefix *prefix_get(struct rib *r, const struct rib_route_key *rk)
{
	int fam = family_index(rk->family);
	struct rib_prefix_key k;
	struct rib_prefix *p;

	prefix_key(r, rk, &k);
	p = htab_find(&r->prefixes[fam], &k);
	if (p)
		return p;
	p = objpool_zalloc(&r->prefix_pool[fam]);
	if (!p)
		return NULL;
	memcpy(&p->key, &k, prefix_key_len(fam)); /* an IPv4 one is shorter */
	htab_insert(&r->prefixes[fam], p);
	return p;
}

void prefix_free(struct rib *r, struct rib_prefix *p)
{
	int fam = family_index(p->key.family);

	htab_remove(&r->prefixes[fam], p);
	objpool_free(&r->prefix_pool[fam], p);
}

void prefix_unlink(struct rib_prefix *p, struct rib_route *rt)
{
	struct rib_route **pp;

	for (pp = &p->routes; *pp; pp = &(*pp)->pfx_next) {
		if (*pp == rt) {
			*pp = rt->pfx_next;
			return;
		}
	}
}

/* ---- finding a route through its prefix ------------------------------ */

/* Routes are found through their prefix: one hash lookup, not two. */
struct rib_route *route_in(struct rib_prefix *p, const struct rib_route_key *k)
{
	struct rib_route *rt;

	for (rt = p->routes; rt; rt = rt->pfx_next)
		if (rt->table == k->table && rt->priority == k->priority &&
		    rt->tos == k->tos && rt->src_plen == k->src_plen &&
		    (!k->src_plen || !memcmp(rt->src, k->src, 16)))
			return rt;
	return NULL;
}

void route_key_of(const struct rib_route *rt, struct rib_route_key *k)
{
	memset(k, 0, sizeof(*k));
	k->family = rt->pfx->key.family;
	k->plen = rt->pfx->key.plen;
	memcpy(k->dst, rt->pfx->key.dst,
	       family_addr_len(family_index(k->family)));
	k->tos = rt->tos;
	k->src_plen = rt->src_plen;
	if (rt->src_plen)
		memcpy(k->src, rt->src, 16);
	k->table = rt->table;
	k->priority = rt->priority;
}

struct rib_route *route_find(struct rib *r, const struct rib_route_key *k)
{
	struct rib_prefix_key pk;
	struct rib_prefix *p;

	prefix_key(r, k, &pk);
	p = htab_find(&r->prefixes[family_index(k->family)], &pk);
	return p ? route_in(p, k) : NULL;
}

/*
 * The nexthop index the dataplane uses for rt. IPv4: its first alias.
 * IPv6: the one answer of its variants, or the kernel when it holds
 * several of the same metric that are not siblings (it picks one of them
 * by its own rules). An expired route is the kernel's until it goes.
 */
__u32 rib_route_nh(struct rib *r, const struct rib_route *rt)
{
	const struct rib_variant *v = rt->vars;
	__u32 idx = v->nh->idx;

	if (rt->pfx->key.family == AF_INET)
		return v->expired ? rib_nh_unsupported(r) : idx;
	for (; v; v = v->next)
		if (v->expired || v->nh->idx != idx)
			return rib_nh_unsupported(r);
	return idx;
}

/*
 * The answer for a prefix, as the kernel would give it: the route of
 * lowest metric. With TOS-specific IPv4 routes the kernel picks by the
 * packet's TOS, so the prefix goes to the kernel. So it does with
 * source-specific IPv6 routes: the kernel looks the source up in the
 * destination's own source tree, and without a match there backtracks to
 * a shorter destination, neither of which a lookup by destination alone
 * can do. Only this prefix: a longer one without source routes is looked
 * up by destination only, in the kernel as here.
 */
static __u32 prefix_answer(struct rib *r, const struct rib_prefix *p)
{
	const struct rib_route *rt, *best = NULL;

	for (rt = p->routes; rt; rt = rt->pfx_next) {
		if (rt->tos || rt->src_plen)
			return rib_nh_unsupported(r);
		if (!best || rt->priority < best->priority)
			best = rt;
	}
	return rib_route_nh(r, best);
}

static void change_record(struct rib *r, const struct rib_prefix *p)
{
	struct rib_family_state *f = &r->fam[family_index(p->key.family)];
	struct rib_change *c;

	if (p->key.tclass == RIB_TCLASS_MAIN)
		f->main_changed = true;
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
	memset(c->dst, 0, sizeof(c->dst));
	memcpy(c->dst, p->key.dst,
	       family_addr_len(family_index(p->key.family)));
	c->plen = p->key.plen;
	c->local = p->key.tclass == RIB_TCLASS_LOCAL;
}

/* A list of changes or dirty prefixes this long is freed once consumed: at
 * a full table's first sync it holds every prefix, and would otherwise stay
 * allocated at that size (18 + 8 bytes per prefix). */
#define LIST_KEEP 4096

void rib_changes_done(struct rib *r, int fam)
{
	struct rib_family_state *f = &r->fam[fam];

	f->nchg = 0;
	f->chg_overflow = false;
	if (f->chg_cap > LIST_KEEP) {
		free(f->chg);
		f->chg = NULL;
		f->chg_cap = 0;
	}
}

/*
 * A route in the local table that is not of the types the kernel puts
 * there itself: with it, main merged with local answers for the local
 * table too, which a rule walk between the two cannot tell apart.
 */
static bool prefix_local_odd(const struct rib_prefix *p)
{
	const struct rib_route *rt;
	const struct rib_variant *v;

	for (rt = p->routes; rt; rt = rt->pfx_next)
		for (v = rt->vars; v; v = v->next)
			if (v->type != RTN_LOCAL && v->type != RTN_BROADCAST &&
			    v->type != RTN_ANYCAST && v->type != RTN_MULTICAST)
				return true;
	return false;
}

static void local_odd_set(struct rib *r, struct rib_prefix *p, bool odd)
{
	int fam = family_index(p->key.family);

	if (p->local_odd == odd)
		return;
	p->local_odd = odd;
	if (odd ? !r->local_odd[fam]++ : !--r->local_odd[fam])
		/* Both families commit at once: a store of true from
		 * either, read after they are joined. */
		__atomic_store_n(&r->rules_dirty, true, __ATOMIC_RELAXED);
}

/*
 * The answer of a prefix of a table a rule reaches: as prefix_answer, but
 * a throw route answers "no route here" (fib_table_lookup: -EAGAIN, on to
 * the next rule) for its whole prefix, and a source-specific route is
 * marked: such a table is left to the kernel whole.
 */
static __u32 table_answer(struct rib *r, const struct rib_prefix *p)
{
	const struct rib_route *rt, *best = NULL;

	for (rt = p->routes; rt; rt = rt->pfx_next) {
		if (rt->src_plen)
			return RIB_TABLE_SRC | rib_nh_unsupported(r);
		if (rt->tos)
			return rib_nh_unsupported(r);
		if (!best || rt->priority < best->priority)
			best = rt;
	}
	/* IPv6 keeps one variant per nexthop: a throw route is one. */
	if (best->vars->type == RTN_THROW && !best->vars->next)
		return XFIB_NH_IDX_NONE;
	return rib_route_nh(r, best);
}

/* prefix_commit of a prefix of a rule's table (class 1 + slot). */
static void prefix_commit_table(struct rib *r, struct rib_prefix *p)
{
	struct rib_tslot *ts =
		&r->tslot[family_index(p->key.family)][p->key.tclass - 1];
	__u32 nh, old = 0;
	bool had = !ptree_get(&ts->tree, p->key.dst, p->key.plen, &old);
	bool v4 = family_index(p->key.family) == XFIB_V4;

	p->dirty = false;
	if (!p->routes) {
		if (had) {
			ptree_del(&ts->tree, p->key.dst, p->key.plen);
			ts->src_routes -= !!(old & RIB_TABLE_SRC);
			ts->dirty = true;
		}
		if (v4)
			local4_commit(r, p, false);
		prefix_free(r, p);
		return;
	}
	nh = table_answer(r, p);
	if (had && old == nh)
		return;
	if (ptree_set(&ts->tree, p->key.dst, p->key.plen, nh) < 0) {
		pr_warn("table %u: prefix tree: out of memory", ts->table);
		rib_want_resync(r);
		return;
	}
	ts->src_routes += !!(nh & RIB_TABLE_SRC) - (had && (old & RIB_TABLE_SRC));
	ts->dirty = true;
	/* A local route of a rule's table makes its sources martians too
	 * where the rules lead the route back there (rib_local4.c). */
	if (v4)
		local4_commit(r, p, r->nh_map[nh & ~RIB_TABLE_SRC].kind == XFIB_NH_LOCAL);
}

/* Brings the prefix tree up to date with p's routes; p may go. */
static void prefix_commit(struct rib *r, struct rib_prefix *p)
{
	struct ptree *t;
	bool v4 = family_index(p->key.family) == XFIB_V4;
	__u32 nh, old;
	int err;

	if (p->key.tclass > RIB_TCLASS_LOCAL) {
		prefix_commit_table(r, p);
		return;
	}
	t = &r->tree[family_index(p->key.family)][p->key.tclass];
	if (p->key.tclass == RIB_TCLASS_LOCAL)
		local_odd_set(r, p, p->routes && prefix_local_odd(p));
	p->dirty = false;
	if (!p->routes) {
		if (ptree_del(t, p->key.dst, p->key.plen) == 0)
			change_record(r, p);
		if (v4)
			local4_commit(r, p, false);
		prefix_free(r, p);
		return;
	}
	nh = prefix_answer(r, p);
	err = ptree_set_old(t, p->key.dst, p->key.plen, nh, &old);
	if (err < 0) {
		/* Out of memory: the tree, and so the dataplane, keeps the
		 * old answer; a resync retries. */
		pr_warn("prefix tree: %s", strerror(-err));
		rib_want_resync(r);
		return;
	}
	if (err == 0 && old == nh)
		return;
	if (v4)
		local4_commit(r, p, r->nh_map[nh].kind == XFIB_NH_LOCAL);
	change_record(r, p);
}

void rib_commit_begin(struct rib *r)
{
	rib_report_no_room(r);
	/* A prefix the lookups cannot answer gets this nexthop, made on
	 * first use: made here, it is only read while the families commit
	 * side by side. */
	rib_nh_unsupported(r);
}

void rib_commit_family(struct rib *r, int fam)
{
	struct rib_prefix *p;
	size_t i;

	if (r->dirty_all) {
		htab_for_each(&r->prefixes[fam], p, tmp, i)
			if (p->dirty)
				prefix_commit(r, p);
	} else {
		for (i = 0; i < r->ndirty[fam]; i++)
			prefix_commit(r, r->dirty[fam][i]);
	}
	r->ndirty[fam] = 0;
	if (r->dirty_cap[fam] > LIST_KEEP) {
		free(r->dirty[fam]);
		r->dirty[fam] = NULL;
		r->dirty_cap[fam] = 0;
	}
}

void rib_commit_end(struct rib *r)
{
	r->dirty_all = false;
}

void rib_commit(struct rib *r)
{
	int fam;

	rib_commit_begin(r);
	for (fam = 0; fam < XFIB_FAMILIES; fam++)
		rib_commit_family(r, fam);
	rib_commit_end(r);
}

bool rib_pending(const struct rib *r)
{
	return r->ndirty[XFIB_V4] || r->ndirty[XFIB_V6] || r->dirty_all ||
	       r->fam[XFIB_V4].dirty || r->fam[XFIB_V6].dirty ||
	       r->tables_pending;
}
