// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the control-plane prefix tree (ctl/xfibd/rib/ptree.c), checked
 * against references that know nothing about tries: a plain list of
 * prefixes with a linear longest-prefix match for small tables, one hash
 * probe per prefix length present for large ones (the two cross-checked
 * on every small table), and, for span walks over large tables, the range
 * builder of tests/unit/ref/ranges.c run on the same prefix set, clipped to the span.
 *
 * A span walk over a small table is checked for its shape (covers exactly
 * the span, ascending, contiguous, neighbours differ) and then at the
 * first and last address of every range and at the first address of
 * every prefix and the one past its end, where they fall inside the span.
 * Both the walk and the reference are piecewise constant and those points
 * include every place where either changes, so agreement on them is
 * agreement on the whole span.
 *
 * Every call into the tree gets random host bits beyond plen, which it
 * must ignore, and its address in a buffer of exactly 4 or 16 bytes, so
 * ASan sees any read past it.
 *
 * Cases: the API contract (errors, return values, early stop, nexthop 0),
 * /0 first, last and beside the all-ones host route, host routes, every
 * depth added then deleted in reverse (and in order), overlapping
 * prefixes with hand-written expected ranges, deleting covering and
 * absent prefixes and glue, replacing nexthops, insertion order, small
 * random tables with heavy overlap checked after every operation, and
 * large realistic tables under rounds of random inserts, updates and
 * deletes. A 1M-prefix IPv4 load (and a 250k IPv6 one) is timed at the
 * end; the figures are informational, and only meaningful from a build
 * without sanitizers:
 *
 *   gcc -O2 -std=gnu11 -D_GNU_SOURCE -Iinclude -Ictl -Itests/unit/ref \
 *       tests/unit/test_ptree.c ctl/xfibd/rib/ptree.c tests/unit/ref/ranges.c \
 *       -o /tmp/ptree_bench
 *   /tmp/ptree_bench 0 --bench
 *
 * Usage: unit_test_ptree [seed] [--bench]. The seed is printed first;
 * passing it back replays the same run. --bench runs only the timings.
 */
#include <errno.h>

#define TESTLIB_SEED 0x7e5eed9f1b2024ull
#include "testlib.h"
#include "rib/ptree.h"
#include "ranges.h"

#define DEF_NH 0xfffffff0u /* "no route" of the walks that do not use 0 */

static unsigned long long n_lookups, n_walks, n_ops;

/* ---- families and addresses (host order) -------------------------------- */

struct fam {
	const char *name;
	unsigned int bits;
};

static const struct fam f4 = { .name = "ipv4", .bits = 32 };
static const struct fam f6 = { .name = "ipv6", .bits = 128 };

/* ---- calls into the tree ------------------------------------------------ */

/* Exactly sized (globals get ASan redzones): over-reads are reported. */
static __u8 abuf4[4], abuf6[16];

/* addr in its own exact buffer, with random host bits beyond plen. */
static const __u8 *arg_addr(const struct fam *f, u128 a, unsigned int plen)
{
	__u8 *b = f->bits == 32 ? abuf4 : abuf6;

	if (plen < f->bits && rnd_below(2))
		a |= rnd_addr(f->bits) & host_mask(f->bits, plen);
	to_bytes(f->bits, a, b);
	return b;
}

static int pt_set(struct ptree *t, const struct fam *f, u128 a,
		  unsigned int plen, __u32 nh)
{
	n_ops++;
	return ptree_set(t, arg_addr(f, a, plen), plen, nh);
}

static int pt_del(struct ptree *t, const struct fam *f, u128 a,
		  unsigned int plen)
{
	n_ops++;
	return ptree_del(t, arg_addr(f, a, plen), plen);
}

static int pt_get(const struct ptree *t, const struct fam *f, u128 a,
		  unsigned int plen, __u32 *nh)
{
	return ptree_get(t, arg_addr(f, a, plen), plen, nh);
}

static __u32 pt_lookup(const struct ptree *t, const struct fam *f, u128 a,
		       unsigned int *plen, __u32 def)
{
	__u8 *b = f->bits == 32 ? abuf4 : abuf6;

	to_bytes(f->bits, a, b);
	n_lookups++;
	return ptree_lookup(t, b, plen, def);
}

struct wrange {
	u128 first, last;
	__u32 nh;
};

/* What a walk emitted. stop_at > 0: emit returns stop_ret on that call. */
struct wout {
	struct wrange *v;
	size_t n, cap;
	size_t stop_at;
	int stop_ret;
};

static int collect(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh)
{
	struct wout *o = ctx;

	if (o->n == o->cap) {
		o->cap = o->cap ? 2 * o->cap : 64;
		o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
	}
	o->v[o->n++] = (struct wrange){ .first = first, .last = last, .nh = nh };
	if (o->stop_at && o->n == o->stop_at)
		return o->stop_ret;
	return 0;
}

/* Walks (a, plen) into o (reset first); returns the walk's value. */
static int pt_walk(const struct ptree *t, const struct fam *f, u128 a,
		   unsigned int plen, __u32 def, struct wout *o)
{
	o->n = 0;
	n_walks++;
	return ptree_walk_span(t, arg_addr(f, a, plen), plen, def, collect, o);
}

/* ---- reference ----------------------------------------------------------- */

struct rpfx {
	u128 first;
	__u32 nh;
	__u8 plen;
};

/*
 * A dense list of prefixes (for random picks and the linear scan) and an
 * open-addressed index (first, plen) -> position + 1, with linear probing
 * and backward-shift deletion so deletes leave no tombstones.
 */
struct ref {
	const struct fam *f;
	struct rpfx *v;
	size_t n, cap;
	__u32 *slot;
	size_t mask;
	size_t nlen[129]; /* prefixes per length, for the hashed match */
};

static void ref_init(struct ref *r, const struct fam *f, size_t cap)
{
	size_t sz = 16;

	while (sz < 2 * cap)
		sz *= 2;
	memset(r, 0, sizeof(*r));
	r->f = f;
	r->cap = cap;
	r->v = xmalloc(cap * sizeof(*r->v));
	r->slot = calloc(sz, sizeof(*r->slot));
	if (!r->slot) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	r->mask = sz - 1;
}

static void ref_free(struct ref *r)
{
	free(r->v);
	free(r->slot);
}

static size_t ref_hash(u128 key, unsigned int plen)
{
	return pfx_hash(key, (uint64_t)(plen + 1));
}

/* The slot holding (first, plen), or the empty slot where it would go. */
static size_t ref_find(const struct ref *r, u128 first, unsigned int plen)
{
	size_t i = ref_hash(first, plen) & r->mask;

	for (;; i = (i + 1) & r->mask) {
		const struct rpfx *p;

		if (!r->slot[i])
			return i;
		p = &r->v[r->slot[i] - 1];
		if (p->first == first && p->plen == plen)
			return i;
	}
}

static const struct rpfx *ref_get(const struct ref *r, u128 a,
				  unsigned int plen)
{
	size_t s = ref_find(r, pfx_first(r->f->bits, a, plen), plen);

	return r->slot[s] ? &r->v[r->slot[s] - 1] : NULL;
}

/* 1 if inserted, 0 if updated. */
static int ref_set(struct ref *r, u128 a, unsigned int plen, __u32 nh)
{
	u128 first = pfx_first(r->f->bits, a, plen);
	size_t s = ref_find(r, first, plen);

	if (r->slot[s]) {
		r->v[r->slot[s] - 1].nh = nh;
		return 0;
	}
	CHECK(r->n < r->cap, "test bug: reference full (%zu)", r->cap);
	r->v[r->n] = (struct rpfx){ .first = first, .nh = nh, .plen = plen };
	r->slot[s] = (__u32)++r->n;
	r->nlen[plen]++;
	return 1;
}

