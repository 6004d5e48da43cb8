// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of poptrie6: the builder (ctl/xfibd/fib/poptrie6.c) together with
 * the lookup the dataplane runs (include/xfib/lookup_poptrie6.h).
 *
 * Prefix sets are compiled into ranges by the tests' own compiler
 * (tests/unit/ref/ranges.c), built into a slot, and looked up. The lookup
 * reads the tables through the slot bit of each index, as the BPF
 * program does, and every read must fall inside what the build of that
 * slot wrote: a read past it fails the test.
 *
 * Checks: popcount64 against the compiler's builtin;
 *  - the naive longest match (a scan of the prefixes) on random
 *    addresses, inside the prefixes and anywhere, and on the first and
 *    last address of every prefix and the ones just outside it, for small
 *    random tables;
 *  - cases: no route; /0 alone; ::/128 and the last address; every depth
 *    0..128 nested at one address, each boundary; 256 neighbouring /128s
 *    (the last level); a node whose 64 positions are all children; chains
 *    of one-child nodes (skip nodes): a lone /128, under a default route,
 *    beside a /128 that differs in the last bit, under prefixes every 16
 *    bits along its path, beside a /128 that leaves the path midway;
 *  - a generated Internet-shaped table and a clustered one (many /48s and
 *    /64s under a few /32s, some /128s, a default route), 250k prefixes
 *    each: every range's first and last address and random ones against
 *    the reference ranges; bytes per prefix printed and held to 100;
 *  - batches of changes built alternately into both slots, as the daemon
 *    does: each answers correctly, matches a fresh build into zeroed
 *    tables entry for entry, and leaves the other slot as it was;
 *  - updates in place (poptrie6_update.c): random batches of deletions,
 *    next hop replacements and additions (now and then a short prefix
 *    across many direct entries), handed over as the daemon does (each
 *    changed prefix's span with its current answers), for small nested
 *    tables (naive match too), Internet-shaped and clustered ones: after
 *    each batch the slot answers every range boundary and random
 *    addresses as the reference and as a fresh build; every node and leaf
 *    is free, reachable or retired, once; the direct table as it was at
 *    the last reclaim still answers as then over the tables as they are
 *    now (retired space is not reused before pt6_reclaim, also across two
 *    batches); a slot without room fails a batch with -ENOSPC, answering
 *    each address as before or after meanwhile, and a build into the
 *    other slot takes the batch; time per batch in place against a full
 *    build at 250k prefixes (printed);
 *  - errors: nodes or leaves beyond the capacity (-ENOSPC), a nexthop
 *    with the leaf bit (-ERANGE), unsorted or not from 0 (-EINVAL).
 *
 * Usage: unit_test_poptrie6 [seed] (printed first: it replays the tables).
 */
#include <errno.h>

#define TESTLIB_SEED 0x9097d1e6000d0001ull
#include "testlib.h"
#include "ranges.h"
#include "fib/poptrie6.h"

/* One table, both slots; reads must stay below what a build wrote. */
struct tbl {
	void *p[2];
	size_t esz, cap, used[2];
	unsigned int shift; /* slot bit position in an index */
};

static unsigned long long n_lookups;

static const void *tbl_at(const struct tbl *t, __u32 i)
{
	unsigned int s = (i >> t->shift) & 1;
	size_t off = i & ((1u << t->shift) - 1);

	CHECK(i >> t->shift <= 1, "index %#x beyond both slots", i);
	CHECK(off < t->used[s], "read of entry %zu of slot %u past the %zu built",
	      off, s, t->used[s]);
	return (const char *)t->p[s] + off * t->esz;
}

static __u32 u32_at(const struct tbl *t, __u32 i)
{
	return *(const __u32 *)tbl_at(t, i);
}

#define XFIB_U32_AT(t, i) u32_at((t), (i))
#define XFIB_TBL_AT(t, i) tbl_at((t), (i))
#include "xfib/lookup_poptrie6.h"

struct inst {
	struct tbl direct, nodes, leaves;
};

static void tbl_init(struct tbl *t, size_t esz, size_t cap, unsigned int shift)
{
	unsigned int s;

	memset(t, 0, sizeof(*t));
	t->esz = esz;
	t->cap = cap;
	t->shift = shift;
	for (s = 0; s < 2; s++) {
		t->p[s] = calloc(cap ? cap : 1, esz);
		CHECK(t->p[s], "out of memory");
	}
}

static void inst_init(struct inst *in, size_t nodes, size_t leaves)
{
	tbl_init(&in->direct, 4, XFIB_PT6_TOP, XFIB_PT6_TOP_BITS);
	tbl_init(&in->nodes, sizeof(struct xfib_pt6_node), nodes,
		 XFIB_PT6_NODE_BITS);
	tbl_init(&in->leaves, 4, leaves, XFIB_PT6_LEAF_BITS);
}

static void inst_fini(struct inst *in)
{
	unsigned int s;

	for (s = 0; s < 2; s++) {
		free(in->direct.p[s]);
		free(in->nodes.p[s]);
		free(in->leaves.p[s]);
	}
}

static int build(struct inst *in, unsigned int slot,
		 const struct xfib_bs6_range *r, size_t n, struct pt6_usage *u)
{
	struct pt6_slot s = {
		.direct = in->direct.p[slot],
		.nodes = in->nodes.p[slot], .node_cap = in->nodes.cap,
		.leaves = in->leaves.p[slot], .leaf_cap = in->leaves.cap,
	};
	struct pt6_usage tmp;
	int err;

	u = u ? u : &tmp;
	err = pt6_build(r, n, &s, u);
	if (err)
		return err;
	in->direct.used[slot] = XFIB_PT6_TOP;
	in->nodes.used[slot] = u->nodes;
	in->leaves.used[slot] = u->leaves;
	return 0;
}

static __u32 lookup(const struct inst *in, unsigned int slot, u128 a)
{
	n_lookups++;
	return xfib_pt6_lookup((void *)&in->direct, (void *)&in->nodes,
			       (void *)&in->leaves, slot, (__u64)(a >> 64),
			       (__u64)a);
}

/* A prefix set and its reference ranges. */
struct set {
	struct npfx *np;
	size_t n, cap;
	struct xfib_bs6_range *r;
	size_t nr;
};

static void set_add(struct set *s, u128 a, unsigned int len, __u32 nh)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->np = xrealloc(s->np, s->cap * sizeof(*s->np));
	}
	s->np[s->n].first = pfx_first(128, a, len);
	s->np[s->n].last = pfx_last(128, a, len);
	s->np[s->n].nh = nh;
	s->np[s->n].plen = len;
	s->n++;
}

