// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the trie6 update side (ctl/xfibd/fib/trie6.c) together with the
 * lookup the dataplane runs (include/xfib/lookup_trie6.h).
 *
 * The reference is the range list of tests/unit/ref/ranges.c (tested on its own by
 * test_ranges) searched with a plain binary search, cross-checked on small
 * tables against a linear longest-prefix scan. A table is checked on:
 *  - addresses: ::, the last address, both sides of every range start
 *    (every place the answer changes), the first and last address of every
 *    prefix and one past each, random addresses and random addresses
 *    inside random prefixes;
 *  - its shape: walking it from tbl24 reaches each group once, never a
 *    free or retired one, never a group whose 256 entries are one answer,
 *    never a group below the last level, never a poisoned entry; the
 *    groups in use are exactly the cells the ranges make non-uniform (an
 *    independent count from the range starts), so nothing leaks;
 *  - against a from-scratch trie6_build of the same ranges: the same
 *    answers on all of those addresses, the same groups in use, and the
 *    same tree entry for entry (up to group numbering), which is equality
 *    on the whole address space.
 * Free groups are poisoned (after init, after every reclaim): a reader
 * that reaches a group that is not completely filled, or one reused while
 * it could still be read, sees the poison nexthop.
 *
 * Every write goes through trie6_groups_needed() first: the groups a write
 * takes never exceed it, and -ENOSPC comes back exactly when it exceeds
 * the free groups, with the tables and the pool unchanged.
 *
 * Scenarios: hand-computed group counts; /0 first and last with the
 * all-ones (and all-zeros) /128; every depth 1..128 added in order, then
 * deleted in reverse; pools of 0 and 13 groups; a /64 extended to and
 * contracted from a /65 1000 times; arbitrary (not prefix-aligned) range
 * writes against a last-write-wins model, with pools that run dry; one
 * set added forwards and backwards; random add/delete/replace batches on
 * 3k- and 100k-prefix tables; a reader thread looking up while the writer
 * works; a 250k-prefix real-world-shaped table (build time, update cost,
 * groups and bytes per prefix, printed for information).
 *
 * Usage: unit_test_trie6 [seed]. The seed is printed first; passing it
 * back rebuilds the same tables.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#define TESTLIB_SEED 0x7e1e6b5eed2024ull
#include "testlib.h"
#include "ranges.h"

/*
 * Userspace reads the tables as __u32 arrays. Acquire loads, because the
 * concurrency test reads while another thread writes (the BPF side relies
 * on the address dependency; C wants it spelled out).
 */
#define XFIB_U32_AT(tbl, idx) \
	__atomic_load_n((const __u32 *)(tbl) + (idx), __ATOMIC_ACQUIRE)
#include "fib/trie6.h"

#define ONES (~(u128)0)
#define GROUP_BYTES (XFIB_TRIE6_GROUP_ENTRIES * sizeof(__u32))
#define TBL24_BYTES ((size_t)XFIB_TRIE6_TBL24_ENTRIES * sizeof(__u32))
/* A leaf value no test writes: whoever reads it reached a free group. */
#define POISON_NH 0x7eadbeefu
/* Above this many prefixes the linear reference is too slow. */
#define NAIVE_MAX 400

static unsigned long long n_lookups, n_writes, n_tables;
static __u32 max_needed;

/* ---- addresses --------------------------------------------------------- */

static const char *fmt(u128 a)
{
	static char buf[4][INET6_ADDRSTRLEN];
	static unsigned int k;

	k = (k + 1) % 4;
	return fmt_addr(128, a, buf[k]);
}

/* ---- instances --------------------------------------------------------- */

struct inst {
	struct trie6 t;
	__u32 *tbl24;
	__u32 *tbl8;
	__u32 ngroups;
};

static __u32 *grp_of(const struct inst *in, __u32 g)
{
	return in->tbl8 + (size_t)g * XFIB_TRIE6_GROUP_ENTRIES;
}

static void poison_group(struct inst *in, __u32 g)
{
	__u32 *grp = grp_of(in, g);
	unsigned int i;

	for (i = 0; i < XFIB_TRIE6_GROUP_ENTRIES; i++)
		__atomic_store_n(&grp[i], POISON_NH, __ATOMIC_RELAXED);
}

static void poison_free(struct inst *in)
{
	__u32 i;

	for (i = 0; i < in->t.pool.nfree; i++)
		poison_group(in, in->t.pool.free[i]);
}

static void inst_init(struct inst *in, __u32 ngroups)
{
	int ret;

	memset(in, 0, sizeof(*in));
	/* Exact sizes: ASan reports any entry read or written past them. */
	in->tbl24 = xmalloc(TBL24_BYTES);
	in->tbl8 = ngroups ? xmalloc((size_t)ngroups * GROUP_BYTES) : NULL;
	in->ngroups = ngroups;
	ret = trie6_init(&in->t, in->tbl24, in->tbl8, ngroups);
	CHECK(ret == 0, "trie6_init(%u groups): %d", ngroups, ret);
	CHECK(trie6_groups_used(&in->t) == 0 &&
		      trie6_groups_retired(&in->t) == 0 &&
		      in->t.pool.nfree == ngroups,
	      "fresh instance not empty");
	poison_free(in);
}

static void inst_fini(struct inst *in)
{
	trie6_fini(&in->t);
	free(in->tbl24);
	free(in->tbl8);
	memset(in, 0, sizeof(*in));
}

/* What the dataplane answers for a. */
static __u32 lk(const struct inst *in, u128 a)
{
	__u8 b[16];

	to_bytes(128, a, b);
	n_lookups++;
	return xfib_trie6_lookup(in->tbl24, in->tbl8, b);
}

/* The grace period has passed: reclaim, and poison what came back. */
static void reclaim(struct inst *in)
{
	__u32 n = in->t.pool.nretired, i, *g = xmalloc(n * sizeof(*g));

	memcpy(g, in->t.pool.retired, n * sizeof(*g));
	trie6_reclaim(&in->t);
	CHECK(trie6_groups_retired(&in->t) == 0, "retired after reclaim");
	for (i = 0; i < n; i++)
		poison_group(in, g[i]);
	free(g);
}

/*
 * One trie6_write_range() with the reservation checks. Returns its result;
 * on -ENOSPC the caller checks that nothing changed.
 */
static int try_write(struct inst *in, u128 lo, u128 hi, __u32 nh)
{
	__u32 need = trie6_groups_needed(&in->t, lo, hi);
	__u32 nfree = in->t.pool.nfree, nret = in->t.pool.nretired;
	int ret;

	ret = trie6_write_range(&in->t, lo, hi, nh);
	n_writes++;
	if (need > max_needed)
		max_needed = need;
	CHECK(need <= 2 * XFIB_TRIE6_MAX_LEVELS,
	      "needed %u for one write [%s, %s]", need, fmt(lo), fmt(hi));
	if (need > nfree) {
		CHECK(ret == -ENOSPC,
		      "write [%s, %s] needs %u of %u free groups: returned %d",
		      fmt(lo), fmt(hi), need, nfree, ret);
		CHECK(in->t.pool.nfree == nfree && in->t.pool.nretired == nret,
		      "-ENOSPC changed the pool");
		return ret;
	}
	CHECK(ret == 0, "write [%s, %s] nh %u: %d (needed %u, free %u)",
	      fmt(lo), fmt(hi), nh, ret, need, nfree);
	CHECK(nfree - in->t.pool.nfree <= need,
	      "write [%s, %s] took %u groups, needed says %u", fmt(lo),
	      fmt(hi), nfree - in->t.pool.nfree, need);
	CHECK(in->t.pool.nretired >= nret, "retired groups vanished");
	return 0;
}

static void do_write(struct inst *in, u128 lo, u128 hi, __u32 nh)
{
	int ret = try_write(in, lo, hi, nh);

	CHECK(ret == 0, "write [%s, %s] nh %u: %d", fmt(lo), fmt(hi), nh, ret);
}

/* ---- prefix sets ------------------------------------------------------- */

struct hslot {
	u128 first;
	__u8 plen;
	__u8 state; /* 0 empty, 1 used, 2 deleted */
};

/* Prefixes (main list of ranges.h) plus a hash set of (first, plen). */
struct pset {
	struct xfib_pfx *p;
	size_t n, cap;
	struct hslot *h;
	size_t hmask, hfill; /* hfill counts deleted slots too */
};

static struct hslot *ps_slot(const struct pset *ps, u128 first,
			     unsigned int plen, bool for_insert)
{
	size_t i = pfx_hash(first, plen) & ps->hmask;
	struct hslot *del = NULL;

	for (;; i = (i + 1) & ps->hmask) {
		struct hslot *s = &ps->h[i];

		if (s->state == 0)
			return for_insert && del ? del : s;
		if (s->state == 2) {
			if (!del)
				del = s;
			continue;
		}
		if (s->first == first && s->plen == plen)
			return s;
	}
}