static int ref_del(struct ref *r, u128 a, unsigned int plen)
{
	u128 first = pfx_first(r->f->bits, a, plen);
	size_t s = ref_find(r, first, plen), i, j, idx;

	if (!r->slot[s])
		return -ENOENT;
	idx = r->slot[s] - 1;
	/* Backward shift: pull later entries of the probe run into the hole. */
	for (i = s, j = s;;) {
		size_t home;

		j = (j + 1) & r->mask;
		if (!r->slot[j])
			break;
		home = ref_hash(r->v[r->slot[j] - 1].first,
				r->v[r->slot[j] - 1].plen) & r->mask;
		if (((j - home) & r->mask) >= ((j - i) & r->mask)) {
			r->slot[i] = r->slot[j];
			i = j;
		}
	}
	r->slot[i] = 0;
	r->nlen[plen]--;
	/* Keep v dense: the last entry takes the freed position. */
	if (idx != r->n - 1) {
		r->v[idx] = r->v[r->n - 1];
		s = ref_find(r, r->v[idx].first, r->v[idx].plen);
		CHECK(r->slot[s] == r->n, "test bug: reference index broken");
		r->slot[s] = (__u32)idx + 1;
	}
	r->n--;
	return 0;
}

/* The definition itself: scan everything, keep the longest. */
static __u32 ref_lpm_naive(const struct ref *r, u128 a, __u32 def,
			   unsigned int *plen)
{
	int best = -1;
	__u32 nh = def;
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct rpfx *p = &r->v[i];

		if (pfx_first(r->f->bits, a, p->plen) == p->first &&
		    (int)p->plen > best) {
			best = p->plen;
			nh = p->nh;
		}
	}
	*plen = best < 0 ? 0 : (unsigned int)best;
	return nh;
}

static __u32 ref_lpm_hash(const struct ref *r, u128 a, __u32 def,
			  unsigned int *plen)
{
	int len;

	for (len = r->f->bits; len >= 0; len--) {
		const struct rpfx *p;

		if (!r->nlen[len])
			continue;
		p = ref_get(r, a, len);
		if (p) {
			*plen = len;
			return p->nh;
		}
	}
	*plen = 0;
	return def;
}

/* Small tables: both references, which must agree. */
static __u32 ref_lpm(const struct ref *r, u128 a, __u32 def,
		     unsigned int *plen)
{
	unsigned int l2;
	__u32 nh, nh2;

	if (r->n > 512)
		return ref_lpm_hash(r, a, def, plen);
	nh = ref_lpm_naive(r, a, def, plen);
	nh2 = ref_lpm_hash(r, a, def, &l2);
	CHECK(nh == nh2 && *plen == l2,
	      "%s %s: test bug: references disagree (%u/%u, %u/%u)",
	      r->f->name, FA(r->f->bits, a), nh, *plen, nh2, l2);
	return nh;
}

/* ---- checks -------------------------------------------------------------- */

static void check_lookup(const struct ptree *t, const struct ref *r, u128 a,
			 __u32 def)
{
	const struct fam *f = r->f;
	unsigned int elen, glen = 999;
	__u32 exp, got;

	exp = ref_lpm(r, a, def, &elen);
	got = pt_lookup(t, f, a, &glen, def);
	CHECK(got == exp && glen == elen,
	      "%s lookup %s: nh %u /%u, longest match is nh %u /%u", f->name,
	      FA(f->bits, a), got, glen, exp, elen);
	/* plen_out may be NULL. */
	got = pt_lookup(t, f, a, NULL, def);
	CHECK(got == exp, "%s lookup %s (no plen_out): nh %u, expected %u",
	      f->name, FA(f->bits, a), got, exp);
}

/* First, last, and the addresses just outside a prefix. */
static void check_bounds(const struct ptree *t, const struct ref *r,
			 u128 first, unsigned int plen, __u32 def)
{
	u128 last = pfx_last(r->f->bits, first, plen);

	check_lookup(t, r, first, def);
	check_lookup(t, r, last, def);
	if (first > 0)
		check_lookup(t, r, first - 1, def);
	if (last < last_addr(r->f->bits))
		check_lookup(t, r, last + 1, def);
}

/* Covers exactly [first, last], ascending, contiguous, maximal. */
static void check_shape(const struct fam *f, const struct wout *o, u128 first,
			u128 last, const char *what)
{
	size_t i;

	CHECK(o->n > 0, "%s walk %s: no ranges", f->name, what);
	CHECK(o->v[0].first == first, "%s walk %s: starts at %s, not %s",
	      f->name, what, FA(f->bits, o->v[0].first), FA(f->bits, first));
	CHECK(o->v[o->n - 1].last == last, "%s walk %s: ends at %s, not %s",
	      f->name, what, FA(f->bits, o->v[o->n - 1].last),
	      FA(f->bits, last));
	for (i = 0; i < o->n; i++) {
		CHECK(o->v[i].first <= o->v[i].last,
		      "%s walk %s: range %zu is %s..%s", f->name, what, i,
		      FA(f->bits, o->v[i].first), FA(f->bits, o->v[i].last));
		if (!i)
			continue;
		CHECK(o->v[i - 1].last < last &&
			      o->v[i].first == o->v[i - 1].last + 1,
		      "%s walk %s: range %zu starts at %s after %s", f->name,
		      what, i, FA(f->bits, o->v[i].first),
		      FA(f->bits, o->v[i - 1].last));
		CHECK(o->v[i].nh != o->v[i - 1].nh,
		      "%s walk %s: ranges %zu and %zu both nh %u (not merged)",
		      f->name, what, i - 1, i, o->v[i].nh);
	}
}

/* The range holding a, which lies in the walked span. */
static const struct wrange *wfind(const struct wout *o, u128 a)
{
	size_t lo = 0, hi = o->n; /* v[lo].first <= a < v[hi].first */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->v[mid].first <= a)
			lo = mid;
		else
			hi = mid;
	}
	return &o->v[lo];
}

static void check_point(const struct ref *r, const struct wout *o, u128 a,
			__u32 def, const char *what)
{
	const struct fam *f = r->f;
	unsigned int plen;
	__u32 exp = ref_lpm(r, a, def, &plen), got = wfind(o, a)->nh;

	CHECK(got == exp, "%s walk %s: %s has nh %u, longest match is %u",
	      f->name, what, FA(f->bits, a), got, exp);
}

/* Walk of (a, plen) against the linear reference (small tables). */
static void check_walk_naive(const struct ptree *t, const struct ref *r,
			     u128 a, unsigned int plen, __u32 def)
{
	const struct fam *f = r->f;
	u128 first = pfx_first(f->bits, a, plen),
	     last = pfx_last(f->bits, a, plen);
	struct wout o = { 0 };
	char what[80];
	size_t i;
	int ret;

	snprintf(what, sizeof(what), "%s/%u", FA(f->bits, first), plen);
	ret = pt_walk(t, f, a, plen, def, &o);
	CHECK(ret == 0, "%s walk %s returns %d", f->name, what, ret);
	check_shape(f, &o, first, last, what);
	for (i = 0; i < o.n; i++) {
		check_point(r, &o, o.v[i].first, def, what);
		check_point(r, &o, o.v[i].last, def, what);
	}
	for (i = 0; i < r->n; i++) {
		u128 pf = r->v[i].first,
		     pl = pfx_last(f->bits, pf, r->v[i].plen);

		if (pf >= first && pf <= last)
			check_point(r, &o, pf, def, what);
		if (pl < last && pl + 1 >= first)
			check_point(r, &o, pl + 1, def, what);
	}
	free(o.v);
}

/* The full table as ranges, from tests/unit/ref/ranges.c: the walk's big reference. */
struct granges {
	u128 *start;
	__u32 *nh;
	size_t n;
};

static void granges_build(const struct ref *r, struct granges *g)
{
	const struct fam *f = r->f;
	struct xfib_pfx *in = xmalloc(r->n * sizeof(*in));
	size_t i;
	int ret;

	for (i = 0; i < r->n; i++) {
		memset(&in[i], 0, sizeof(in[i]));
		to_bytes(f->bits, r->v[i].first, in[i].addr);
		in[i].plen = r->v[i].plen;
		in[i].nh = r->v[i].nh;
	}
	ret = xfib_ranges_build_decoded(f->bits, in, r->n, NULL, 0, &g->start,
					&g->nh);
	CHECK(ret > 0, "%s: test bug: range build of %zu prefixes: %d",
	      f->name, r->n, ret);
	g->n = ret;
	free(in);
}