static int np_cmp(const void *a, const void *b)
{
	const struct npfx *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->plen - y->plen;
}

/* Drops repeated prefixes, then compiles the reference ranges. */
static void set_compile(struct set *s)
{
	struct xfib_pfx *p = xmalloc(s->n * sizeof(*p));
	size_t i, k = 0;
	long nr;

	if (s->n)
		qsort(s->np, s->n, sizeof(*s->np), np_cmp);
	for (i = 0; i < s->n; i++)
		if (!k || np_cmp(&s->np[k - 1], &s->np[i]))
			s->np[k++] = s->np[i];
	s->n = k;
	for (i = 0; i < k; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		to_bytes(128, s->np[i].first, p[i].addr);
		p[i].plen = s->np[i].plen;
		p[i].nh = s->np[i].nh;
	}
	free(s->r);
	s->r = xmalloc((2 * k + 1) * sizeof(*s->r));
	nr = xfib_ranges6_build(p, k, NULL, 0, s->r, 2 * k + 1);
	CHECK(nr > 0, "reference compiler: %ld", nr);
	s->nr = nr;
	free(p);
}

static void set_free(struct set *s)
{
	free(s->np);
	free(s->r);
	memset(s, 0, sizeof(*s));
}

static u128 r_start(const struct set *s, size_t i)
{
	return (u128)s->r[i].hi << 64 | s->r[i].lo;
}

static __u32 ref_lpm(const struct set *s, u128 a)
{
	size_t lo = 0, hi = s->nr;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r_start(s, mid) <= a)
			lo = mid;
		else
			hi = mid;
	}
	return s->r[lo].nh;
}

static void expect(const struct inst *in, unsigned int slot,
		   const struct set *s, u128 a, bool naive)
{
	__u32 want = naive ? naive_lpm(s->np, s->n, a, XFIB_NH_IDX_NONE) :
			     ref_lpm(s, a);
	__u32 got = lookup(in, slot, a);

	CHECK(got == want, "%s: poptrie6 %u, reference %u", FA(128, a), got,
	      want);
}

/* Checks slot against s: boundaries of every prefix (naive) or every
 * range (reference), random addresses inside prefixes and anywhere. */