static void ps_rehash(struct pset *ps)
{
	size_t sz = 64, i;

	while (sz < 4 * (ps->n + 16))
		sz *= 2;
	free(ps->h);
	ps->h = calloc(sz, sizeof(*ps->h));
	CHECK(ps->h, "out of memory");
	ps->hmask = sz - 1;
	ps->hfill = 0;
	for (i = 0; i < ps->n; i++) {
		const struct xfib_pfx *p = &ps->p[i];
		u128 first = pfx_first(128, from_bytes(128, p->addr), p->plen);
		struct hslot *s = ps_slot(ps, first, p->plen, true);

		s->first = first;
		s->plen = p->plen;
		s->state = 1;
		ps->hfill++;
	}
}

static bool ps_has(const struct pset *ps, u128 first, unsigned int plen)
{
	return ps->h && ps_slot(ps, first, plen, false)->state == 1;
}

/* Returns false if the prefix is already there. */
static bool ps_add(struct pset *ps, u128 a, unsigned int plen, __u32 nh)
{
	u128 first = pfx_first(128, a, plen);
	struct hslot *s;
	struct xfib_pfx *x;

	if (!ps->h || 2 * (ps->hfill + 1) > ps->hmask + 1)
		ps_rehash(ps);
	s = ps_slot(ps, first, plen, false);
	if (s->state == 1)
		return false;
	s = ps_slot(ps, first, plen, true);
	if (s->state == 0)
		ps->hfill++;
	s->first = first;
	s->plen = plen;
	s->state = 1;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 64;
		ps->p = xrealloc(ps->p, ps->cap * sizeof(*ps->p));
	}
	x = &ps->p[ps->n++];
	memset(x, 0, sizeof(*x));
	/* Host bits left set on purpose: the builder must ignore them. */
	to_bytes(128, a, x->addr);
	x->plen = plen;
	x->nh = nh;
	return true;
}

static void ps_del(struct pset *ps, size_t i)
{
	const struct xfib_pfx *p = &ps->p[i];
	struct hslot *s =
		ps_slot(ps, pfx_first(128, from_bytes(128, p->addr), p->plen),
			p->plen, false);

	CHECK(s->state == 1, "test bug: prefix not in hash");
	s->state = 2;
	ps->p[i] = ps->p[--ps->n];
}

static void ps_free(struct pset *ps)
{
	free(ps->p);
	free(ps->h);
	memset(ps, 0, sizeof(*ps));
}

static u128 p_first(const struct xfib_pfx *p)
{
	return pfx_first(128, from_bytes(128, p->addr), p->plen);
}

static u128 p_last(const struct xfib_pfx *p)
{
	return pfx_last(128, from_bytes(128, p->addr), p->plen);
}

static struct npfx *naive_prep(const struct pset *ps)
{
	struct npfx *v = xmalloc(ps->n * sizeof(*v));
	size_t i;

	for (i = 0; i < ps->n; i++) {
		v[i].first = p_first(&ps->p[i]);
		v[i].last = p_last(&ps->p[i]);
		v[i].nh = ps->p[i].nh;
		v[i].plen = ps->p[i].plen;
	}
	return v;
}

/* ---- ranges ------------------------------------------------------------ */

struct rset {
	struct xfib_bs6_range *r;
	size_t n;
};

static u128 r_start(const struct rset *rs, size_t i)
{
	return (u128)rs->r[i].hi << 64 | rs->r[i].lo;
}

static u128 r_last(const struct rset *rs, size_t i)
{
	return i + 1 < rs->n ? r_start(rs, i + 1) - 1 : ONES;
}

static void rs_build(struct rset *rs, const struct pset *ps)
{
	size_t cap = 2 * ps->n + 1, i;
	int ret;

	rs->r = xrealloc(rs->r, cap * sizeof(*rs->r));
	ret = xfib_ranges6_build(ps->p, ps->n, NULL, 0, rs->r, cap);
	CHECK(ret > 0, "ranges of %zu prefixes: %d", ps->n, ret);
	rs->n = ret;
	/* The group count below relies on merged neighbours. */
	for (i = 1; i < rs->n; i++)
		CHECK(rs->r[i].nh != rs->r[i - 1].nh, "ranges not merged");
}