static void granges_free(struct granges *g)
{
	free(g->start);
	free(g->nh);
}

/*
 * Walk of (a, plen) with def 0 against the full-table ranges clipped to
 * the span. The builder merges equal neighbours and has no "no route"
 * apart from nexthop 0, so the clipped list is exactly what the walk must
 * emit, range for range.
 */
static void check_walk_ranges(const struct ptree *t, const struct fam *f,
			      const struct granges *g, u128 a,
			      unsigned int plen, struct wout *o)
{
	u128 first = pfx_first(f->bits, a, plen),
	     last = pfx_last(f->bits, a, plen);
	size_t i, k;
	char what[80];
	int ret;

	snprintf(what, sizeof(what), "%s/%u", FA(f->bits, first), plen);
	ret = pt_walk(t, f, a, plen, 0, o);
	CHECK(ret == 0, "%s walk %s returns %d", f->name, what, ret);
	check_shape(f, o, first, last, what);
	for (i = xfib_ranges_at(g->start, g->n, first), k = 0;
	     i < g->n && g->start[i] <= last; i++, k++) {
		u128 ef, el;

		xfib_ranges_clip(g->start, g->n, i, first, last, &ef, &el);
		CHECK(k < o->n, "%s walk %s: %zu ranges, the table has more",
		      f->name, what, o->n);
		CHECK(o->v[k].first == ef && o->v[k].last == el &&
			      o->v[k].nh == g->nh[i],
		      "%s walk %s: range %zu is %s..%s nh %u, expected %s..%s nh %u",
		      f->name, what, k, FA(f->bits, o->v[k].first),
		      FA(f->bits, o->v[k].last), o->v[k].nh, FA(f->bits, ef),
		      FA(f->bits, el), g->nh[i]);
	}
	CHECK(k == o->n, "%s walk %s: %zu ranges, expected %zu", f->name,
	      what, o->n, k);
}

/* White box: glue nodes always have two children, so nodes < 2 * routes. */
static void check_counts(const struct ptree *t, const struct ref *r)
{
	CHECK(ptree_count(t) == r->n, "%s: count %zu, expected %zu",
	      r->f->name, ptree_count(t), r->n);
	CHECK(r->n ? t->nodes < 2 * r->n : t->nodes == 0,
	      "%s: %zu nodes for %zu routes (glue left behind)", r->f->name,
	      t->nodes, r->n);
}

/*
 * Everything about a small table: count, every prefix by exact match,
 * lookups at every prefix's edges and at random addresses, and walks of
 * the whole space, of some prefixes and of some random spans, both with
 * def 0 (also compared with the range builder) and with another def.
 */
static void check_small(const struct ptree *t, const struct ref *r,
			unsigned int nwalks)
{
	const struct fam *f = r->f;
	struct granges g;
	struct wout o = { 0 };
	size_t i;
	__u32 nh;
	int ret;

	check_counts(t, r);
	for (i = 0; i < r->n; i++) {
		const struct rpfx *p = &r->v[i];

		ret = pt_get(t, f, p->first, p->plen, &nh);
		CHECK(ret == 0 && nh == p->nh,
		      "%s get %s/%u: %d nh %u, expected nh %u", f->name,
		      FA(f->bits, p->first), p->plen, ret, nh, p->nh);
		check_bounds(t, r, p->first, p->plen, 0);
	}
	check_lookup(t, r, 0, DEF_NH);
	check_lookup(t, r, last_addr(f->bits), DEF_NH);
	for (i = 0; i < 4; i++)
		check_lookup(t, r, rnd_addr(f->bits), DEF_NH);

	check_walk_naive(t, r, 0, 0, DEF_NH);
	granges_build(r, &g);
	check_walk_ranges(t, f, &g, 0, 0, &o);
	for (i = 0; i < nwalks; i++) {
		u128 a;
		unsigned int plen;

		if (r->n && i % 2 == 0) {
			const struct rpfx *p = &r->v[rnd_below(r->n)];

			a = p->first;
			/* The prefix, or a span around or inside it. */
			plen = p->plen;
			if (rnd_below(3) == 0)
				plen = rnd_below(f->bits + 1);
		} else {
			a = r->n && rnd_below(2) ?
				    r->v[rnd_below(r->n)].first ^
					    (rnd_addr(f->bits) >>
					     rnd_below(f->bits)) :
				    rnd_addr(f->bits);
			plen = rnd_below(f->bits + 1);
		}
		check_walk_naive(t, r, a, plen, i % 3 ? 0 : DEF_NH);
		check_walk_ranges(t, f, &g, a, plen, &o);
	}
	granges_free(&g);
	free(o.v);
}

/* Applies one set/del to tree and reference, checking the return value. */
/* Applies one set/del to tree and reference, checking the return value;
 * half the sets by ptree_set_old, checking the old nexthop it reports. */
static void do_set(struct ptree *t, struct ref *r, u128 a, unsigned int plen,
		   __u32 nh)
{
	const struct rpfx *was = ref_get(r, a, plen);
	__u32 was_nh = was ? was->nh : 0, old = ~0u;
	bool by_old = rnd_below(2);
	int exp = ref_set(r, a, plen, nh), got;

	if (by_old) {
		n_ops++;
		got = ptree_set_old(t, arg_addr(r->f, a, plen), plen, nh, &old);
	} else {
		got = pt_set(t, r->f, a, plen, nh);
	}
	CHECK(got == exp, "%s set %s/%u nh %u returns %d, expected %d",
	      r->f->name, FA(r->f->bits, pfx_first(r->f->bits, a, plen)), plen,
	      nh, got, exp);
	if (by_old && got == 0)
		CHECK(old == was_nh, "%s set %s/%u: old nh %u, expected %u",
		      r->f->name, FA(r->f->bits, pfx_first(r->f->bits, a, plen)),
		      plen, old, was_nh);
}

static void do_del(struct ptree *t, struct ref *r, u128 a, unsigned int plen)
{
	int exp = ref_del(r, a, plen), got = pt_del(t, r->f, a, plen);

	CHECK(got == exp, "%s del %s/%u returns %d, expected %d", r->f->name,
	      FA(r->f->bits, pfx_first(r->f->bits, a, plen)), plen, got, exp);
}

static void tree_init(struct ptree *t, const struct fam *f)
{
	int ret = ptree_init(t, f->bits);

	CHECK(ret == 0, "%s: init returns %d", f->name, ret);
}

/* ---- cases --------------------------------------------------------------- */