static void check_slot(const struct inst *in, unsigned int slot,
		       const struct set *s, bool naive, size_t randoms)
{
	size_t i;

	if (naive) {
		for (i = 0; i < s->n; i++) {
			expect(in, slot, s, s->np[i].first, true);
			expect(in, slot, s, s->np[i].last, true);
			expect(in, slot, s, s->np[i].first - 1, true);
			expect(in, slot, s, s->np[i].last + 1, true);
		}
	} else {
		for (i = 0; i < s->nr; i++) {
			expect(in, slot, s, r_start(s, i), false);
			expect(in, slot, s, r_start(s, i) - 1, false);
		}
	}
	for (i = 0; i < randoms; i++) {
		const struct npfx *p = s->n ? &s->np[rnd_below(s->n)] : NULL;

		expect(in, slot, s, rnd_addr(128), naive);
		if (p)
			expect(in, slot, s,
			       p->first | (rnd_addr(128) & (p->last - p->first)),
			       naive);
	}
	expect(in, slot, s, 0, naive);
	expect(in, slot, s, ~(u128)0, naive);
}

static void build_check(struct inst *in, unsigned int slot, struct set *s,
			bool naive, size_t randoms, struct pt6_usage *u)
{
	int err;

	set_compile(s);
	err = build(in, slot, s->r, s->nr, u);
	CHECK(!err, "build of %zu ranges: %d", s->nr, err);
	check_slot(in, slot, s, naive, randoms);
}

/* ---- generators ------------------------------------------------------ */

/* Internet-shaped: the realistic length mix, a quarter anywhere in
 * 2000::/3, the rest inside or beside a prefix drawn before. */
static void gen_internet(struct set *s, size_t n)
{
	while (s->n < n) {
		unsigned int len = len_v6();
		u128 a;

		if (!s->n || !rnd_below(4)) {
			a = addr_v6();
		} else {
			const struct npfx *q = &s->np[rnd_below(s->n)];

			a = len ? pfx_near(128, q->first, q->plen, len,
					  rnd_below(4) != 0) : 0;
		}
		set_add(s, a, len, rnd_nh(1, 200));
	}
}

/* Clustered: a default route, a few /32s, under them many /48s and /64s,
 * some /40-/56 aggregates and some /128s. */
static void gen_clustered(struct set *s, size_t n)
{
	u128 top[6];
	unsigned int i;

	for (i = 0; i < 6; i++) {
		top[i] = pfx_first(128, addr_v6(), 32);
		set_add(s, top[i], 32, rnd_nh(1, 50));
	}
	set_add(s, 0, 0, 1);
	while (s->n < n) {
		unsigned int r = rnd_below(100), len;

		len = r < 55 ? 48 : r < 85 ? 64 : r < 92 ? 128 :
		      40 + (unsigned int)rnd_below(17);
		set_add(s, top[rnd_below(6)] | (rnd_addr(128) & host_mask(128, 32)),
			len, rnd_nh(1, 200));
	}
}

/* Small tables whose prefixes nest and touch: a few bases, low bits
 * flipped from a random depth on. */
static void gen_small(struct set *s, size_t n)
{
	u128 base[4];
	unsigned int i;

	for (i = 0; i < 4; i++)
		base[i] = rnd_addr(128);
	while (s->n < n) {
		u128 a = base[rnd_below(4)] ^
			 (rnd_addr(128) >> rnd_below(128));
		unsigned int len = rnd_below(8) ? (unsigned int)rnd_below(129) :
						   (unsigned int)(120 + rnd_below(9));

		set_add(s, a, len, 1 + (__u32)rnd_below(20));
	}
}

/* ---- tests --------------------------------------------------------- */

static void test_popcount(void)
{
	unsigned int i;

	cur_test = "popcount64";
	for (i = 0; i < 100000; i++) {
		__u64 x = rnd() & (rnd_below(2) ? rnd() : ~0ull) >> rnd_below(64);

		CHECK(xfib_popcount64(x) == (__u32)__builtin_popcountll(x),
		      "popcount64(%#llx) = %u", (unsigned long long)x,
		      xfib_popcount64(x));
	}
	CHECK(xfib_popcount64(~0ull) == 64 && xfib_popcount64(0) == 0,
	      "popcount64 of the ends");
}