static void rs_free(struct rset *rs)
{
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

/* The range holding a. */
static size_t rs_find(const struct rset *rs, u128 a)
{
	size_t lo = 0, hi = rs->n; /* start(lo) <= a < start(hi) */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r_start(rs, mid) <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static __u32 rs_lookup(const struct rset *rs, u128 a)
{
	return rs->r[rs_find(rs, a)].nh;
}

/*
 * Groups the canonical table of rs has: one per cell (of depth 0..12)
 * with a range start strictly inside it. Starts ascend, so the cells of
 * one depth do too and a duplicate is always the previous one.
 */
static size_t canonical_groups_depth(const struct rset *rs, size_t *depth)
{
	u128 prev[XFIB_TRIE6_MAX_LEVELS];
	bool have[XFIB_TRIE6_MAX_LEVELS] = { false };
	size_t i, n = 0;
	unsigned int k;

	for (i = 1; i < rs->n; i++) {
		u128 s = r_start(rs, i);

		for (k = 0; k < XFIB_TRIE6_MAX_LEVELS; k++) {
			unsigned int bits = 104 - 8 * k;

			/* Aligned to this cell: to every smaller one too. */
			if (!(s & (((u128)1 << bits) - 1)))
				break;
			if (!have[k] || prev[k] != s >> bits) {
				have[k] = true;
				prev[k] = s >> bits;
				n++;
				/* The group hangs below: one level deeper. */
				if (depth)
					depth[k + 1]++;
			}
		}
	}
	return n;
}

static size_t canonical_groups(const struct rset *rs)
{
	return canonical_groups_depth(rs, NULL);
}

/*
 * Rewrites the span [first, last] (one changed prefix) with the new
 * answers, one write per new range over it: what the daemon does.
 */
static void write_span(struct inst *in, const struct rset *rs, u128 first,
		       u128 last)
{
	size_t i = rs_find(rs, first);

	for (; i < rs->n && r_start(rs, i) <= last; i++) {
		u128 lo = r_start(rs, i) > first ? r_start(rs, i) : first;
		u128 hi = r_last(rs, i) < last ? r_last(rs, i) : last;

		do_write(in, lo, hi, rs->r[i].nh);
	}
}

/* ---- checking ---------------------------------------------------------- */

struct checker {
	const struct inst *in;
	const struct inst *ref; /* from-scratch build, or NULL */
	const struct rset *rs;
	struct npfx *naive; /* the prefixes, for a cross-check */
	size_t nnaive;
};

static void check_addr(const struct checker *c, u128 a)
{
	__u32 exp = rs_lookup(c->rs, a), got = lk(c->in, a);

	if (c->naive) {
		__u32 n = naive_lpm(c->naive, c->nnaive, a, XFIB_NH_IDX_NONE);

		CHECK(n == exp, "%s: test bug: ranges give %u, naive %u",
		      fmt(a), exp, n);
	}
	CHECK(got == exp, "%s: trie6 gives nh %u, longest match is %u", fmt(a),
	      got, exp);
	if (c->ref) {
		got = lk(c->ref, a);
		CHECK(got == exp,
		      "%s: from-scratch build gives nh %u, longest match is %u",
		      fmt(a), got, exp);
	}
}

static void check_edge(const struct checker *c, u128 a)
{
	if (a)
		check_addr(c, a - 1);
	check_addr(c, a);
	if (a != ONES)
		check_addr(c, a + 1);
}

/* Every change point, every prefix end, random addresses. */
static void check_points(const struct checker *c, const struct pset *ps,
			 size_t nrandom)
{
	size_t i;

	check_addr(c, 0);
	check_addr(c, ONES);
	for (i = 0; i < c->rs->n; i++) {
		u128 s = r_start(c->rs, i);

		if (s)
			check_addr(c, s - 1);
		check_addr(c, s);
	}
	for (i = 0; ps && i < ps->n; i++) {
		check_edge(c, p_first(&ps->p[i]));
		check_edge(c, p_last(&ps->p[i]));
	}
	for (i = 0; i < nrandom; i++) {
		check_addr(c, rnd_addr(128));
		if (ps && ps->n) {
			const struct xfib_pfx *p = &ps->p[rnd_below(ps->n)];

			check_addr(c, p_first(p) |
					      (rnd_addr(128) & host_mask(128, p->plen)));
		}
	}
}

enum { G_UNSEEN, G_FREE, G_RETIRED, G_REACHED };

struct walk {
	const struct inst *in;
	__u8 *state;
	size_t reached;
};

static void walk_entry(struct walk *w, __u32 e, unsigned int k)
{
	const __u32 *grp;
	__u32 g;
	unsigned int i;

	CHECK(e != POISON_NH, "poisoned entry reachable (depth %u)", k);
	if (!XFIB_TRIE6_IS_EXT(e))
		return;
	CHECK(k < XFIB_TRIE6_MAX_LEVELS, "group below the last level");
	g = XFIB_TRIE6_GROUP(e);
	CHECK(g < w->in->ngroups, "group %u out of %u", g, w->in->ngroups);
	CHECK(w->state[g] != G_FREE, "free group %u reachable", g);
	CHECK(w->state[g] != G_RETIRED, "retired group %u reachable", g);
	CHECK(w->state[g] != G_REACHED, "group %u reached twice", g);
	w->state[g] = G_REACHED;
	w->reached++;
	grp = grp_of(w->in, g);
	for (i = 1; i < XFIB_TRIE6_GROUP_ENTRIES; i++)
		if (grp[i] != grp[0])
			break;
	CHECK(i < XFIB_TRIE6_GROUP_ENTRIES || XFIB_TRIE6_IS_EXT(grp[0]),
	      "group %u (depth %u) is uniform: should have collapsed", g,
	      k + 1);
	for (i = 0; i < XFIB_TRIE6_GROUP_ENTRIES; i++)
		walk_entry(w, grp[i], k + 1);
}

/*
 * Walks the tree from all of tbl24 (rs NULL), or from the tbl24 entries
 * holding a range start (where all groups of a canonical table hang; much
 * cheaper for the many small steps). Returns the groups reached.
 */
static size_t walk(const struct inst *in, const struct rset *rs)
{
	struct walk w = { .in = in };
	__u32 i, last = 0;
	size_t j;

	w.state = calloc(in->ngroups + 1, 1);
	CHECK(w.state, "out of memory");
	for (i = 0; i < in->t.pool.nfree; i++) {
		CHECK(in->t.pool.free[i] < in->ngroups &&
			      w.state[in->t.pool.free[i]] == G_UNSEEN,
		      "free list corrupt");
		w.state[in->t.pool.free[i]] = G_FREE;
	}
	for (i = 0; i < in->t.pool.nretired; i++) {
		CHECK(in->t.pool.retired[i] < in->ngroups &&
			      w.state[in->t.pool.retired[i]] == G_UNSEEN,
		      "retired list corrupt");
		w.state[in->t.pool.retired[i]] = G_RETIRED;
	}
	if (!rs) {
		for (i = 0; i < XFIB_TRIE6_TBL24_ENTRIES; i++)
			walk_entry(&w, in->tbl24[i], 0);
		CHECK(w.reached == trie6_groups_used(&in->t),
		      "%zu groups reachable, %u in use (leak)", w.reached,
		      trie6_groups_used(&in->t));
	} else {
		for (j = 0; j < rs->n; j++) {
			i = (__u32)(r_start(rs, j) >> 104);
			if (j && i == last)
				continue;
			last = i;
			walk_entry(&w, in->tbl24[i], 0);
		}
	}
	free(w.state);
	return w.reached;
}

/* Full check of one instance against rs. */
static void check_table(const struct inst *in, const struct inst *ref,
			const struct rset *rs, const struct pset *ps,
			size_t nrandom, bool full_walk)
{
	struct checker c = { .in = in, .ref = ref, .rs = rs };
	size_t canon = canonical_groups(rs), reached;

	if (ps && ps->n <= NAIVE_MAX) {
		c.naive = naive_prep(ps);
		c.nnaive = ps->n;
	}
	check_points(&c, ps, nrandom);
	free(c.naive);
	CHECK(trie6_groups_used(&in->t) == canon,
	      "%u groups in use, the table needs %zu",
	      trie6_groups_used(&in->t), canon);
	reached = walk(in, full_walk ? NULL : rs);
	CHECK(reached == canon, "%zu groups reachable, the table needs %zu",
	      reached, canon);
	n_tables++;
}

/* Both trees entry for entry, groups matched by position. */
static void same_entry(const struct inst *a, const struct inst *b, __u32 ea,
		       __u32 eb, u128 cell, unsigned int k)
{
	const __u32 *ga, *gb;
	unsigned int i;

	if (!XFIB_TRIE6_IS_EXT(ea) || !XFIB_TRIE6_IS_EXT(eb)) {
		CHECK(ea == eb, "cell %s (depth %u): entry %#x vs %#x",
		      fmt(cell), k, ea, eb);
		return;
	}
	ga = grp_of(a, XFIB_TRIE6_GROUP(ea));
	gb = grp_of(b, XFIB_TRIE6_GROUP(eb));
	for (i = 0; i < XFIB_TRIE6_GROUP_ENTRIES; i++)
		same_entry(a, b, ga[i], gb[i],
			   cell | (u128)i << (104 - 8 * (k + 1)), k + 1);
}

static void same_tree(const struct inst *a, const struct inst *b)
{
	__u32 i;

	for (i = 0; i < XFIB_TRIE6_TBL24_ENTRIES; i++)
		same_entry(a, b, a->tbl24[i], b->tbl24[i], (u128)i << 104, 0);
}

/* ref := a from-scratch build of rs (pool grown when needed). */
static void build_ref(struct inst *ref, const struct rset *rs)
{
	size_t canon = canonical_groups(rs);
	int ret;

	if (!ref->tbl24 || ref->ngroups < canon) {
		if (ref->tbl24)
			inst_fini(ref);
		inst_init(ref, canon + canon / 4 + 64);
	}
	ret = trie6_build(&ref->t, rs->r, rs->n);
	CHECK(ret == 0, "trie6_build of %zu ranges: %d", rs->n, ret);
	poison_free(ref);
}

/* ---- generators -------------------------------------------------------- */

/*
 * One new prefix shaped like a routing table's: mostly a more-specific or
 * a neighbour of an existing prefix (spread: the share, in %, placed at
 * random), usually taking its relative's nexthop (inherit, in %), a few
 * upstreams doing most of the work. Returns false if it exists already.
 */
static bool gen_one(struct pset *ps, unsigned int spread, unsigned int inherit,
		    unsigned int nhs)
{
	unsigned int len = len_v6(), mode = rnd_below(100);
	__u32 nh = rnd_nh(2, nhs);
	u128 a;

	if (mode < spread || !ps->n) {
		a = addr_v6();
	} else {
		const struct xfib_pfx *q = &ps->p[rnd_below(ps->n)];
		u128 qa = from_bytes(128, q->addr);

		if (rnd_below(100) < inherit)
			nh = q->nh;
		/* A /0 is never inside q and has no neighbour. */
		if (len == 0)
			return false;
		a = pfx_near(128, qa, q->plen, len, mode % 2);
	}
	return ps_add(ps, a, len, nh);
}

static void gen_table(struct pset *ps, size_t n, unsigned int spread,
		      unsigned int inherit, unsigned int nhs)
{
	size_t tries = 0;

	while (ps->n < n) {
		CHECK(++tries < 50 * n + 1000, "test bug: generator stuck");
		gen_one(ps, spread, inherit, nhs);
	}
}

static void print_mix(const struct pset *ps)
{
	size_t cnt[129] = { 0 }, i;

	for (i = 0; i < ps->n; i++)
		cnt[ps->p[i].plen]++;
	print_len_mix("", cnt, 128, ps->n, 100);
}

/* ---- the tests --------------------------------------------------------- */

/* Hand-computed group counts for single prefixes on an empty table. */
static void test_golden(void)
{
	static const struct {
		const char *addr;
		unsigned int plen;
		__u32 groups; /* canonical */
		__u32 needed; /* groups_needed on the empty table */
	} c[] = {
		{ "::", 0, 0, 0 },
		{ "2000::", 3, 0, 0 },
		{ "2001:db8::", 24, 0, 0 },
		/* Inside one tbl24 entry: one group, both ends in it. */
		{ "2001:db8::", 32, 1, 1 },
		{ "2001:db8::", 29, 1, 1 },
		/* /24, /32, /40 cells hold its ends. */
		{ "2001:db8:1::", 48, 3, 3 },
		{ "2001:db8:1:2::", 64, 5, 5 },
		{ "2001:db8:1:2::80", 121, 13, 13 },
		{ "2001:db8:1:2::1", 128, 13, 13 },
		/* The end is the last cell of its /24: still one path. */
		{ "2001:dff:ff00::", 40, 2, 2 },
		{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, 13, 13 },
		{ "::", 128, 13, 13 },
	};
	struct inst in;
	struct rset rs = { 0 };
	unsigned int i;

	cur_test = "golden";
	inst_init(&in, 64);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct pset ps = { 0 };
		u128 a = A(128, c[i].addr);
		__u32 need;

		ps_add(&ps, a, c[i].plen, 7);
		rs_build(&rs, &ps);
		CHECK(canonical_groups(&rs) == c[i].groups,
		      "test bug: %s/%u canonical %zu", c[i].addr, c[i].plen,
		      canonical_groups(&rs));
		need = trie6_groups_needed(&in.t, pfx_first(128, a, c[i].plen),
					   pfx_last(128, a, c[i].plen));
		CHECK(need == c[i].needed, "%s/%u: needed %u, expected %u",
		      c[i].addr, c[i].plen, need, c[i].needed);
		write_span(&in, &rs, pfx_first(128, a, c[i].plen),
			   pfx_last(128, a, c[i].plen));
		check_table(&in, NULL, &rs, &ps, 100, false);
		CHECK(lk(&in, a) == 7, "%s/%u: lookup", c[i].addr, c[i].plen);
		/* And away again: nothing left, everything retired. */
		ps_del(&ps, 0);
		rs_build(&rs, &ps);
		write_span(&in, &rs, pfx_first(128, a, c[i].plen),
			   pfx_last(128, a, c[i].plen));
		CHECK(trie6_groups_used(&in.t) == 0 &&
			      trie6_groups_retired(&in.t) == c[i].groups,
		      "%s/%u deleted: %u used, %u retired", c[i].addr,
		      c[i].plen, trie6_groups_used(&in.t),
		      trie6_groups_retired(&in.t));
		reclaim(&in);
		check_table(&in, NULL, &rs, &ps, 10, false);
		ps_free(&ps);
	}

	/* Both ends in distinct tbl24 entries, none aligned: 26 groups. */
	{
		__u32 need = trie6_groups_needed(&in.t, 1, ONES - 1);

		CHECK(need == 26, "[::1, ffff..fffe] needs %u, expected 26",
		      need);
		do_write(&in, 1, ONES - 1, 3);
		CHECK(trie6_groups_used(&in.t) == 26, "26-group write uses %u",
		      trie6_groups_used(&in.t));
		CHECK(lk(&in, 0) == 0 && lk(&in, 1) == 3 &&
			      lk(&in, ONES - 1) == 3 && lk(&in, ONES) == 0 &&
			      lk(&in, A(128, "2001:db8::")) == 3,
		      "[::1, ffff..fffe] lookups");
		/* Overwriting it whole needs nothing and retires all 26. */
		CHECK(trie6_groups_needed(&in.t, 0, ONES) == 0, "/0 needs");
		do_write(&in, 0, ONES, 0);
		CHECK(trie6_groups_used(&in.t) == 0 &&
			      trie6_groups_retired(&in.t) == 26,
		      "/0 over it: %u used, %u retired",
		      trie6_groups_used(&in.t), trie6_groups_retired(&in.t));
		reclaim(&in);
	}
	/* Invalid arguments change nothing. */
	CHECK(trie6_write_range(&in.t, 5, 4, 1) == -EINVAL, "first > last");
	CHECK(trie6_write_range(&in.t, 0, 5, XFIB_TRIE6_EXT) == -EINVAL,
	      "nh with the EXT bit");
	CHECK(trie6_groups_used(&in.t) == 0 && lk(&in, 4) == 0,
	      "-EINVAL changed something");
	{
		struct xfib_bs6_range bad[2] = { { .lo = 1, .nh = 1 } };

		CHECK(trie6_build(&in.t, bad, 1) == -EINVAL, "r[0] not at ::");
		CHECK(trie6_build(&in.t, bad, 0) == -EINVAL, "n == 0");
		bad[0].lo = 0;
		bad[1] = bad[0];
		CHECK(trie6_build(&in.t, bad, 2) == -EINVAL, "equal starts");
		bad[1].lo = 9;
		bad[1].nh = XFIB_TRIE6_EXT;
		CHECK(trie6_build(&in.t, bad, 2) == -EINVAL, "EXT nexthop");
		/* Unmerged neighbours are fine: the group collapses. */
		bad[1].nh = bad[0].nh;
		CHECK(trie6_build(&in.t, bad, 2) == 0, "unmerged ranges");
		CHECK(trie6_groups_used(&in.t) == 0 && lk(&in, 0) == 1 &&
			      lk(&in, ONES) == 1,
		      "unmerged ranges: %u groups", trie6_groups_used(&in.t));
	}
	{
		struct trie6 t;

		CHECK(trie6_init(&t, NULL, NULL, 0) == -EINVAL, "no tbl24");
		CHECK(trie6_init(&t, in.tbl24, NULL, 1) == -EINVAL, "no tbl8");
		CHECK(trie6_init(&t, in.tbl24, in.tbl8,
				 XFIB_TRIE6_GROUPS_MAX + 1) == -EINVAL,
		      "too many groups");
	}
	inst_fini(&in);
	rs_free(&rs);
	printf("  golden ok\n");
}

/* Adds a prefix to ps, then writes its span with the new answers. */
static void apply_add(struct inst *in, struct pset *ps, struct rset *rs,
		      u128 a, unsigned int plen, __u32 nh)
{
	CHECK(ps_add(ps, a, plen, nh), "test bug: prefix exists");
	rs_build(rs, ps);
	write_span(in, rs, pfx_first(128, a, plen), pfx_last(128, a, plen));
}

/* Deletes entry i of ps, then writes its span with the new answers. */
static void apply_del(struct inst *in, struct pset *ps, struct rset *rs,
		      size_t i)
{
	u128 first = p_first(&ps->p[i]), last = p_last(&ps->p[i]);

	ps_del(ps, i);
	rs_build(rs, ps);
	write_span(in, rs, first, last);
}

static size_t find_pfx(const struct pset *ps, u128 a, unsigned int plen)
{
	size_t i;

	for (i = 0; i < ps->n; i++)
		if (ps->p[i].plen == plen &&
		    p_first(&ps->p[i]) == pfx_first(128, a, plen))
			return i;
	fail("test bug: prefix %s/%u not found", fmt(a), plen);
}

/*
 * /1../128 on one address added in order, then deleted in reverse, with
 * and without a /0 under them, on ::, the last address and two others.
 * Each step is checked; the instance is reused, so every run also checks
 * that deleting everything leaves a clean table.
 */
static void test_depth(void)
{
	u128 addrs[4] = { addr_v6(), 0, ONES, A(128, "2001:db8:dead:beef::1") };
	unsigned int i, len, v, with_default;
	struct inst in;

	cur_test = "depth";
	inst_init(&in, 200);
	for (with_default = 0; with_default < 2; with_default++) {
		for (i = 0; i < 4; i++) {
			for (v = 0; v < 2; v++) {
				struct pset ps = { 0 };
				struct rset rs = { 0 };

				if (with_default)
					apply_add(&in, &ps, &rs, 0, 0, 99);
				for (len = 1; len <= 128; len++) {
					/* Alternating nexthops merge levels. */
					__u32 nh = v ? 100 + len % 2 :
						       1000 + len;

					apply_add(&in, &ps, &rs, addrs[i], len,
						  nh);
					check_table(&in, NULL, &rs, &ps, 20,
						    false);
					if (rnd_below(2))
						reclaim(&in);
				}
				for (len = 128; len >= 1; len--) {
					apply_del(&in, &ps, &rs,
						  find_pfx(&ps, addrs[i], len));
					check_table(&in, NULL, &rs, &ps, 20,
						    false);
					if (rnd_below(2))
						reclaim(&in);
				}
				if (with_default)
					apply_del(&in, &ps, &rs, 0);
				reclaim(&in);
				CHECK(ps.n == 0 &&
					      trie6_groups_used(&in.t) == 0,
				      "%u groups left after deleting all",
				      trie6_groups_used(&in.t));
				check_table(&in, NULL, &rs, &ps, 100, true);
				ps_free(&ps);
				rs_free(&rs);
			}
		}
	}
	inst_fini(&in);
	printf("  depth 1..128 ok\n");
}

/* /0 first, last, and with the all-ones host route. */
static void test_default(void)
{
	struct pset ps = { 0 };
	struct rset rs = { 0 };
	struct inst in;
	int order;

	cur_test = "default-route";
	inst_init(&in, 64);
	for (order = 0; order < 2; order++) {
		if (order == 0) {
			apply_add(&in, &ps, &rs, 0, 0, 7);
			CHECK(trie6_groups_used(&in.t) == 0, "/0 uses groups");
			check_table(&in, NULL, &rs, &ps, 100, true);
			apply_add(&in, &ps, &rs, ONES, 128, 9);
		} else {
			apply_add(&in, &ps, &rs, ONES, 128, 9);
			check_table(&in, NULL, &rs, &ps, 100, false);
			apply_add(&in, &ps, &rs, 0, 0, 7);
		}
		CHECK(trie6_groups_used(&in.t) == 13,
		      "/0 + all-ones /128: %u groups",
		      trie6_groups_used(&in.t));
		CHECK(lk(&in, ONES) == 9 && lk(&in, ONES - 1) == 7 &&
			      lk(&in, 0) == 7,
		      "/0 + all-ones /128 lookups");
		check_table(&in, NULL, &rs, &ps, 100, true);
		/* ::/128 too: the first and last tbl24 entries both split. */
		apply_add(&in, &ps, &rs, 0, 128, 3);
		CHECK(trie6_groups_used(&in.t) == 26, "::/128 too: %u groups",
		      trie6_groups_used(&in.t));
		check_table(&in, NULL, &rs, &ps, 100, true);
		apply_del(&in, &ps, &rs, find_pfx(&ps, 0, 0));
		check_table(&in, NULL, &rs, &ps, 100, false);
		CHECK(lk(&in, 1) == 0 && lk(&in, 0) == 3 && lk(&in, ONES) == 9,
		      "without /0");
		reclaim(&in);
		apply_del(&in, &ps, &rs, find_pfx(&ps, ONES, 128));
		apply_del(&in, &ps, &rs, find_pfx(&ps, 0, 128));
		reclaim(&in);
		CHECK(trie6_groups_used(&in.t) == 0, "%u groups left",
		      trie6_groups_used(&in.t));
		check_table(&in, NULL, &rs, &ps, 100, true);
	}
	inst_fini(&in);
	ps_free(&ps);
	rs_free(&rs);
	printf("  default route ok\n");
}

/*
 * A /65 added under a /64 and removed again, and a /64 contracted to its
 * /65 and extended back, 1000 times each: one group taken and retired per
 * cycle; with a reclaim per cycle the pool must come back to where it
 * started. Then without reclaiming: retired groups are never reused nor
 * changed, the pool runs dry with -ENOSPC and unchanged tables, and a
 * reclaim brings it back.
 */
static void test_extend(void)
{
	u128 p64 = A(128, "2001:db8:1:2::"),
	     p65b = A(128, "2001:db8:1:2:8000::");
	struct pset ps = { 0 };
	struct rset rs = { 0 };
	struct inst in;
	__u32 base_free, cycles_ok = 0, *snap_ids;
	__u8 *snap;
	size_t nsnap;
	int k;

	cur_test = "extend-contract";
	inst_init(&in, 40);
	ps_add(&ps, A(128, "2001:db8::"), 32, 2);
	ps_add(&ps, A(128, "2001:db8:1::"), 48, 3);
	rs_build(&rs, &ps);
	CHECK(trie6_build(&in.t, rs.r, rs.n) == 0, "build");
	poison_free(&in);
	apply_add(&in, &ps, &rs, p64, 64, 4);
	reclaim(&in);
	base_free = in.t.pool.nfree;
	for (k = 0; k < 1000; k++) {
		apply_add(&in, &ps, &rs, p64, 65, 5);
		CHECK(lk(&in, p64) == 5 && lk(&in, p65b) == 4 &&
			      lk(&in, p64 - 1) == 3,
		      "/65 under /64, cycle %d", k);
		apply_del(&in, &ps, &rs, find_pfx(&ps, p64, 65));
		CHECK(lk(&in, p64) == 4 && lk(&in, p65b) == 4,
		      "/65 removed, cycle %d", k);
		CHECK(trie6_groups_retired(&in.t) == 1,
		      "cycle %d: %u retired", k, trie6_groups_retired(&in.t));
		reclaim(&in);
		CHECK(in.t.pool.nfree == base_free, "cycle %d: %u free, was %u", k,
		      in.t.pool.nfree, base_free);
	}
	check_table(&in, NULL, &rs, &ps, 1000, true);
	/* Contract the /64 to its first /65, extend it back. */
	for (k = 0; k < 1000; k++) {
		apply_del(&in, &ps, &rs, find_pfx(&ps, p64, 64));
		apply_add(&in, &ps, &rs, p64, 65, 4);
		CHECK(lk(&in, p64) == 4 && lk(&in, p65b) == 3,
		      "contracted, cycle %d", k);
		apply_add(&in, &ps, &rs, p64, 64, 4);
		apply_del(&in, &ps, &rs, find_pfx(&ps, p64, 65));
		CHECK(lk(&in, p64) == 4 && lk(&in, p65b) == 4,
		      "extended, cycle %d", k);
		reclaim(&in);
		CHECK(in.t.pool.nfree == base_free, "cycle %d: %u free, was %u", k,
		      in.t.pool.nfree, base_free);
	}
	check_table(&in, NULL, &rs, &ps, 1000, true);

	/* No reclaim now: snapshot each group as it retires. */
	snap = xmalloc((size_t)in.ngroups * GROUP_BYTES);
	snap_ids = xmalloc(in.ngroups * sizeof(*snap_ids));
	nsnap = 0;
	for (k = 0;; k++) {
		u128 lo = p64, hi = pfx_last(128, p64, 65);
		size_t j;
		int ret;

		ret = try_write(&in, lo, hi, 5);
		if (ret == -ENOSPC)
			break;
		cycles_ok++;
		do_write(&in, lo, hi, 4);
		/* The group just retired: record it, it must not change. */
		CHECK(in.t.pool.nretired == nsnap + 1, "retired %u, expected %zu",
		      in.t.pool.nretired, nsnap + 1);
		snap_ids[nsnap] = in.t.pool.retired[nsnap];
		memcpy(snap + nsnap * GROUP_BYTES, grp_of(&in, snap_ids[nsnap]),
		       GROUP_BYTES);
		nsnap++;
		for (j = 0; j < nsnap; j++)
			CHECK(!memcmp(snap + j * GROUP_BYTES,
				      grp_of(&in, snap_ids[j]), GROUP_BYTES),
			      "retired group %u changed before reclaim",
			      snap_ids[j]);
		CHECK(k < 100, "pool never runs dry");
	}
	CHECK(cycles_ok == base_free && in.t.pool.nfree == 0,
	      "%u cycles before -ENOSPC with %u free groups", cycles_ok,
	      base_free);
	walk(&in, NULL);
	check_table(&in, NULL, &rs, &ps, 100, true);
	reclaim(&in);
	do_write(&in, p64, pfx_last(128, p64, 65), 5);
	CHECK(lk(&in, p64) == 5, "after reclaim");
	do_write(&in, p64, pfx_last(128, p64, 65), 4);
	reclaim(&in);
	check_table(&in, NULL, &rs, &ps, 100, true);
	free(snap);
	free(snap_ids);
	inst_fini(&in);
	ps_free(&ps);
	rs_free(&rs);
	printf("  extend/contract x1000 ok\n");
}

/* Range writes as their own model: an address has the last write's nh. */
struct paint {
	u128 lo, hi;
	__u32 nh;
};

static __u32 paint_at(const struct paint *w, size_t n, u128 a)
{
	while (n--)
		if (a >= w[n].lo && a <= w[n].hi)
			return w[n].nh;
	return XFIB_NH_IDX_NONE;
}

static int u128_cmp(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;

	return x < y ? -1 : x > y;
}

/* The merged ranges the painted writes give. */
static void paint_ranges(const struct paint *w, size_t n, struct rset *rs)
{
	u128 *b = xmalloc((2 * n + 1) * sizeof(*b));
	size_t nb = 0, i;

	b[nb++] = 0;
	for (i = 0; i < n; i++) {
		b[nb++] = w[i].lo;
		if (w[i].hi != ONES)
			b[nb++] = w[i].hi + 1;
	}
	qsort(b, nb, sizeof(*b), u128_cmp);
	rs->r = xrealloc(rs->r, nb * sizeof(*rs->r));
	rs->n = 0;
	for (i = 0; i < nb; i++) {
		__u32 nh;

		if (i && b[i] == b[i - 1])
			continue;
		nh = paint_at(w, n, b[i]);
		if (rs->n && rs->r[rs->n - 1].nh == nh)
			continue;
		rs->r[rs->n].hi = (__u64)(b[i] >> 64);
		rs->r[rs->n].lo = (__u64)b[i];
		rs->r[rs->n].nh = nh;
		rs->r[rs->n].pad = 0;
		rs->n++;
	}
	free(b);
}

/* A random range of log-uniform size inside [base, base | mask]. */
static void rnd_range(u128 base, unsigned int bits, u128 *lo, u128 *hi)
{
	unsigned int sz = rnd_below(bits + 1);
	u128 span = sz == 128 ? ONES : ((u128)1 << sz) - 1;
	u128 mask = bits == 128 ? ONES : ((u128)1 << bits) - 1;

	span &= rnd_addr(128);
	*lo = base | (rnd_addr(128) & mask);
	*hi = *lo + span;
	if (*hi < *lo || (*hi & ~mask) != base)
		*hi = base | mask;
	/* Sometimes aligned like a prefix, sometimes exactly a cell. */
	if (rnd_below(4) == 0 && sz < 128) {
		*lo &= ~(((u128)1 << sz) - 1);
		*hi = *lo | (((u128)1 << sz) - 1);
	}
}

/*
 * Arbitrary (not prefix-aligned) range writes, in a narrow region so they
 * pile up, with a pool small enough to run dry: every write either
 * applies or fails with -ENOSPC leaving the tables exactly as they were.
 */
static void test_paint(const char *name, u128 base, unsigned int bits,
		       __u32 ngroups, size_t nwrites, unsigned int nhs)
{
	struct paint *w = xmalloc(nwrites * sizeof(*w));
	__u32 lo24 = (__u32)(base >> 104), hi24, *s24, *s8, *sfree;
	size_t n = 0, i, nospc = 0, win;
	bool snap;
	struct rset rs = { 0 };
	struct inst in, ref = { 0 };

	cur_test = name;
	hi24 = (__u32)((base | (bits == 128 ? ONES : ((u128)1 << bits) - 1)) >>
		       104);
	win = hi24 - lo24 + 1;
	/* Compare whole tables around each write while that is cheap. */
	snap = win <= 4096 && ngroups <= 256;
	inst_init(&in, ngroups);
	s24 = xmalloc(win * sizeof(*s24));
	s8 = xmalloc((size_t)(ngroups + 1) * GROUP_BYTES);
	sfree = xmalloc((ngroups + 1) * sizeof(*sfree));
	for (i = 0; i < nwrites; i++) {
		u128 lo, hi;
		__u32 nh = 1 + rnd_below(nhs), nfree = in.t.pool.nfree;
		int ret;

		if (i % 97 == 96)
			nh = XFIB_NH_IDX_NONE;
		rnd_range(base, bits, &lo, &hi);
		if (snap) {
			memcpy(s24, in.tbl24 + lo24, win * sizeof(*s24));
			memcpy(s8, in.tbl8, (size_t)ngroups * GROUP_BYTES);
			memcpy(sfree, in.t.pool.free, nfree * sizeof(*sfree));
		}
		ret = try_write(&in, lo, hi, nh);
		if (ret == -ENOSPC) {
			nospc++;
			if (snap)
				CHECK(!memcmp(s24, in.tbl24 + lo24,
					      win * sizeof(*s24)) &&
					      !memcmp(s8, in.tbl8,
						      (size_t)ngroups *
							      GROUP_BYTES) &&
					      !memcmp(sfree, in.t.pool.free,
						      nfree * sizeof(*sfree)),
				      "-ENOSPC changed the tables");
			/* Readers may be done by now. */
			reclaim(&in);
			continue;
		}
		w[n].lo = lo;
		w[n].hi = hi;
		w[n].nh = nh;
		n++;
		/* Around the write, now. */
		CHECK(lk(&in, lo) == nh && lk(&in, hi) == nh,
		      "write [%s, %s]: ends read %u, %u, not %u", fmt(lo),
		      fmt(hi), lk(&in, lo), lk(&in, hi), nh);
		if (lo)
			CHECK(lk(&in, lo - 1) == paint_at(w, n, lo - 1),
			      "before [%s, %s]", fmt(lo), fmt(hi));
		if (hi != ONES)
			CHECK(lk(&in, hi + 1) == paint_at(w, n, hi + 1),
			      "after [%s, %s]", fmt(lo), fmt(hi));
		if (rnd_below(2))
			reclaim(&in);
		if (i % 200 == 199 || i + 1 == nwrites) {
			paint_ranges(w, n, &rs);
			reclaim(&in);
			check_table(&in, NULL, &rs, NULL, 300, false);
		}
	}
	CHECK(nospc > 0 || ngroups > 1000, "%s: the pool never ran dry", name);
	paint_ranges(w, n, &rs);
	build_ref(&ref, &rs);
	check_table(&in, &ref, &rs, NULL, 2000, true);
	same_tree(&in, &ref);
	printf("  %s: %zu writes applied, %zu -ENOSPC, %u groups, max needed %u\n",
	       name, n, nospc, trie6_groups_used(&in.t), max_needed);
	free(w);
	free(s24);
	free(s8);
	free(sfree);
	inst_fini(&in);
	inst_fini(&ref);
	rs_free(&rs);
}

/* Pools of 0 and 13 groups. */
static void test_exhaust(void)
{
	u128 one = A(128, "2001:db8::1");
	__u32 *snap;
	struct inst in;

	cur_test = "exhaust";
	snap = xmalloc(TBL24_BYTES);
	inst_init(&in, 0);
	memcpy(snap, in.tbl24, TBL24_BYTES);
	CHECK(try_write(&in, one, one, 5) == -ENOSPC, "/128 with no pool");
	CHECK(try_write(&in, A(128, "2001:db8::"),
			pfx_last(128, A(128, "2001:db8::"), 32), 5) == -ENOSPC,
	      "/32 with no pool");
	CHECK(!memcmp(snap, in.tbl24, TBL24_BYTES), "-ENOSPC wrote tbl24");
	/* Whole tbl24 entries need no group. */
	do_write(&in, A(128, "2001::"), pfx_last(128, A(128, "2001::"), 16), 6);
	do_write(&in, pfx_first(128, A(128, "2001:db8::"), 24),
		 pfx_last(128, A(128, "2001:db8::"), 24), 7);
	CHECK(lk(&in, one) == 7 && lk(&in, A(128, "2001:e00::")) == 6 &&
		      lk(&in, A(128, "2002::")) == 0,
	      "tbl24-only writes");
	do_write(&in, 0, ONES, 1);
	CHECK(lk(&in, one) == 1 && lk(&in, ONES) == 1, "/0 with no pool");
	inst_fini(&in);

	inst_init(&in, 13);
	do_write(&in, ONES, ONES, 5);
	CHECK(in.t.pool.nfree == 0 && lk(&in, ONES) == 5 && lk(&in, ONES - 1) == 0,
	      "all-ones /128 in 13 groups");
	memcpy(snap, in.tbl24, TBL24_BYTES);
	CHECK(try_write(&in, one, one, 5) == -ENOSPC, "second /128");
	CHECK(!memcmp(snap, in.tbl24, TBL24_BYTES), "-ENOSPC wrote tbl24");
	/*
	 * Widening it to its /120 takes no group and makes the last group
	 * uniform: it collapses and retires.
	 */
	CHECK(trie6_groups_needed(&in.t, ONES - 255, ONES) == 0,
	      "/120 over /128 needs groups");
	do_write(&in, ONES - 255, ONES, 5);
	CHECK(trie6_groups_used(&in.t) == 12 &&
		      trie6_groups_retired(&in.t) == 1 &&
		      lk(&in, ONES - 255) == 5 && lk(&in, ONES - 256) == 0,
	      "/120: %u used, %u retired", trie6_groups_used(&in.t),
	      trie6_groups_retired(&in.t));
	/* Retired groups are not free: still no room for 13. */
	CHECK(try_write(&in, one, one, 5) == -ENOSPC, "retired reused");
	do_write(&in, ONES - 255, ONES, 0);
	CHECK(trie6_groups_retired(&in.t) == 13 && in.t.pool.nfree == 0,
	      "deleted: %u retired", trie6_groups_retired(&in.t));
	CHECK(try_write(&in, one, one, 5) == -ENOSPC, "retired reused");
	reclaim(&in);
	do_write(&in, one, one, 5);
	CHECK(lk(&in, one) == 5 && lk(&in, one + 1) == 0, "after reclaim");
	inst_fini(&in);
	free(snap);
	printf("  exhaustion ok\n");
}

/*
 * Random add/delete/replace batches on a table, each change written as
 * its span's new ranges; after each batch (and a reclaim) the table must
 * equal a from-scratch build of the new set.
 */
static void test_incremental(const char *name, size_t n, unsigned int batches,
			     unsigned int per_batch, unsigned int spread)
{
	struct pset ps = { 0 };
	struct rset rs = { 0 };
	struct inst in, ref = { 0 };
	struct { u128 first, last; } *chg;
	unsigned int b, j;
	size_t canon, adds = 0, dels = 0, repl = 0;
	double t, tw = 0;

	cur_test = name;
	chg = xmalloc(per_batch * sizeof(*chg));
	gen_table(&ps, n, spread, 90, 32);
	rs_build(&rs, &ps);
	canon = canonical_groups(&rs);
	inst_init(&in, canon + canon / 2 + 1000);
	CHECK(trie6_build(&in.t, rs.r, rs.n) == 0, "build");
	poison_free(&in);
	check_table(&in, NULL, &rs, &ps, 20000, true);
	t = now();
	for (b = 0; b < batches; b++) {
		double t0;

		for (j = 0; j < per_batch; j++) {
			unsigned int op = rnd_below(3);
			size_t i = rnd_below(ps.n);

			if (op == 0 || ps.n < 10) {
				/* An add: the generator's next prefix. */
				while (!gen_one(&ps, spread, 90, 32))
					;
				i = ps.n - 1;
				adds++;
			} else if (op == 1) {
				/* A replace: the nexthop changes. */
				ps.p[i].nh = ps.p[i].nh != 2 ? 2 :
					     3 + rnd_below(40);
				repl++;
			}
			chg[j].first = p_first(&ps.p[i]);
			chg[j].last = p_last(&ps.p[i]);
			if (op == 2 && ps.n >= 10) {
				ps_del(&ps, i);
				dels++;
			}
		}
		rs_build(&rs, &ps);
		t0 = now();
		for (j = 0; j < per_batch; j++)
			write_span(&in, &rs, chg[j].first, chg[j].last);
		tw += now() - t0;
		/* Before the grace period: retired groups are unreachable. */
		walk(&in, &rs);
		reclaim(&in);
		build_ref(&ref, &rs);
		CHECK(trie6_groups_used(&in.t) == trie6_groups_used(&ref.t),
		      "batch %u: %u groups in use, a fresh build has %u", b,
		      trie6_groups_used(&in.t), trie6_groups_used(&ref.t));
		check_table(&in, &ref, &rs, &ps, 2000, b + 1 == batches);
		if (b + 1 == batches || b % 8 == 0)
			same_tree(&in, &ref);
	}
	printf("  %s: %zu prefixes, %u batches of %u (%zu adds, %zu deletes, %zu replaces), %u groups, writes %.1f us/change, %.2fs\n",
	       name, ps.n, batches, per_batch, adds, dels, repl,
	       trie6_groups_used(&in.t), tw * 1e6 / (batches * per_batch),
	       now() - t);
	free(chg);
	inst_fini(&in);
	inst_fini(&ref);
	ps_free(&ps);
	rs_free(&rs);
}

/*
 * One prefix set added one prefix at a time, forwards into one instance
 * and backwards into another: the same tree as each other and as a
 * from-scratch build. Rewriting the span of a prefix that is not there
 * changes nothing.
 */
static void test_order(size_t n)
{
	struct pset ps = { 0 }, fw = { 0 }, bw = { 0 };
	struct rset rs = { 0 };
	struct inst a, b, ref = { 0 };
	size_t i;

	cur_test = "order";
	gen_table(&ps, n, 10, 50, 32);
	inst_init(&a, 4 * n);
	inst_init(&b, 4 * n);
	for (i = 0; i < n; i++) {
		const struct xfib_pfx *p = &ps.p[i], *q = &ps.p[n - 1 - i];

		apply_add(&a, &fw, &rs, from_bytes(128, p->addr), p->plen,
			  p->nh);
		apply_add(&b, &bw, &rs, from_bytes(128, q->addr), q->plen,
			  q->nh);
		if (i % 64 == 0) {
			reclaim(&a);
			reclaim(&b);
		}
	}
	reclaim(&a);
	reclaim(&b);
	rs_build(&rs, &ps);
	build_ref(&ref, &rs);
	check_table(&a, &ref, &rs, &ps, 2000, true);
	check_table(&b, &ref, &rs, &ps, 2000, true);
	same_tree(&a, &b);
	same_tree(&a, &ref);
	for (i = 0; i < 200; i++) {
		unsigned int len = len_v6();
		u128 x = addr_v6();
		__u32 used = trie6_groups_used(&a.t);

		if (ps_has(&ps, pfx_first(128, x, len), len))
			continue;
		write_span(&a, &rs, pfx_first(128, x, len),
			   pfx_last(128, x, len));
		CHECK(trie6_groups_used(&a.t) == used &&
			      trie6_groups_retired(&a.t) == 0,
		      "absent prefix %s/%u changed the groups", fmt(x), len);
	}
	same_tree(&a, &ref);
	printf("  %zu prefixes added forwards and backwards: same tree, %u groups\n",
	       n, trie6_groups_used(&a.t));
	inst_fini(&a);
	inst_fini(&b);
	inst_fini(&ref);
	ps_free(&ps);
	ps_free(&fw);
	ps_free(&bw);
	rs_free(&rs);
}

/* ---- a reader running while the writer works -------------------------- */

#define CONC_SAMPLES 4096
#define CONC_TOGGLES 24
#define CONC_ALLOWED (CONC_TOGGLES + 1)

struct conc {
	struct inst *in;
	u128 addr[CONC_SAMPLES];
	__u32 allowed[CONC_SAMPLES][CONC_ALLOWED];
	unsigned int nallowed[CONC_SAMPLES];
	unsigned long long done; /* lookups finished: the quiescent count */
	int stop;
	/* First failure seen by the reader. */
	int bad;
	u128 bad_addr;
	__u32 bad_nh;
};

static void *conc_reader(void *arg)
{
	struct conc *c = arg;
	unsigned int i = 0, j;

	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		__u8 b[16];
		__u32 nh;

		to_bytes(128, c->addr[i], b);
		nh = xfib_trie6_lookup(c->in->tbl24, c->in->tbl8, b);
		for (j = 0; j < c->nallowed[i]; j++)
			if (c->allowed[i][j] == nh)
				break;
		if (j == c->nallowed[i] && !c->bad) {
			c->bad_addr = c->addr[i];
			c->bad_nh = nh;
			__atomic_store_n(&c->bad, 1, __ATOMIC_RELEASE);
		}
		/* After the lookup's loads: a quiescent state. */
		__atomic_add_fetch(&c->done, 1, __ATOMIC_SEQ_CST);
		i = (i + 1) % CONC_SAMPLES;
	}
	return NULL;
}