static void test_api(const struct fam *f)
{
	struct ptree t;
	struct ref r;
	struct wout o = { 0 };
	unsigned int plen;
	__u32 nh;
	int ret, bad[] = { 0, 1, 31, 33, 64, 127, 129, -32, 256 };
	size_t i;

	cur_test = "api";
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ret = ptree_init(&t, bad[i]);
		CHECK(ret == -EINVAL, "init bits %d returns %d", bad[i], ret);
	}
	tree_init(&t, f);
	ref_init(&r, f, 64);

	/* Empty. */
	CHECK(ptree_count(&t) == 0 && ptree_mem_bytes(&t) == 0,
	      "%s: empty tree has count %zu, %zu bytes", f->name,
	      ptree_count(&t), ptree_mem_bytes(&t));
	plen = 77;
	CHECK(pt_lookup(&t, f, rnd_addr(f->bits), &plen, 1234) == 1234 &&
		      plen == 0,
	      "%s: empty lookup", f->name);
	CHECK(pt_get(&t, f, 0, 0, &nh) == -ENOENT, "%s: empty get", f->name);
	CHECK(pt_del(&t, f, 0, 0) == -ENOENT, "%s: empty del", f->name);
	ret = pt_walk(&t, f, 0, 0, 1234, &o);
	CHECK(ret == 0 && o.n == 1 && o.v[0].first == 0 &&
		      o.v[0].last == last_addr(f->bits) && o.v[0].nh == 1234,
	      "%s: empty walk /0: %d, %zu ranges", f->name, ret, o.n);
	ret = pt_walk(&t, f, last_addr(f->bits), f->bits, 5, &o);
	CHECK(ret == 0 && o.n == 1 && o.v[0].first == last_addr(f->bits) &&
		      o.v[0].last == last_addr(f->bits) && o.v[0].nh == 5,
	      "%s: empty walk of the last host: %d, %zu ranges", f->name, ret,
	      o.n);

	/* plen beyond the family: rejected, nothing changes or is emitted. */
	for (plen = f->bits + 1; plen <= f->bits + 2; plen++) {
		ret = pt_set(&t, f, 0, plen, 1);
		CHECK(ret == -EINVAL, "%s: set /%u returns %d", f->name, plen,
		      ret);
		ret = pt_del(&t, f, 0, plen);
		CHECK(ret == -EINVAL, "%s: del /%u returns %d", f->name, plen,
		      ret);
		ret = pt_get(&t, f, 0, plen, &nh);
		CHECK(ret == -EINVAL, "%s: get /%u returns %d", f->name, plen,
		      ret);
		ret = pt_walk(&t, f, 0, plen, 0, &o);
		CHECK(ret == -EINVAL && o.n == 0,
		      "%s: walk /%u returns %d after %zu ranges", f->name,
		      plen, ret, o.n);
	}
	ret = pt_set(&t, f, 0, 300, 1);
	CHECK(ret == -EINVAL, "%s: set /300 returns %d", f->name, ret);
	CHECK(ptree_count(&t) == 0, "%s: rejected set counted", f->name);

	/* Inserted, then updated; host bits are ignored everywhere. */
	{
		u128 a = f->bits == 32 ? A(f->bits, "10.1.2.3") :
					 A(f->bits, "2001:db8::1");
		unsigned int l = f->bits == 32 ? 8 : 32;

		ret = ptree_set(&t, arg_addr(f, a, f->bits), l, 7);
		CHECK(ret == 1, "%s: first set returns %d", f->name, ret);
		ref_set(&r, a, l, 7);
		ret = pt_set(&t, f, pfx_first(f->bits, a, l), l, 8);
		CHECK(ret == 0, "%s: second set returns %d", f->name, ret);
		ref_set(&r, a, l, 8);
		ret = ptree_get(&t,
				arg_addr(f, pfx_last(f->bits, a, l), f->bits),
				l, &nh);
		CHECK(ret == 0 && nh == 8, "%s: get with host bits: %d nh %u",
		      f->name, ret, nh);
		check_small(&t, &r, 4);
		ret = ptree_del(&t, arg_addr(f, a | 1, f->bits), l);
		CHECK(ret == 0, "%s: del with host bits returns %d", f->name,
		      ret);
		ref_del(&r, a, l);
		check_small(&t, &r, 4);
	}

	/* Nexthop 0 is a route like any other, not "no route". */
	do_set(&t, &r, 0, 1, 0);
	plen = 99;
	nh = pt_lookup(&t, f, 1, &plen, DEF_NH);
	CHECK(nh == 0 && plen == 1, "%s: nh 0 route: lookup gives %u /%u",
	      f->name, nh, plen);
	ret = pt_get(&t, f, 0, 1, &nh);
	CHECK(ret == 0 && nh == 0, "%s: nh 0 route: get %d nh %u", f->name, ret,
	      nh);
	check_small(&t, &r, 8);

	/* Early stop: emit's value comes back, and no call follows it. */
	for (i = 0; i < 16; i++)
		do_set(&t, &r, rnd_addr(f->bits), 2 + rnd_below(f->bits - 1),
		       (__u32)i + 1);
	ret = pt_walk(&t, f, 0, 0, DEF_NH, &o);
	CHECK(ret == 0 && o.n >= 4, "%s: walk /0: %d, %zu ranges", f->name, ret,
	      o.n);
	{
		size_t total = o.n, k;

		for (k = 1; k <= total; k++) {
			o.stop_at = k;
			o.stop_ret = k % 2 ? -(int)k : (int)k;
			ret = pt_walk(&t, f, 0, 0, DEF_NH, &o);
			CHECK(ret == o.stop_ret && o.n == k,
			      "%s: walk stopped at call %zu returns %d after %zu calls",
			      f->name, k, ret, o.n);
		}
		o.stop_at = 0;
	}
	check_small(&t, &r, 16);

	/* Deleting everything frees every node (white box). */
	while (r.n)
		do_del(&t, &r, r.v[r.n - 1].first, r.v[r.n - 1].plen);
	CHECK(t.nodes == 0 && ptree_count(&t) == 0,
	      "%s: %zu nodes after deleting everything", f->name, t.nodes);
	check_small(&t, &r, 4);

	/* fini, then the same struct again. */
	ptree_fini(&t);
	tree_init(&t, f);
	do_set(&t, &r, last_addr(f->bits), f->bits, 3);
	check_small(&t, &r, 4);
	ptree_fini(&t);
	ptree_fini(&t); /* a finished tree is empty: harmless */
	ref_free(&r);
	free(o.v);
}

/* Applies the steps (plen and nh per step), checking after each. */
static void default_case(const struct fam *f, const char *name,
			 const u128 *addr, const unsigned int *plen,
			 const int *nh, size_t n)
{
	struct ptree t;
	struct ref r;
	size_t i;

	cur_test = name;
	tree_init(&t, f);
	ref_init(&r, f, 16);
	for (i = 0; i < n; i++) {
		if (nh[i] < 0)
			do_del(&t, &r, addr[i], plen[i]);
		else
			do_set(&t, &r, addr[i], plen[i], nh[i]);
		check_small(&t, &r, 8);
	}
	ptree_fini(&t);
	ref_free(&r);
}

static void test_default(const struct fam *f)
{
	u128 ones = last_addr(f->bits), mid = (u128)1 << (f->bits - 1);
	unsigned int b = f->bits;

	/* /0 first, then specifics; deleted again in both orders. */
	{
		u128 a[] = { 0, ones, 0, mid, 0, ones, mid, 0 };
		unsigned int l[] = { 0, b, b, 1, 0, b, 1, b };
		int nh[] = { 5, 6, 7, 8, -1, -1, -1, -1 };

		default_case(f, "default-first", a, l, nh, 8);
	}
	/* /0 last, beside all-ones and all-zeros host routes. */
	{
		u128 a[] = { ones, 0, mid, 0, 0, 0, ones, 0 };
		unsigned int l[] = { b, b, b - 1, 0, 0, b, b, 0 };
		int nh[] = { 6, 7, 8, 5, 9, -1, -1, -1 };

		default_case(f, "default-last", a, l, nh, 8);
	}
	/* /0 while only the all-ones host route exists, with equal nh. */
	{
		u128 a[] = { ones, 0, ones, 0, ones, 0 };
		unsigned int l[] = { b, 0, b, 0, b, 0 };
		int nh[] = { 4, 4, 5, -1, -1, 3 };

		default_case(f, "default-all-ones", a, l, nh, 6);
	}
}

/* Host routes: neighbours, the ends of the space, siblings of /bits-1. */
static void test_host(const struct fam *f)
{
	struct ptree t;
	struct ref r;
	u128 ones = last_addr(f->bits), x = rnd_addr(f->bits) & ~(u128)3;
	u128 pts[] = { 0, 1, ones, ones - 1, x, x + 1, x + 2, x + 3 };
	size_t i;

	cur_test = "host";
	tree_init(&t, f);
	ref_init(&r, f, 32);
	for (i = 0; i < 8; i++) {
		do_set(&t, &r, pts[i], f->bits, 10 + (__u32)i % 3);
		check_small(&t, &r, 6);
	}
	do_set(&t, &r, x, f->bits - 1, 10);
	do_set(&t, &r, x, f->bits - 2, 11);
	do_set(&t, &r, ones, f->bits - 1, 12);
	check_small(&t, &r, 12);
	for (i = 0; i < 8; i++) {
		do_del(&t, &r, pts[i], f->bits);
		check_small(&t, &r, 6);
	}
	ptree_fini(&t);
	ref_free(&r);
}