static void test_cases(struct inst *in)
{
	struct set s = { 0 };
	u128 a = A(128, "2001:db8:1234:5678:9abc:def0:1357:9bdf");
	unsigned int len, i;

	cur_test = "empty";
	build_check(in, 0, &s, true, 1000, NULL);
	CHECK(((__u32 *)in->direct.p[0])[0] == XFIB_PT6_LEAF,
	      "an empty table is direct leaves");
	set_free(&s);

	cur_test = "default";
	set_add(&s, 0, 0, 7);
	build_check(in, 1, &s, true, 1000, NULL);
	set_add(&s, 0, 128, 8);
	set_add(&s, ~(u128)0, 128, 9);
	build_check(in, 0, &s, true, 1000, NULL);
	set_free(&s);

	cur_test = "every depth";
	for (len = 0; len <= 128; len++)
		set_add(&s, a, len, 100 + len);
	build_check(in, 1, &s, true, 1000, NULL);
	set_free(&s);

	cur_test = "neighbouring /128s";
	for (i = 0; i < 256; i++)
		set_add(&s, (a & ~(u128)0xff) + i, 128, 1 + i % 7);
	set_add(&s, a, 120, 50);
	build_check(in, 0, &s, true, 100, NULL);
	for (i = 0; i < 256; i++)
		expect(in, 0, &s, (a & ~(u128)0xff) + i, true);
	set_free(&s);

	cur_test = "chains";
	set_add(&s, a, 128, 3);
	build_check(in, 0, &s, true, 1000, NULL);
	CHECK(in->nodes.used[0] == 3, "a lone /128: %zu nodes, not a skip node "
	      "of 60 bits, one of 48 and the last level", in->nodes.used[0]);
	set_add(&s, 0, 0, 4);
	build_check(in, 1, &s, true, 1000, NULL);
	set_add(&s, a ^ 1, 128, 5);
	build_check(in, 0, &s, true, 1000, NULL);
	for (len = 16; len < 128; len += 16)
		set_add(&s, a, len, 10 + len);
	build_check(in, 1, &s, true, 1000, NULL);
	set_add(&s, a ^ ((u128)1 << 70), 128, 6);
	build_check(in, 0, &s, true, 1000, NULL);
	set_free(&s);

	cur_test = "64 children";
	for (i = 0; i < 64; i++)
		set_add(&s, pfx_first(128, a, 18) | (u128)i << 104 | i, 128, 2 + i);
	build_check(in, 1, &s, true, 1000, NULL);
	set_free(&s);
}

static void test_random_small(struct inst *in)
{
	unsigned int t;

	cur_test = "random small tables";
	for (t = 0; t < 300; t++) {
		struct set s = { 0 };

		gen_small(&s, 1 + rnd_below(300));
		build_check(in, t & 1, &s, true, 300, NULL);
		set_free(&s);
	}
}

static void test_big(struct inst *in, const char *name,
		     void (*gen)(struct set *, size_t), size_t n)
{
	struct pt6_usage u;
	struct set s = { 0 };
	double t0, t1;
	int err;

	cur_test = name;
	while (s.n < n) {
		gen(&s, n);
		set_compile(&s); /* drops repeats: draw again */
	}
	t0 = now();
	err = build(in, 0, s.r, s.nr, &u);
	t1 = now();
	CHECK(!err, "build of %zu ranges: %d", s.nr, err);
	check_slot(in, 0, &s, false, 200000);
	printf("  %s: %zu prefixes, %zu ranges: %zu nodes, %zu leaves, "
	       "%.1f B/prefix, build %.0f ms\n", name, s.n, s.nr, u.nodes,
	       u.leaves, (double)pt6_bytes(&u) / s.n, (t1 - t0) * 1e3);
	CHECK(pt6_bytes(&u) <= 100 * s.n, "%.1f bytes per prefix",
	      (double)pt6_bytes(&u) / s.n);
	set_free(&s);
}

/* Copies of one slot's built part of every table. */
struct snap {
	void *p[3];
	size_t len[3];
};

static void snap_take(struct snap *sn, const struct inst *in, unsigned int s)
{
	const struct tbl *t[3] = { &in->direct, &in->nodes, &in->leaves };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		sn->len[i] = t[i]->used[s] * t[i]->esz;
		sn->p[i] = xmalloc(sn->len[i]);
		memcpy(sn->p[i], t[i]->p[s], sn->len[i]);
	}
}

static void snap_same(const struct snap *sn, const struct inst *in,
		      unsigned int s, const char *what)
{
	const struct tbl *t[3] = { &in->direct, &in->nodes, &in->leaves };
	unsigned int i;

	for (i = 0; i < 3; i++)
		CHECK(sn->len[i] == t[i]->used[s] * t[i]->esz &&
		      !memcmp(sn->p[i], t[i]->p[s], sn->len[i]),
		      "table %u of slot %u differs from %s", i, s, what);
}

static void snap_free(struct snap *sn)
{
	unsigned int i;

	for (i = 0; i < 3; i++)
		free(sn->p[i]);
}

/* Batches of deletions and additions, built alternately into the two
 * slots over what they held before. */