/* Waits until the reader has finished every lookup it had started. */
static void grace_period(struct conc *c)
{
	unsigned long long d = __atomic_load_n(&c->done, __ATOMIC_SEQ_CST);

	while (__atomic_load_n(&c->done, __ATOMIC_SEQ_CST) == d)
		sched_yield();
}

static void add_allowed(struct conc *c, unsigned int i, __u32 nh)
{
	unsigned int j;

	for (j = 0; j < c->nallowed[i]; j++)
		if (c->allowed[i][j] == nh)
			return;
	c->allowed[i][c->nallowed[i]++] = nh;
}

/*
 * A reader looks up sample addresses non-stop while the writer toggles
 * nested prefixes in 2001:db8::/32 (span writes, collapses, groups
 * retired, reclaimed after a grace period and poisoned, then reused). An
 * address outside the toggled prefixes must always read its nexthop; one
 * inside may read any answer some subset of the toggles gives, never
 * anything else (no poison, no half-built group).
 */
static void test_concurrent(void)
{
	u128 agg = A(128, "2001:db8::");
	struct conc *c = calloc(1, sizeof(*c));
	struct { u128 a; unsigned int plen; bool on; } tg[CONC_TOGGLES];
	struct npfx *nv;
	struct pset ps = { 0 };
	struct rset rs = { 0 };
	struct inst in;
	unsigned int i, k, ops = 0, stable = 0;
	pthread_t th;
	double t;
	/* How many toggles run depends on time: keep later tests' seeds. */
	uint64_t next_state = rnd();

	cur_test = "concurrent";
	CHECK(c, "out of memory");
	gen_table(&ps, 2000, 10, 90, 32);
	ps_add(&ps, agg, 32, 40);
	for (i = 0; i < 16; i++)
		ps_add(&ps, agg | (rnd_addr(128) & host_mask(128, 32)),
		       40 + rnd_below(25), 41 + i);
	for (i = 0; i < CONC_TOGGLES; i++) {
		/* Nested: each inside an earlier one, or a new one in /32. */
		u128 par = i && rnd_below(3) ? tg[rnd_below(i)].a : agg;
		unsigned int plen = i && rnd_below(3) ?
						tg[rnd_below(i)].plen : 32;

		tg[i].plen = plen + 1 + rnd_below(128 - plen);
		if (tg[i].plen > 128)
			tg[i].plen = 128;
		tg[i].a = pfx_first(128, par | (rnd_addr(128) &
						 host_mask(128, plen)),
				    tg[i].plen);
		tg[i].on = false;
		/* A duplicate, or a base prefix: never toggled. */
		for (k = 0; k < i; k++)
			if (tg[k].a == tg[i].a && tg[k].plen == tg[i].plen)
				tg[i].plen = 0;
		if (tg[i].plen && ps_has(&ps, tg[i].a, tg[i].plen))
			tg[i].plen = 0;
	}
	rs_build(&rs, &ps);
	inst_init(&in, canonical_groups(&rs) + 400);
	CHECK(trie6_build(&in.t, rs.r, rs.n) == 0, "build");
	poison_free(&in);
	c->in = &in;
	nv = naive_prep(&ps);
	for (i = 0; i < CONC_SAMPLES; i++) {
		u128 a;
		unsigned int bestlen = 0;
		__u32 base;
		size_t j;

		if (i % 2) {
			const struct xfib_pfx *p = &ps.p[rnd_below(ps.n)];

			a = p_first(p) |
			    (rnd_addr(128) & host_mask(128, p->plen));
		} else {
			k = rnd_below(CONC_TOGGLES);
			a = tg[k].a |
			    (rnd_addr(128) & host_mask(128, tg[k].plen));
			if (i % 8 == 0)
				a = tg[k].a - 1 + rnd_below(3);
		}
		c->addr[i] = a;
		base = rs_lookup(&rs, a);
		for (j = 0; j < ps.n; j++)
			if (a >= nv[j].first && a <= nv[j].last &&
			    (unsigned int)nv[j].plen > bestlen)
				bestlen = nv[j].plen;
		add_allowed(c, i, base);
		for (k = 0; k < CONC_TOGGLES; k++)
			if (tg[k].plen && tg[k].plen > bestlen &&
			    a >= tg[k].a &&
			    a <= pfx_last(128, tg[k].a, tg[k].plen))
				add_allowed(c, i, 5000 + k);
		stable += c->nallowed[i] == 1;
	}
	free(nv);
	CHECK(!pthread_create(&th, NULL, conc_reader, c), "pthread_create");
	t = now();
	while (now() - t < 1.0 || ops < 200) {
		k = rnd_below(CONC_TOGGLES);
		if (!tg[k].plen)
			continue;
		if (tg[k].on)
			ps_del(&ps, find_pfx(&ps, tg[k].a, tg[k].plen));
		else
			ps_add(&ps, tg[k].a, tg[k].plen, 5000 + k);
		tg[k].on = !tg[k].on;
		rs_build(&rs, &ps);
		write_span(&in, &rs, tg[k].a,
			   pfx_last(128, tg[k].a, tg[k].plen));
		ops++;
		if (rnd_below(2)) {
			grace_period(c);
			reclaim(&in);
		}
		if (__atomic_load_n(&c->bad, __ATOMIC_ACQUIRE))
			break;
	}
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(!c->bad, "reader saw nh %u at %s", c->bad_nh, fmt(c->bad_addr));
	reclaim(&in);
	check_table(&in, NULL, &rs, &ps, 1000, true);
	printf("  concurrent: %u toggles, %llu lookups by the reader (%u of %u samples stable), ok\n",
	       ops, c->done, stable, CONC_SAMPLES);
	inst_fini(&in);
	ps_free(&ps);
	rs_free(&rs);
	free(c);
	rng_state = next_state;
}