/*
 * Every depth along one address: added shortest first, then deleted
 * longest first (and, second pass, shortest first: the covering prefix
 * goes before what it covers).
 */
static void test_depth(const struct fam *f)
{
	u128 bases[] = { last_addr(f->bits), 0, rnd_addr(f->bits),
			 last_addr(f->bits) / 3 /* 0101... */ };
	struct ptree t;
	struct ref r;
	size_t k;
	unsigned int d, from;

	cur_test = "depth";
	for (k = 0; k < sizeof(bases) / sizeof(bases[0]); k++) {
		u128 a = bases[k];
		bool reverse = k % 2 == 0;

		tree_init(&t, f);
		ref_init(&r, f, 200);
		from = k == 3 ? 0 : 1;
		for (d = from; d <= f->bits; d++) {
			/* Equal nexthops now and then: merges across depths. */
			do_set(&t, &r, a, d, d % 5 ? 100 + d : 100 + d - 1);
			check_small(&t, &r, 3);
			check_walk_naive(&t, &r, a, d, DEF_NH);
			if (d)
				check_walk_naive(&t, &r, a, d - 1, 0);
		}
		for (d = from; d <= f->bits; d++) {
			unsigned int l = reverse ? f->bits + from - d : d;

			do_del(&t, &r, a, l);
			check_small(&t, &r, 3);
			check_walk_naive(&t, &r, a, l, DEF_NH);
		}
		CHECK(t.nodes == 0, "%s: %zu nodes left", f->name, t.nodes);
		ptree_fini(&t);
		ref_free(&r);
	}
}

/* Hand-written expectations, independent of both references. */
struct exp_range {
	const char *first, *last;
	__u32 nh;
};

static void expect_walk(const struct ptree *t, const struct fam *f,
			const char *addr, unsigned int plen, __u32 def,
			const struct exp_range *e, size_t n)
{
	struct wout o = { 0 };
	size_t i;
	int ret;

	ret = pt_walk(t, f, A(f->bits, addr), plen, def, &o);
	CHECK(ret == 0 && o.n == n, "%s walk %s/%u: %d, %zu ranges, expected %zu",
	      f->name, addr, plen, ret, o.n, n);
	for (i = 0; i < n; i++)
		CHECK(o.v[i].first == A(f->bits, e[i].first) &&
			      o.v[i].last == A(f->bits, e[i].last) &&
			      o.v[i].nh == e[i].nh,
		      "%s walk %s/%u: range %zu is %s..%s nh %u, expected %s..%s nh %u",
		      f->name, addr, plen, i, FA(f->bits, o.v[i].first),
		      FA(f->bits, o.v[i].last), o.v[i].nh, e[i].first,
		      e[i].last, e[i].nh);
	free(o.v);
}

#define EXPECT(t, f, a, l, def, ...)                                        \
	do {                                                                \
		const struct exp_range e_[] = { __VA_ARGS__ };              \
		expect_walk((t), (f), (a), (l), (def), e_,                  \
			    sizeof(e_) / sizeof(e_[0]));                    \
	} while (0)