static void test_batches(struct inst *in, struct inst *fresh)
{
	struct set s = { 0 };
	unsigned int b;

	cur_test = "batches";
	gen_internet(&s, 20000);
	build_check(in, 0, &s, false, 1000, NULL);
	for (b = 1; b <= 12; b++) {
		unsigned int slot = b & 1, k, del = 1 + rnd_below(400);
		struct snap other, want;
		int err;

		for (k = 0; k < del && s.n > 1; k++) {
			size_t victim = rnd_below(s.n);

			s.np[victim] = s.np[--s.n];
		}
		gen_internet(&s, s.n + 1 + rnd_below(400));
		snap_take(&other, in, !slot);
		build_check(in, slot, &s, false, 5000, NULL);
		snap_same(&other, in, !slot, "before the other slot's build");
		memset(fresh->direct.p[slot], 0, XFIB_PT6_TOP * 4);
		memset(fresh->nodes.p[slot], 0, fresh->nodes.cap * fresh->nodes.esz);
		memset(fresh->leaves.p[slot], 0, fresh->leaves.cap * 4);
		err = build(fresh, slot, s.r, s.nr, NULL);
		CHECK(!err, "fresh build: %d", err);
		snap_take(&want, fresh, slot);
		snap_same(&want, in, slot, "a fresh build");
		snap_free(&other);
		snap_free(&want);
	}
	set_free(&s);
}

/* ---- updates in place (poptrie6_update.c) ----------------------------- */

struct span {
	u128 first, last;
};

/* A batch: the spans of the prefixes it changed. */
struct batch {
	struct span *v;
	size_t n, cap;
};

static void batch_mark(struct batch *b, const struct npfx *p)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->v = xrealloc(b->v, b->cap * sizeof(*b->v));
	}
	b->v[b->n++] = (struct span){ p->first, p->last };
}

/* Prefixes of /24 or longer beside or inside the ones there: each inside
 * one direct entry (ordinary route churn). */
static void gen_near(struct set *s, size_t n)
{
	while (s->n < n) {
		const struct npfx *q = &s->np[rnd_below(s->n)];
		unsigned int len = len_v6();

		len = len < 24 ? 48 : len;
		set_add(s, pfx_near(128, q->first, q->plen, len, rnd_below(2)),
			len, rnd_nh(1, 200));
	}
}

/* A random prefix to change: with ordinary, one of /18 or longer. */
static size_t pick(const struct set *s, bool ordinary)
{
	size_t i = rnd_below(s->n), tries = 0;

	while (ordinary && s->np[i].plen < XFIB_PT6_TOP_BITS && tries++ < 100)
		i = rnd_below(s->n);
	return i;
}

/*
 * Random deletions, next hop replacements and additions (gen's), then
 * compiled. Unless ordinary, now and then a short prefix too, whose span
 * crosses many direct entries; ordinary batches change only prefixes
 * inside one entry, additions from gen_near.
 */
static void batch_draw(struct set *s, struct batch *b, size_t size,
		       void (*gen)(struct set *, size_t), bool ordinary)
{
	size_t k, del = rnd_below(size + 1), rep = rnd_below(size / 2 + 1);
	size_t add = rnd_below(size + 1);

	if (ordinary) {
		del = rep = add = size / 3;
		add += size - 3 * del;
		gen = gen_near;
	}
	b->n = 0;
	for (k = 0; k < del && s->n > 1; k++) {
		size_t victim = pick(s, ordinary);

		batch_mark(b, &s->np[victim]);
		s->np[victim] = s->np[--s->n];
	}
	for (k = 0; k < rep && s->n; k++) {
		size_t i = pick(s, ordinary);

		s->np[i].nh = rnd_nh(1, 200);
		batch_mark(b, &s->np[i]);
	}
	k = s->n;
	gen(s, s->n + add);
	if (!ordinary && !rnd_below(3))
		set_add(s, rnd_addr(128), rnd_below(4) ? 4 + rnd_below(13) : 0,
			rnd_nh(1, 200));
	for (; k < s->n; k++)
		batch_mark(b, &s->np[k]);
	set_compile(s);
}

/* The changes the daemon hands over: each changed prefix's span with its
 * current answers, one span after the other. */