/* ---- the big table ----------------------------------------------------- */

/*
 * A 250k-prefix real-world-shaped table: build time, groups and memory,
 * the cost of single-prefix updates, then the full check.
 */
static void test_big(size_t n)
{
	struct pset ps = { 0 };
	struct rset rs = { 0 };
	struct inst in, ref = { 0 };
	size_t canon, k, nchg = 5000, pieces = 0;
	struct { u128 first, last; } *chg;
	double t, tb, tr, tw;
	int ret;

	cur_test = "big";
	gen_table(&ps, n, 10, 90, 32);
	print_mix(&ps);
	t = now();
	rs_build(&rs, &ps);
	tr = now() - t;
	canon = canonical_groups(&rs);
	/* Exactly the groups the table needs: one fewer must fail. */
	inst_init(&in, canon - 1);
	ret = trie6_build(&in.t, rs.r, rs.n);
	CHECK(ret == -ENOSPC, "build into %zu groups: %d", canon - 1, ret);
	inst_fini(&in);
	inst_init(&in, canon + canon / 8);
	t = now();
	ret = trie6_build(&in.t, rs.r, rs.n);
	tb = now() - t;
	CHECK(ret == 0, "build: %d", ret);
	poison_free(&in);
	printf("    %zu prefixes -> %zu ranges in %.0f ms; trie6_build %.0f ms\n",
	       ps.n, rs.n, tr * 1e3, tb * 1e3);
	printf("    groups %u (%.2f per prefix), tbl8 %.1f MiB = %.0f B/prefix; with tbl24 %.1f MiB = %.0f B/prefix\n",
	       trie6_groups_used(&in.t),
	       (double)trie6_groups_used(&in.t) / ps.n,
	       trie6_groups_used(&in.t) * (double)GROUP_BYTES / (1 << 20),
	       trie6_groups_used(&in.t) * (double)GROUP_BYTES / ps.n,
	       (trie6_groups_used(&in.t) * (double)GROUP_BYTES + TBL24_BYTES) /
		       (1 << 20),
	       (trie6_groups_used(&in.t) * (double)GROUP_BYTES + TBL24_BYTES) /
		       ps.n);
	check_table(&in, NULL, &rs, &ps, 50000, true);
	{
		size_t depth[XFIB_TRIE6_MAX_LEVELS + 1] = { 0 };
		unsigned int d;

		canonical_groups_depth(&rs, depth);
		printf("    groups by level (1 = below tbl24):");
		for (d = 1; d <= XFIB_TRIE6_MAX_LEVELS; d++)
			printf(" %zu", depth[d]);
		printf("\n");
	}
	/* Without the /49../128 more-specifics: a DFZ-like table. */
	{
		struct pset dfz = { 0 };
		struct rset rd = { 0 };
		size_t i, g;

		for (i = 0; i < ps.n; i++)
			if (ps.p[i].plen <= 48)
				ps_add(&dfz, from_bytes(128, ps.p[i].addr),
				       ps.p[i].plen, ps.p[i].nh);
		rs_build(&rd, &dfz);
		g = canonical_groups(&rd);
		printf("    its %zu prefixes up to /48 alone: %zu groups, tbl8 %.0f B/prefix\n",
		       dfz.n, g, g * (double)GROUP_BYTES / dfz.n);
		ps_free(&dfz);
		rs_free(&rd);
	}

	/* Single-prefix changes: the writes of each one's span, timed. */
	chg = xmalloc(nchg * sizeof(*chg));
	for (k = 0; k < nchg; k++) {
		size_t i = rnd_below(ps.n);

		if (k % 2 == 0) {
			while (!gen_one(&ps, 10, 50, 32))
				;
			i = ps.n - 1;
		}
		chg[k].first = p_first(&ps.p[i]);
		chg[k].last = p_last(&ps.p[i]);
		if (k % 2)
			ps_del(&ps, i);
	}
	rs_build(&rs, &ps);
	/* Timed: the trie6_write_range() calls alone, as the daemon's. */
	t = now();
	for (k = 0; k < nchg; k++) {
		size_t i = rs_find(&rs, chg[k].first);

		for (; i < rs.n && r_start(&rs, i) <= chg[k].last; i++) {
			u128 lo = r_start(&rs, i) > chg[k].first ?
					  r_start(&rs, i) : chg[k].first;
			u128 hi = r_last(&rs, i) < chg[k].last ?
					  r_last(&rs, i) : chg[k].last;

			ret = trie6_write_range(&in.t, lo, hi, rs.r[i].nh);
			CHECK(ret == 0, "write: %d", ret);
			pieces++;
		}
	}
	tw = now() - t;
	reclaim(&in);
	printf("    %zu single-prefix adds/deletes: %.2f us each (%.2f range writes each)\n",
	       nchg, tw * 1e6 / nchg, (double)pieces / nchg);
	/* Equal trees are equal answers everywhere: the cheap full check. */
	build_ref(&ref, &rs);
	same_tree(&in, &ref);
	check_table(&in, &ref, &rs, NULL, 20000, true);
	free(chg);
	inst_fini(&in);
	inst_fini(&ref);
	ps_free(&ps);
	rs_free(&rs);
}

/* Each test prints what it checked; this adds how long it took. */
#define RUN(call)                                                 \
	do {                                                      \
		double t_ = now();                                \
		call;                                             \
		printf("    (%s: %.1fs)\n", cur_test, now() - t_); \
	} while (0)

int main(int argc, char **argv)
{
	double t0 = now();

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);

	RUN(test_golden());
	RUN(test_default());
	RUN(test_depth());
	RUN(test_exhaust());
	RUN(test_extend());
	RUN(test_paint("paint-narrow", A(128, "2001:db8::"), 80, 160, 3000, 4));
	RUN(test_paint("paint-wide", A(128, "2001::"), 112, 4000, 3000, 6));
	RUN(test_order(1000));
	RUN(test_incremental("incremental-small", 3000, 60, 20, 5));
	RUN(test_incremental("incremental-large", 100000, 5, 2000, 10));
	RUN(test_concurrent());
	RUN(test_big(250000));

	printf("test_trie6: ok: %llu tables, %llu lookups, %llu writes (max needed %u), %.1fs\n",
	       n_tables, n_lookups, n_writes, max_needed, now() - t0);
	return 0;
}