static void test_overlap4(void)
{
	const struct fam *f = &f4;
	struct ptree t;
	struct ref r;

	cur_test = "overlap";
	tree_init(&t, f);
	ref_init(&r, f, 16);
	do_set(&t, &r, A(f->bits, "10.1.2.0"), 24, 3);
	do_set(&t, &r, A(f->bits, "10.0.0.0"), 8, 1);
	do_set(&t, &r, A(f->bits, "10.1.0.0"), 16, 2);
	do_set(&t, &r, A(f->bits, "10.1.3.0"), 24, 2);   /* as its /16: merges */
	do_set(&t, &r, A(f->bits, "10.128.0.0"), 9, 1);  /* as its /8: merges */
	do_set(&t, &r, A(f->bits, "10.1.2.128"), 25, 4);
	check_small(&t, &r, 16);

	EXPECT(&t, f, "10.0.0.0", 8, 0,
	       { "10.0.0.0", "10.0.255.255", 1 },
	       { "10.1.0.0", "10.1.1.255", 2 },
	       { "10.1.2.0", "10.1.2.127", 3 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.255.255", 2 },
	       { "10.2.0.0", "10.255.255.255", 1 });
	EXPECT(&t, f, "0.0.0.0", 0, 9,
	       { "0.0.0.0", "9.255.255.255", 9 },
	       { "10.0.0.0", "10.0.255.255", 1 },
	       { "10.1.0.0", "10.1.1.255", 2 },
	       { "10.1.2.0", "10.1.2.127", 3 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.255.255", 2 },
	       { "10.2.0.0", "10.255.255.255", 1 },
	       { "11.0.0.0", "255.255.255.255", 9 });
	/* Inside a prefix with nothing below: one range, the container's. */
	EXPECT(&t, f, "10.1.2.64", 26, 0, { "10.1.2.64", "10.1.2.127", 3 });
	EXPECT(&t, f, "10.1.2.200", 32, 0, { "10.1.2.200", "10.1.2.200", 4 });
	EXPECT(&t, f, "10.1.2.0", 23, 0,
	       { "10.1.2.0", "10.1.2.127", 3 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.3.255", 2 });
	/* Spans around the glue of 10.128/9 and the /16: one nh. */
	EXPECT(&t, f, "10.128.0.0", 9, 0, { "10.128.0.0", "10.255.255.255", 1 });
	EXPECT(&t, f, "10.64.0.0", 10, 0, { "10.64.0.0", "10.127.255.255", 1 });
	EXPECT(&t, f, "12.0.0.0", 6, 9, { "12.0.0.0", "15.255.255.255", 9 });

	/* Deleting the covering prefixes. */
	do_del(&t, &r, A(f->bits, "10.0.0.0"), 8);
	check_small(&t, &r, 16);
	EXPECT(&t, f, "10.0.0.0", 8, 0,
	       { "10.0.0.0", "10.0.255.255", 0 },
	       { "10.1.0.0", "10.1.1.255", 2 },
	       { "10.1.2.0", "10.1.2.127", 3 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.255.255", 2 },
	       { "10.2.0.0", "10.127.255.255", 0 },
	       { "10.128.0.0", "10.255.255.255", 1 });
	do_del(&t, &r, A(f->bits, "10.1.0.0"), 16);
	check_small(&t, &r, 16);
	EXPECT(&t, f, "10.1.0.0", 16, 0,
	       { "10.1.0.0", "10.1.1.255", 0 },
	       { "10.1.2.0", "10.1.2.127", 3 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.3.255", 2 },
	       { "10.1.4.0", "10.1.255.255", 0 });
	do_del(&t, &r, A(f->bits, "10.1.2.0"), 24);
	check_small(&t, &r, 16);
	EXPECT(&t, f, "10.1.2.0", 23, 0,
	       { "10.1.2.0", "10.1.2.127", 0 },
	       { "10.1.2.128", "10.1.2.255", 4 },
	       { "10.1.3.0", "10.1.3.255", 2 });
	ptree_fini(&t);
	ref_free(&r);
}

static void test_overlap6(void)
{
	const struct fam *f = &f6;
	struct ptree t;
	struct ref r;

	cur_test = "overlap";
	tree_init(&t, f);
	ref_init(&r, f, 16);
	do_set(&t, &r, A(f->bits, "2001:db8::"), 32, 1);
	do_set(&t, &r, A(f->bits, "2001:db8:1::"), 48, 2);
	do_set(&t, &r, A(f->bits, "2001:db8:1::1"), 128, 3);
	do_set(&t, &r, A(f->bits, "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff"),
	       128, 4);
	do_set(&t, &r, A(f->bits, "::"), 0, 5);
	check_small(&t, &r, 16);
	EXPECT(&t, f, "2001:db8::", 32, 0,
	       { "2001:db8::", "2001:db8:0:ffff:ffff:ffff:ffff:ffff", 1 },
	       { "2001:db8:1::", "2001:db8:1::", 2 },
	       { "2001:db8:1::1", "2001:db8:1::1", 3 },
	       { "2001:db8:1::2", "2001:db8:1:ffff:ffff:ffff:ffff:ffff", 2 },
	       { "2001:db8:2::", "2001:db8:ffff:ffff:ffff:ffff:ffff:fffe", 1 },
	       { "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
		 "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 4 });
	EXPECT(&t, f, "2001:db8:1::1", 128, 0,
	       { "2001:db8:1::1", "2001:db8:1::1", 3 });
	EXPECT(&t, f, "2001:db8:1::", 127, 0,
	       { "2001:db8:1::", "2001:db8:1::", 2 },
	       { "2001:db8:1::1", "2001:db8:1::1", 3 });
	EXPECT(&t, f, "8000::", 1, 0,
	       { "8000::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 5 });
	do_del(&t, &r, A(f->bits, "::"), 0);
	do_del(&t, &r, A(f->bits, "2001:db8::"), 32);
	check_small(&t, &r, 16);
	EXPECT(&t, f, "2001:db8::", 32, 7,
	       { "2001:db8::", "2001:db8:0:ffff:ffff:ffff:ffff:ffff", 7 },
	       { "2001:db8:1::", "2001:db8:1::", 2 },
	       { "2001:db8:1::1", "2001:db8:1::1", 3 },
	       { "2001:db8:1::2", "2001:db8:1:ffff:ffff:ffff:ffff:ffff", 2 },
	       { "2001:db8:2::", "2001:db8:ffff:ffff:ffff:ffff:ffff:fffe", 7 },
	       { "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff",
		 "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 4 });
	ptree_fini(&t);
	ref_free(&r);
}

/* Absent prefixes, glue nodes, double deletes: -ENOENT, nothing changes. */
static void test_delete_absent(const struct fam *f)
{
	struct ptree t;
	struct ref r;
	u128 x = f->bits == 32 ? A(f->bits, "10.0.0.0") :
				 A(f->bits, "2001:db8::");
	unsigned int l = f->bits == 32 ? 24 : 64;
	u128 step = host_mask(f->bits, l) + 1;
	size_t mem;
	__u32 nh;
	int ret, i;

	cur_test = "delete-absent";
	tree_init(&t, f);
	ref_init(&r, f, 16);
	do_set(&t, &r, x, l, 1);
	do_set(&t, &r, x + step, l, 2); /* glue at l - 1 joins them */
	do_set(&t, &r, x + 4 * step, l + 2, 3);
	check_small(&t, &r, 8);
	mem = ptree_mem_bytes(&t);

	{
		u128 a[] = { x, x, x, x, x + step, x + 4 * step, 0, 0,
			     last_addr(f->bits) };
		unsigned int pl[] = { l - 1, l + 1, l - 3, f->bits, l + 1, l,
				      0, f->bits, f->bits };

		for (i = 0; i < 9; i++) {
			ret = pt_del(&t, f, a[i], pl[i]);
			CHECK(ret == -ENOENT, "%s del absent %s/%u returns %d",
			      f->name, FA(f->bits, a[i]), pl[i], ret);
			ret = pt_get(&t, f, a[i], pl[i], &nh);
			CHECK(ret == -ENOENT, "%s get absent %s/%u returns %d",
			      f->name, FA(f->bits, a[i]), pl[i], ret);
		}
	}
	check_small(&t, &r, 8);
	CHECK(ptree_mem_bytes(&t) == mem, "%s: memory changed", f->name);

	/* A route on the glue node, then off it again. */
	do_set(&t, &r, x, l - 1, 4);
	check_small(&t, &r, 8);
	do_del(&t, &r, x, l - 1);
	do_del(&t, &r, x, l - 1);
	check_small(&t, &r, 8);
	/* Deleting one side of a glue split removes the glue too. */
	do_del(&t, &r, x + step, l);
	check_small(&t, &r, 8);
	do_del(&t, &r, x + step, l);
	do_set(&t, &r, x + step, l, 5);
	check_small(&t, &r, 8);

	/* Churn reuses freed nodes: memory stays put. */
	mem = ptree_mem_bytes(&t);
	for (i = 0; i < 1000; i++) {
		do_set(&t, &r, x + 2 * step, l + 1 + i % 3, 6);
		do_set(&t, &r, x + 2 * step, l - 2, 7);
		do_del(&t, &r, x + 2 * step, l + 1 + i % 3);
		do_del(&t, &r, x + 2 * step, l - 2);
	}
	CHECK(ptree_mem_bytes(&t) == mem, "%s: churn grew memory %zu -> %zu",
	      f->name, mem, ptree_mem_bytes(&t));
	check_small(&t, &r, 8);
	ptree_fini(&t);
	ref_free(&r);
}

/* Replacing nexthops at every kind of length, nh 0 included. */
static void test_replace(const struct fam *f)
{
	struct ptree t;
	struct ref r;
	u128 x = f->bits == 32 ? A(f->bits, "192.168.0.0") :
				 A(f->bits, "2001:db8:5::");
	unsigned int ls4[] = { 0, 16, 24, 28, 32 }, ls6[] = { 0, 32, 48, 64, 128 };
	const unsigned int *ls = f->bits == 32 ? ls4 : ls6;
	__u32 nhs[] = { 1, 2, 0, 3, 2 };
	int i, k;

	cur_test = "replace";
	tree_init(&t, f);
	ref_init(&r, f, 16);
	for (i = 0; i < 5; i++)
		do_set(&t, &r, x, ls[i], 10 + i);
	check_small(&t, &r, 8);
	for (k = 0; k < 5; k++) {
		for (i = 0; i < 5; i++) {
			do_set(&t, &r, x, ls[(i + k) % 5], nhs[(i + 2 * k) % 5]);
			CHECK(ptree_count(&t) == 5, "%s: update changed the count",
			      f->name);
			check_small(&t, &r, 6);
		}
	}
	ptree_fini(&t);
	ref_free(&r);
}

/*
 * Small tables drawn from a few clusters, so prefixes nest, touch and
 * repeat all the time; everything is checked after every operation.
 */
static u128 cluster_addr(const struct fam *f)
{
	u128 base[4] = { 0, last_addr(f->bits), (u128)1 << (f->bits - 1),
			 last_addr(f->bits) / 3 };
	u128 a = base[rnd_below(4)];
	unsigned int sh = rnd_below(f->bits);

	/* Flip a few bits: near the top, near the bottom, or anywhere. */
	a ^= (u128)rnd_below(16) << (f->bits - 4);
	a ^= (u128)rnd_below(16);
	if (rnd_below(2))
		a ^= (u128)1 << sh;
	return a & last_addr(f->bits);
}

static unsigned int cluster_len(const struct fam *f)
{
	switch (rnd_below(4)) {
	case 0:
		return rnd_below(9);
	case 1:
		return f->bits - rnd_below(9);
	default:
		return rnd_below(f->bits + 1);
	}
}

/*
 * ptree_walk_span_plen over the whole space of small random trees (few
 * nexthops, so that neighbouring prefixes often share one): the ranges
 * follow each other from address 0 to the last; each range's value is
 * ptree_plen_value() of what a lookup of its first and of its last
 * address answers (nexthop and matched length, 0/0 uncovered); and two
 * neighbours never have the same value.
 */
static void test_walk_plen(const struct fam *f, unsigned int rounds)
{
	static const __u8 zero[16];
	struct ptree t;
	struct wout o = { 0 };
	unsigned int k, i, n, len;
	size_t j;

	cur_test = "walk-plen";
	for (k = 0; k < rounds; k++) {
		tree_init(&t, f);
		n = rnd_below(30);
		for (i = 0; i < n; i++) {
			unsigned int plen = rnd_below(f->bits + 1);

			CHECK(pt_set(&t, f, rnd_addr(f->bits) & ~host_mask(f->bits, plen),
				     plen, 1 + rnd_below(3)) >= 0, "set");
		}
		o.n = 0;
		CHECK(!ptree_walk_span_plen(&t, zero, 0, 0, collect, &o), "walk");
		for (j = 0; j < o.n; j++) {
			const struct wrange *w = &o.v[j];
			__u32 nh = pt_lookup(&t, f, w->first, &len, 0);

			CHECK(w->nh == ptree_plen_value(nh, nh ? len : 0),
			      "range %zu: value %#x, lookup of its first %u/%u", j,
			      w->nh, nh, len);
			nh = pt_lookup(&t, f, w->last, &len, 0);
			CHECK(w->nh == ptree_plen_value(nh, nh ? len : 0),
			      "range %zu: value %#x, lookup of its last %u/%u", j,
			      w->nh, nh, len);
			CHECK(j ? w->first == o.v[j - 1].last + 1 : w->first == 0,
			      "range %zu does not follow the one before", j);
			CHECK(!j || w->nh != o.v[j - 1].nh,
			      "ranges %zu and %zu have one value", j - 1, j);
		}
		CHECK(o.n && o.v[o.n - 1].last == last_addr(f->bits),
		      "the walk does not end at the last address");
		ptree_fini(&t);
	}
	free(o.v);
}

static void test_fuzz_small(const struct fam *f, unsigned int rounds,
			    unsigned int ops)
{
	struct ptree t;
	struct ref r;
	unsigned int k, i;

	cur_test = "fuzz-small";
	for (k = 0; k < rounds; k++) {
		unsigned int maxn = 4 + rnd_below(40);

		tree_init(&t, f);
		ref_init(&r, f, maxn + 1);
		for (i = 0; i < ops; i++) {
			unsigned int op = rnd_below(10);

			if (r.n && (op < 3 || r.n >= maxn)) {
				const struct rpfx *p = &r.v[rnd_below(r.n)];

				do_del(&t, &r, p->first, p->plen);
			} else if (r.n && op < 5) {
				const struct rpfx *p = &r.v[rnd_below(r.n)];

				do_set(&t, &r, p->first, p->plen, rnd_below(4));
			} else if (op < 6) {
				do_del(&t, &r, cluster_addr(f), cluster_len(f));
			} else {
				do_set(&t, &r, cluster_addr(f), cluster_len(f),
				       rnd_below(4));
			}
			check_small(&t, &r, 2);
		}
		ptree_fini(&t);
		ref_free(&r);
	}
}

/* ---- realistic tables ---------------------------------------------------- */

/*
 * A prefix as routing tables have them: mostly more-specifics inside or
 * neighbours of existing prefixes, spread % placed at random, the nexthop
 * often that of the relative (so ranges merge), mostly one of a few.
 */
static void gen_pfx(const struct fam *f, const struct ref *r,
		    unsigned int spread, u128 *a, unsigned int *len, __u32 *nh)
{
	*len = f->bits == 32 ? len_v4() : len_v6();
	*nh = rnd_nh(1, 64);
	if (rnd_below(200) == 0)
		*nh = 0;
	if (!r->n || rnd_below(100) < spread) {
		*a = f->bits == 32 ? addr_v4() : addr_v6();
	} else {
		const struct rpfx *q = &r->v[rnd_below(r->n)];
		bool inside;

		if (rnd_below(100) < 60)
			*nh = q->nh;
		inside = rnd_below(2);
		/* A /0 is never inside q and has no neighbour. */
		*a = *len ? pfx_near(f->bits, q->first, q->plen, *len, inside) :
			    0;
	}
	*a = pfx_first(f->bits, *a, *len);
}

/* Adds n new prefixes to the reference (only). */
static void gen_table(const struct fam *f, struct ref *r, size_t n,
		      unsigned int spread)
{
	size_t target = r->n + n, tries = 0;

	while (r->n < target) {
		unsigned int len;
		__u32 nh;
		u128 a;

		CHECK(++tries < 50 * n + 100, "test bug: generator stuck");
		gen_pfx(f, r, spread, &a, &len, &nh);
		if (!ref_get(r, a, len))
			ref_set(r, a, len, nh);
	}
}

static void print_mix(const struct ref *r)
{
	size_t cnt[129] = { 0 }, i;

	for (i = 0; i < r->n; i++)
		cnt[r->v[i].plen]++;
	print_len_mix(r->f->name, cnt, r->f->bits, r->n, 200);
}

/* Touched prefixes of a round: their spans are what an update rewrites. */
struct touched {
	u128 *a;
	__u8 *plen;
	size_t n;
};

static void check_big(const struct ptree *t, const struct ref *r,
		      const struct touched *tc, size_t nrandom, bool all)
{
	const struct fam *f = r->f;
	struct wout o = { 0 };
	struct granges g;
	size_t i;
	__u32 nh;
	int ret;

	check_counts(t, r);
	/* Every prefix by exact match and at its edges, or a sample. */
	for (i = 0; i < (all ? r->n : nrandom); i++) {
		const struct rpfx *p = &r->v[all ? i : rnd_below(r->n)];

		ret = pt_get(t, f, p->first, p->plen, &nh);
		CHECK(ret == 0 && nh == p->nh,
		      "%s get %s/%u: %d nh %u, expected nh %u", f->name,
		      FA(f->bits, p->first), p->plen, ret, nh, p->nh);
		check_bounds(t, r, p->first, p->plen, DEF_NH);
	}
	for (i = 0; i < nrandom; i++)
		check_lookup(t, r,
			     f->bits == 32 || rnd_below(2) ? rnd_addr(f->bits) :
							     addr_v6(),
			     DEF_NH);
	check_lookup(t, r, 0, DEF_NH);
	check_lookup(t, r, last_addr(f->bits), DEF_NH);

	granges_build(r, &g);
	check_walk_ranges(t, f, &g, 0, 0, &o);
	for (i = 0; tc && i < tc->n; i++) {
		check_walk_ranges(t, f, &g, tc->a[i], tc->plen[i], &o);
		check_bounds(t, r, pfx_first(f->bits, tc->a[i], tc->plen[i]),
			     tc->plen[i], DEF_NH);
	}
	/*
	 * Spans of prefixes and of random places, mostly at table-like
	 * lengths: a short span holds a good part of the table, and a few
	 * of those are enough.
	 */
	for (i = 0; i < nrandom / 10; i++) {
		const struct rpfx *p = &r->v[rnd_below(r->n)];
		bool wide = rnd_below(32) == 0;
		unsigned int plen;

		plen = wide ? rnd_below(p->plen + 1) : p->plen;
		check_walk_ranges(t, f, &g, p->first, plen, &o);
		plen = f->bits == 32 ? len_v4() : len_v6();
		if (wide)
			plen = rnd_below(f->bits + 1);
		check_walk_ranges(t, f, &g,
				  f->bits == 32 ? addr_v4() : addr_v6(), plen,
				  &o);
	}
	granges_free(&g);
	free(o.v);
}

static void test_random(const struct fam *f, size_t n, unsigned int rounds)
{
	struct ptree t, t2;
	struct touched tc;
	struct ref r;
	struct wout o = { 0 }, o2 = { 0 };
	size_t i, k, per_round = n / 10;
	double t0 = now();

	cur_test = "random";
	ref_init(&r, f, n + per_round * rounds + 16);
	gen_table(f, &r, n, 20);
	print_mix(&r);
	tree_init(&t, f);
	for (i = 0; i < r.n; i++) {
		int ret = pt_set(&t, f, r.v[i].first, r.v[i].plen, r.v[i].nh);

		CHECK(ret == 1, "%s: load of prefix %zu returns %d", f->name, i,
		      ret);
	}
	check_big(&t, &r, NULL, 20000, true);
	printf("    %s: %zu prefixes, %zu nodes, %.1f bytes/prefix, loaded and checked in %.2fs\n",
	       f->name, r.n, t.nodes, (double)ptree_mem_bytes(&t) / r.n,
	       now() - t0);

	/* Reverse insertion order: the same walk (and the same shape). */
	cur_test = "random-order";
	tree_init(&t2, f);
	for (i = r.n; i-- > 0;)
		pt_set(&t2, f, r.v[i].first, r.v[i].plen, r.v[i].nh);
	CHECK(t2.nodes == t.nodes, "%s: %zu nodes forwards, %zu backwards",
	      f->name, t.nodes, t2.nodes);
	pt_walk(&t, f, 0, 0, DEF_NH, &o);
	pt_walk(&t2, f, 0, 0, DEF_NH, &o2);
	CHECK(o.n == o2.n, "%s: reverse insertion gives %zu ranges, not %zu",
	      f->name, o2.n, o.n);
	for (i = 0; i < o.n; i++)
		CHECK(o.v[i].first == o2.v[i].first &&
			      o.v[i].last == o2.v[i].last &&
			      o.v[i].nh == o2.v[i].nh,
		      "%s: reverse insertion: range %zu differs", f->name, i);
	ptree_fini(&t2);
	free(o2.v);
	free(o.v);

	cur_test = "random-ops";
	tc.a = xmalloc(per_round * sizeof(*tc.a));
	tc.plen = xmalloc(per_round * sizeof(*tc.plen));
	for (k = 0; k < rounds; k++) {
		size_t ins = 0, upd = 0, del = 0, miss = 0;

		t0 = now();
		tc.n = 0;
		for (i = 0; i < per_round; i++) {
			unsigned int op = rnd_below(100), len;
			__u32 nh;
			u128 a;

			if (op < 40) {
				gen_pfx(f, &r, 20, &a, &len, &nh);
				ins += ref_get(&r, a, len) == NULL;
				do_set(&t, &r, a, len, nh);
			} else if (op < 65) {
				const struct rpfx *p = &r.v[rnd_below(r.n)];

				a = p->first;
				len = p->plen;
				do_set(&t, &r, a, len, 1 + rnd_below(8));
				upd++;
			} else if (op < 95) {
				const struct rpfx *p = &r.v[rnd_below(r.n)];

				a = p->first;
				len = p->plen;
				do_del(&t, &r, a, len);
				del++;
			} else {
				/* Mostly absent: a neighbour length. */
				const struct rpfx *p = &r.v[rnd_below(r.n)];

				a = p->first;
				len = p->plen < f->bits ? p->plen + 1 :
							  p->plen - 1;
				miss += ref_get(&r, a, len) == NULL;
				do_del(&t, &r, a, len);
			}
			tc.a[tc.n] = a;
			tc.plen[tc.n++] = len;
		}
		check_big(&t, &r, &tc, 5000, false);
		printf("    %s round %zu: +%zu ~%zu -%zu (%zu absent) -> %zu prefixes, checked in %.2fs\n",
		       f->name, k, ins, upd, del, miss, r.n, now() - t0);
	}
	free(tc.a);
	free(tc.plen);
	ptree_fini(&t);
	ref_free(&r);
}

/* ---- timings (informational) --------------------------------------------- */

static int count_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh)
{
	(*(size_t *)ctx)++;
	return 0;
}

static void bench(const struct fam *f, size_t n, size_t nsample)
{
	struct ptree t;
	struct ref r;
	size_t i, ranges = 0, calls = 0, *pick = xmalloc(nsample * sizeof(*pick));
	__u8 b[16];
	__u32 sum = 0;
	double t_start = now(), t0, t_load, t_full, t_spans, t_lookup, t_del;

	cur_test = "bench";
	ref_init(&r, f, n);
	gen_table(f, &r, n, 30);
	tree_init(&t, f);

	t0 = now();
	for (i = 0; i < n; i++) {
		to_bytes(f->bits, r.v[i].first, b);
		if (ptree_set(&t, b, r.v[i].plen, r.v[i].nh) != 1)
			fail("%s: bench load failed at %zu", f->name, i);
	}
	t_load = now() - t0;

	t0 = now();
	to_bytes(f->bits, 0, b);
	ptree_walk_span(&t, b, 0, 0, count_emit, &ranges);
	t_full = now() - t0;

	/*
	 * The walk an update of one prefix does, for a random sample of the
	 * prefixes (the generator puts the covering ones first).
	 */
	for (i = 0; i < nsample; i++)
		pick[i] = rnd_below(n);
	t0 = now();
	for (i = 0; i < nsample; i++) {
		const struct rpfx *p = &r.v[pick[i]];

		to_bytes(f->bits, p->first, b);
		ptree_walk_span(&t, b, p->plen, 0, count_emit, &calls);
	}
	t_spans = now() - t0;

	t0 = now();
	for (i = 0; i < nsample; i++) {
		to_bytes(f->bits, f->bits == 32 ? addr_v4() : addr_v6(), b);
		sum += ptree_lookup(&t, b, NULL, 0);
	}
	t_lookup = now() - t0;

	printf("    %s %zu prefixes: load %.3fs (%.0f ns/insert), %zu nodes, %zu bytes (%.1f bytes/prefix)\n",
	       f->name, n, t_load, t_load * 1e9 / n, t.nodes,
	       ptree_mem_bytes(&t), (double)ptree_mem_bytes(&t) / n);
	printf("    %s walk /0: %zu ranges in %.3fs; walk of a prefix's span: %.0f ns, %.2f ranges (%zu prefixes); lookup %.0f ns (%u)\n",
	       f->name, ranges, t_full, t_spans * 1e9 / nsample,
	       (double)calls / nsample, nsample, t_lookup * 1e9 / nsample,
	       sum & 1);

	t0 = now();
	for (i = 0; i < n; i++) {
		to_bytes(f->bits, r.v[i].first, b);
		if (ptree_del(&t, b, r.v[i].plen))
			fail("%s: bench delete failed at %zu", f->name, i);
	}
	t_del = now() - t0;
	CHECK(t.nodes == 0, "%s: %zu nodes after deleting all", f->name,
	      t.nodes);
	printf("    %s delete all: %.3fs (%.0f ns/delete); bench %.1fs\n",
	       f->name, t_del, t_del * 1e9 / n, now() - t_start);
	ptree_fini(&t);
	ref_free(&r);
	free(pick);
}

int main(int argc, char **argv)
{
	const struct fam *fams[2] = { &f4, &f6 };
	bool bench_only = false;
	double t0 = now();
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--bench"))
			bench_only = true;
		else
			seed = strtoull(argv[i], NULL, 0);
	}
	testlib_start(argv[0], NULL);

	if (!bench_only) {
		for (i = 0; i < 2; i++) {
			const struct fam *f = fams[i];

			test_api(f);
			test_default(f);
			test_host(f);
			test_depth(f);
			test_delete_absent(f);
			test_replace(f);
			printf("  %s: small cases ok (%.1fs)\n", f->name,
			       now() - t0);
		}
		test_overlap4();
		test_overlap6();
		printf("  overlap cases ok (%.1fs)\n", now() - t0);
		for (i = 0; i < 2; i++) {
			test_walk_plen(fams[i], 300);
			test_fuzz_small(fams[i], 60, 80);
			printf("  %s: small random tables ok (%.1fs)\n",
			       fams[i]->name, now() - t0);
		}
		test_random(&f4, 200000, 3);
		test_random(&f6, 100000, 3);
		printf("  random tables ok\n");
	}
	/* Under the sanitizers, the walks and lookups only on a sample. */
	bench(&f4, 1000000, bench_only ? 1000000 : 100000);
	bench(&f6, 250000, bench_only ? 250000 : 25000);

	printf("test_ptree: ok: %llu operations, %llu lookups, %llu walks, %.1fs\n",
	       n_ops, n_lookups, n_walks, now() - t0);
	return 0;
}