static struct pt6_change *batch_changes(const struct set *s,
					const struct batch *b, size_t *n)
{
	struct pt6_change *c = NULL;
	size_t i, j, cap = 0;

	*n = 0;
	for (i = 0; i < b->n; i++) {
		size_t lo = 0, hi = s->nr;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (r_start(s, mid) <= b->v[i].first)
				lo = mid;
			else
				hi = mid;
		}
		for (j = lo; j < s->nr && r_start(s, j) <= b->v[i].last; j++) {
			u128 f = r_start(s, j), l = j + 1 < s->nr ?
					r_start(s, j + 1) - 1 : ~(u128)0;

			if (*n == cap) {
				cap = cap ? 2 * cap : 64;
				c = xrealloc(c, cap * sizeof(*c));
			}
			c[(*n)++] = (struct pt6_change){
				f < b->v[i].first ? b->v[i].first : f,
				l > b->v[i].last ? b->v[i].last : l, s->r[j].nh,
			};
		}
	}
	return c;
}

static int st_build(struct inst *in, unsigned int slot, struct pt6_state *st,
		    const struct set *s, size_t node_cap)
{
	struct pt6_slot sl = {
		.direct = in->direct.p[slot],
		.nodes = in->nodes.p[slot], .node_cap = node_cap,
		.leaves = in->leaves.p[slot], .leaf_cap = in->leaves.cap,
	};
	int err = pt6_state_build(st, &sl, s->r, s->nr);

	in->direct.used[slot] = XFIB_PT6_TOP;
	in->nodes.used[slot] = st->node_top;
	in->leaves.used[slot] = st->leaf_top;
	return err;
}

static int st_update(struct inst *in, unsigned int slot, struct pt6_state *st,
		     const struct set *s, const struct batch *b)
{
	size_t n;
	struct pt6_change *c = batch_changes(s, b, &n);
	int err = pt6_update(st, c, n);

	free(c);
	in->nodes.used[slot] = st->node_top;
	in->leaves.used[slot] = st->leaf_top;
	return err;
}

/* Every entry is free, reachable or retired, and only one of them. */
static void st_count(const struct pt6_state *st)
{
	size_t caps[2] = { st->s.node_cap, st->s.leaf_cap };
	size_t used[2] = { st->use.nodes, st->use.leaves }, i, ret;
	int t;

	for (t = 0; t < 2; t++) {
		for (i = 0, ret = 0; i < st->retired[t].n; i++)
			ret += st->retired[t].v[i].len;
		CHECK(pt6_free_entries(st, t) + used[t] + ret == caps[t],
		      "table %d: %zu free + %zu used + %zu retired != %zu", t,
		      pt6_free_entries(st, t), used[t], ret, caps[t]);
	}
}

/* The slot answers as the reference and as a fresh build of s does. */
static void same_as_fresh(const struct inst *in, struct inst *fresh,
			  unsigned int slot, const struct set *s)
{
	size_t i;
	int err = build(fresh, slot, s->r, s->nr, NULL);

	CHECK(!err, "fresh build: %d", err);
	for (i = 0; i < s->nr; i++) {
		u128 a = r_start(s, i);

		CHECK(lookup(in, slot, a) == lookup(fresh, slot, a) &&
		      lookup(in, slot, a - 1) == lookup(fresh, slot, a - 1),
		      "%s: differs from a fresh build", FA(128, a));
	}
	for (i = 0; i < 2000; i++) {
		u128 a = rnd_addr(128);

		CHECK(lookup(in, slot, a) == lookup(fresh, slot, a),
		      "%s: differs from a fresh build", FA(128, a));
	}
}

/* What a packet that read the direct table at the last reclaim sees:
 * that direct table over the nodes and leaves as they are now. */
struct then {
	__u32 *direct;
	struct set ref; /* its ranges only */
};

static void then_take(struct then *t, const struct inst *in,
		      unsigned int slot, const struct set *s)
{
	free(t->direct);
	free(t->ref.r);
	t->direct = xmalloc(XFIB_PT6_TOP * 4);
	memcpy(t->direct, in->direct.p[slot], XFIB_PT6_TOP * 4);
	t->ref.r = xmalloc(s->nr * sizeof(*s->r));
	memcpy(t->ref.r, s->r, s->nr * sizeof(*s->r));
	t->ref.nr = s->nr;
}

static void then_check(const struct then *t, const struct inst *in,
		       unsigned int slot)
{
	struct inst view = *in;

	view.direct.p[slot] = t->direct;
	check_slot(&view, slot, &t->ref, false, 2000);
}

/*
 * Batches applied in place into one slot: after each, the slot answers
 * as the reference (the naive match too for small tables) and as a fresh
 * build, every entry is free, used or retired, and the tables as they
 * were at the last reclaim still answer as then through the old direct
 * table: retired space is not written before pt6_reclaim. A reclaim
 * follows every other batch, so retired space waits across batches too.
 */
static void test_inplace(struct inst *in, struct inst *fresh, const char *name,
			 void (*gen)(struct set *, size_t), size_t n,
			 size_t size, unsigned int batches, bool naive)
{
	struct pt6_state st;
	struct then then = { 0 };
	struct batch b = { 0 };
	struct set s = { 0 };
	unsigned int k, slot = 1;
	int err;

	cur_test = name;
	gen(&s, n);
	set_compile(&s);
	err = st_build(in, slot, &st, &s, in->nodes.cap);
	CHECK(!err, "state build: %d", err);
	then_take(&then, in, slot, &s);
	for (k = 0; k < batches; k++) {
		batch_draw(&s, &b, size, gen, false);
		err = st_update(in, slot, &st, &s, &b);
		CHECK(!err, "batch %u: update: %d", k, err);
		check_slot(in, slot, &s, naive, 500);
		same_as_fresh(in, fresh, slot, &s);
		st_count(&st);
		then_check(&then, in, slot);
		if (k & 1) {
			pt6_reclaim(&st);
			CHECK(!pt6_has_retired(&st), "retired after reclaim");
			st_count(&st);
			then_take(&then, in, slot, &s);
		}
	}
	CHECK(st.entries_written, "no entry was rewritten");
	printf("  %s: %u batches of up to %zu changes: %llu entries rewritten, "
	       "%zu of %zu nodes free\n", name, batches, 2 * size + size / 2,
	       (unsigned long long)st.entries_written, pt6_free_entries(&st, 0),
	       st.s.node_cap);
	pt6_state_fini(&st);
	free(then.direct);
	free(then.ref.r);
	free(b.v);
	set_free(&s);
}

/*
 * No room: a slot built with a few spare nodes fails a batch that needs
 * more with -ENOSPC, answering meanwhile every address as before or as
 * after; a build into the other slot then holds the batch.
 */
static void test_inplace_full(struct inst *in)
{
	struct pt6_state st;
	struct batch b = { 0 };
	struct set s = { 0 };
	struct then then = { 0 };
	size_t i, spare = 16;
	int err;

	cur_test = "in place, no room";
	gen_internet(&s, 5000);
	set_compile(&s);
	err = st_build(in, 0, &st, &s, in->nodes.cap);
	CHECK(!err, "build: %d", err);
	spare += st.use.nodes;
	pt6_state_fini(&st);
	err = st_build(in, 0, &st, &s, spare);
	CHECK(!err, "build with %zu nodes: %d", spare, err);
	then_take(&then, in, 0, &s);
	b.n = 0;
	i = s.n;
	gen_internet(&s, s.n + 3000);
	for (; i < s.n; i++)
		batch_mark(&b, &s.np[i]);
	set_compile(&s);
	err = st_update(in, 0, &st, &s, &b);
	CHECK(err == -ENOSPC, "update beyond the free space: %d", err);
	st_count(&st);
	for (i = 0; i < s.nr + then.ref.nr; i++) {
		u128 a = i < s.nr ? r_start(&s, i) : r_start(&then.ref, i - s.nr);
		__u32 got = lookup(in, 0, a);

		CHECK(got == ref_lpm(&s, a) || got == ref_lpm(&then.ref, a),
		      "%s: %u is neither the old nor the new answer", FA(128, a),
		      got);
	}
	pt6_state_fini(&st);
	err = st_build(in, 1, &st, &s, in->nodes.cap);
	CHECK(!err, "rebuild into the other slot: %d", err);
	check_slot(in, 1, &s, false, 5000);
	pt6_state_fini(&st);
	free(then.direct);
	free(then.ref.r);
	free(b.v);
	set_free(&s);
}

/*
 * Time per batch in place against a full build, at scale (printed). A
 * batch without room (-ENOSPC: subtrees of clustered tables take runs of
 * tens of thousands of nodes, and the free space fragments) or one that
 * would rewrite most of the table (-E2BIG, nothing written) is followed
 * by a full build, as the daemon does; those are counted. A change of
 * the default route is -E2BIG.
 */
static void test_inplace_time(struct inst *in, const char *name,
			      void (*gen)(struct set *, size_t), size_t n)
{
	static const size_t sizes[] = { 1, 10, 100, 1000 };
	struct pt6_state st;
	struct batch b = { 0 };
	struct set s = { 0 };
	double t0, t1, tb;
	unsigned int k, j, full = 0;
	__u64 written = 0;
	int err;

	cur_test = name;
	while (s.n < n) {
		gen(&s, n);
		set_compile(&s);
	}
	t0 = now();
	err = st_build(in, 0, &st, &s, in->nodes.cap);
	tb = now() - t0;
	CHECK(!err, "build: %d", err);
	printf("  %s, %zu prefixes: full build %.1f ms; per batch of n changes:",
	       name, s.n, tb * 1e3);
	for (j = 0; j < sizeof(sizes) / sizeof(sizes[0]); j++) {
		double sum = 0;

		for (k = 0; k < 5; k++) {
			batch_draw(&s, &b, sizes[j], gen, true);
			t0 = now();
			err = st_update(in, 0, &st, &s, &b);
			t1 = now();
			CHECK(!err || err == -ENOSPC || err == -E2BIG,
			      "update: %d", err);
			CHECK(err != -E2BIG || (st.entries_written == written &&
						!pt6_has_retired(&st)),
			      "-E2BIG after writing");
			written = st.entries_written;
			pt6_reclaim(&st);
			sum += t1 - t0;
			if (!err)
				continue;
			full++;
			pt6_state_fini(&st);
			t0 = now();
			err = st_build(in, 0, &st, &s, in->nodes.cap);
			sum += now() - t0;
			CHECK(!err, "build after %s: %d", "-ENOSPC or -E2BIG", err);
			written = 0;
		}
		printf(" %zu: %.2f ms", sizes[j], sum / 5 * 1e3);
	}
	printf("; %u of them built again instead (time included)\n", full);
	/* A change of the default route spans every direct entry. */
	b.n = 0;
	set_add(&s, 0, 0, 201);
	batch_mark(&b, &s.np[s.n - 1]);
	set_compile(&s);
	err = st_update(in, 0, &st, &s, &b);
	CHECK(err == -E2BIG, "a batch across the whole table: %d", err);
	CHECK(st.entries_written == written, "-E2BIG after writing");
	pt6_state_fini(&st);
	err = st_build(in, 0, &st, &s, in->nodes.cap);
	CHECK(!err, "build: %d", err);
	check_slot(in, 0, &s, false, 100000);
	pt6_state_fini(&st);
	free(b.v);
	set_free(&s);
}

static void test_errors(void)
{
	struct xfib_bs6_range r[3] = { { 0 } };
	struct set s = { 0 };
	struct inst small;

	cur_test = "errors";
	gen_internet(&s, 2000);
	set_compile(&s);
	inst_init(&small, 10, 1 << 20);
	CHECK(build(&small, 0, s.r, s.nr, NULL) == -ENOSPC, "nodes beyond capacity");
	inst_fini(&small);
	inst_init(&small, 1 << 16, 100);
	CHECK(build(&small, 0, s.r, s.nr, NULL) == -ENOSPC, "leaves beyond capacity");
	r[1].hi = 1;
	r[2].hi = 2;
	CHECK(build(&small, 0, r, 3, NULL) == 0, "three ranges");
	r[2].nh = XFIB_PT6_LEAF | 1;
	CHECK(build(&small, 0, r, 3, NULL) == -ERANGE, "nexthop with the leaf bit");
	r[2].nh = 1;
	r[2].hi = 1;
	CHECK(build(&small, 0, r, 3, NULL) == -EINVAL, "unsorted ranges");
	CHECK(build(&small, 0, r + 1, 2, NULL) == -EINVAL, "not starting at 0");
	CHECK(build(&small, 0, r, 0, NULL) == -EINVAL, "no ranges");
	inst_fini(&small);
	set_free(&s);
}

int main(int argc, char **argv)
{
	struct inst in, fresh;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	inst_init(&in, XFIB_PT6_SLOT_NODES, XFIB_PT6_SLOT_LEAVES);
	inst_init(&fresh, XFIB_PT6_SLOT_NODES, XFIB_PT6_SLOT_LEAVES);
	test_popcount();
	test_cases(&in);
	test_random_small(&in);
	test_errors();
	test_batches(&in, &fresh);
	test_inplace(&in, &fresh, "in place, small", gen_small, 60, 8, 60, true);
	test_inplace(&in, &fresh, "in place, internet-shaped", gen_internet,
		     20000, 200, 16, false);
	test_inplace(&in, &fresh, "in place, clustered", gen_clustered, 20000,
		     200, 16, false);
	test_inplace_full(&in);
	test_inplace_time(&in, "in place, internet-shaped", gen_internet, 250000);
	test_inplace_time(&in, "in place, clustered", gen_clustered, 250000);
	test_big(&in, "internet-shaped", gen_internet, 250000);
	test_big(&in, "clustered", gen_clustered, 250000);
	inst_fini(&in);
	inst_fini(&fresh);
	printf("unit_test_poptrie6: ok (%llu lookups)\n", n_lookups);
	return 0;
}
