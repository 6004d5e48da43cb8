// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the range builder (tests/unit/ref/ranges.c) together with the lookup
 * the dataplane runs (include/xfib/lookup_bsearch.h), checked against
 * reference longest-prefix matchers that know nothing about ranges: a
 * linear scan over the prefix list for small tables, and one hash probe
 * per prefix length present for large ones (the two are cross-checked on
 * every small table).
 *
 * Every built table is checked on:
 *  - its shape: out[0].start is 0, starts strictly increase, no two
 *    neighbours share a nexthop, at most 2n + 1 ranges, IPv6 pad is 0;
 *  - both ends of every prefix, the addresses just outside them, the
 *    start of every range and the address before it, 0, the last address,
 *    and random addresses. The reference and the ranges are both piecewise
 *    constant and these points include every place where either changes,
 *    so agreement on them is agreement on the whole address space;
 *  - the real lookup over the padded table in one slot of a two-slot
 *    array (the other slot poisoned), as well as a plain binary search
 *    over the unpadded ranges;
 *  - cap: exactly n ranges fit, n - 1 give -ENOSPC without writing past
 *    the buffer (ASan watches), and the input is left untouched.
 *
 * Usage: unit_test_ranges [seed]. The seed is printed first; passing it
 * back rebuilds the same random tables.
 */
#include <errno.h>

#define TESTLIB_SEED 0x78f1b5eed2024ull
#include "testlib.h"
#include "ranges.h"

/*
 * In the dataplane XFIB_TBL_AT is a BPF array map lookup: a pointer to the
 * entry or NULL past max_entries. Here it is the same over a plain array
 * holding both slots. It yields void *, like bpf_map_lookup_elem(), so one
 * definition serves the bs4 and the bs6 lookups.
 */
struct tbl {
	void *base;
	size_t esz; /* entry size */
	size_t n;   /* entries: two slots, like the map's max_entries */
};

static void *tbl_at(void *t, __u32 idx)
{
	struct tbl *tb = t;

	if (idx >= tb->n)
		return NULL;
	return (char *)tb->base + (size_t)idx * tb->esz;
}

#define XFIB_TBL_AT(tbl, idx) tbl_at((tbl), (idx))
#include "xfib/lookup_bsearch.h"

#define MAIN 0
#define OVER 1
#define POISON_NH 0xdeadbeefu
/* Above this many prefixes the linear reference is too slow. */
#define NAIVE_MAX 4096

static unsigned long long n_lookups, n_tables;

/* ---- families ---------------------------------------------------------- */

struct fam {
	const char *name;
	unsigned int bits;
	size_t slot_size;
	unsigned int log2_max;
	size_t esz;
	struct tbl tbl; /* both slots, as the BPF map */
	unsigned int next_slot;
};

static struct fam f4 = {
	.name = "ipv4",
	.bits = 32,
	.slot_size = XFIB_BS4_SLOT_SIZE,
	.log2_max = XFIB_BS4_LOG2_MAX,
	.esz = sizeof(struct xfib_bs4_range),
};

static struct fam f6 = {
	.name = "ipv6",
	.bits = 128,
	.slot_size = XFIB_BS6_SLOT_SIZE,
	.log2_max = XFIB_BS6_LOG2_MAX,
	.esz = sizeof(struct xfib_bs6_range),
};

/* ---- prefix sets ------------------------------------------------------- */

struct pset {
	struct xfib_pfx *p[2];
	size_t n[2];
	size_t cap[2];
};

#define PSET_INIT { .n = { 0, 0 } }

static void ps_add(struct pset *ps, const struct fam *f, int list, u128 a,
		   unsigned int plen, __u32 nh)
{
	struct xfib_pfx *x;

	if (ps->n[list] == ps->cap[list]) {
		ps->cap[list] = ps->cap[list] ? 2 * ps->cap[list] : 64;
		ps->p[list] = xrealloc(ps->p[list],
				       ps->cap[list] * sizeof(*ps->p[list]));
	}
	x = &ps->p[list][ps->n[list]++];
	memset(x, 0, sizeof(*x));
	to_bytes(f->bits, a, x->addr);
	x->plen = plen;
	x->nh = nh;
}

/* Removes entry i of a list, keeping the order of the others. */
static void ps_del(struct pset *ps, int list, size_t i)
{
	memmove(&ps->p[list][i], &ps->p[list][i + 1],
		(ps->n[list] - i - 1) * sizeof(ps->p[list][0]));
	ps->n[list]--;
}

static void ps_free(struct pset *ps)
{
	free(ps->p[0]);
	free(ps->p[1]);
	memset(ps, 0, sizeof(*ps));
}

static void ps_copy(struct pset *dst, const struct pset *src)
{
	int l;

	memset(dst, 0, sizeof(*dst));
	for (l = 0; l < 2; l++) {
		dst->n[l] = dst->cap[l] = src->n[l];
		dst->p[l] = xmalloc(src->n[l] * sizeof(*src->p[l]));
		if (src->n[l])
			memcpy(dst->p[l], src->p[l],
			       src->n[l] * sizeof(*src->p[l]));
	}
}

static void ps_reverse(struct pset *ps)
{
	size_t i, n;
	int l;

	for (l = 0; l < 2; l++) {
		n = ps->n[l];
		for (i = 0; i < n / 2; i++) {
			struct xfib_pfx t = ps->p[l][i];

			ps->p[l][i] = ps->p[l][n - 1 - i];
			ps->p[l][n - 1 - i] = t;
		}
	}
}

static void ps_shuffle(struct pset *ps)
{
	size_t i, j;
	int l;

	for (l = 0; l < 2; l++) {
		for (i = ps->n[l]; i > 1; i--) {
			struct xfib_pfx t;

			j = rnd_below(i);
			t = ps->p[l][i - 1];
			ps->p[l][i - 1] = ps->p[l][j];
			ps->p[l][j] = t;
		}
	}
}

/* ---- reference LPM ----------------------------------------------------- */

struct hent {
	u128 key;
	__u32 nh;
	__u8 plen; /* + 1; 0 marks a free slot */
	__u8 list;
};

/*
 * (prefix, length, list) -> nexthop, open addressing. Most lookups of the
 * reference miss; a one-hash Bloom filter answers most of those from a
 * table small enough to stay in cache.
 */
struct pmap {
	struct hent *h;
	size_t mask;
	size_t n;
	uint64_t *bloom;
	size_t bmask; /* bits - 1 */
};

static size_t pm_hash(u128 key, unsigned int plen, int list)
{
	return pfx_hash(key, (uint64_t)plen << 1 | (uint64_t)list);
}

static void pm_init(struct pmap *m, size_t n)
{
	size_t sz = 16;

	while (sz < 2 * n)
		sz *= 2;
	m->h = calloc(sz, sizeof(*m->h));
	/* 8 filter bits per slot, 16 or more per entry: few false hits. */
	m->bloom = calloc(sz / 8, sizeof(*m->bloom));
	if (!m->h || !m->bloom) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	m->mask = sz - 1;
	m->bmask = sz * 8 - 1;
	m->n = 0;
}

static void pm_free(struct pmap *m)
{
	free(m->h);
	free(m->bloom);
}

/* The table uses the low bits of the hash, the filter higher ones. */
static size_t pm_bit(const struct pmap *m, size_t hash)
{
	return (hash >> 24) & m->bmask;
}

static struct hent *pm_find(const struct pmap *m, u128 key, unsigned int plen,
			    int list, size_t hash)
{
	size_t i = hash & m->mask;

	for (;; i = (i + 1) & m->mask) {
		struct hent *e = &m->h[i];

		if (!e->plen)
			return e;
		if (e->key == key && e->plen == plen + 1 && e->list == list)
			return e;
	}
}

/* Returns false if already present. */
static bool pm_put(struct pmap *m, u128 key, unsigned int plen, int list,
		   __u32 nh)
{
	size_t hash = pm_hash(key, plen, list), b = pm_bit(m, hash);
	struct hent *e;

	if (2 * (m->n + 1) > m->mask + 1) {
		fprintf(stderr, "pmap full\n");
		exit(2);
	}
	e = pm_find(m, key, plen, list, hash);
	if (e->plen)
		return false;
	m->bloom[b / 64] |= 1ull << (b % 64);
	e->key = key;
	e->plen = plen + 1;
	e->list = list;
	e->nh = nh;
	m->n++;
	return true;
}

/* The entry for (key, plen, list), or NULL. */
static const struct hent *pm_get(const struct pmap *m, u128 key,
				 unsigned int plen, int list)
{
	size_t hash = pm_hash(key, plen, list), b = pm_bit(m, hash);
	const struct hent *e;

	if (!(m->bloom[b / 64] >> (b % 64) & 1))
		return NULL;
	e = pm_find(m, key, plen, list, hash);
	return e->plen ? e : NULL;
}

struct ref {
	const struct fam *f;
	struct npfx *v; /* main list first, then the overrides */
	size_t n, nmain;
	struct pmap map;
	__u8 lens[2][129]; /* lengths present, longest first */
	unsigned int nlens[2];
};

static void ref_init(struct ref *r, const struct fam *f, const struct pset *ps)
{
	bool seen[2][129];
	size_t i, k = 0;
	int l, len;

	memset(seen, 0, sizeof(seen));
	r->f = f;
	r->n = ps->n[MAIN] + ps->n[OVER];
	r->nmain = ps->n[MAIN];
	r->v = xmalloc(r->n * sizeof(*r->v));
	pm_init(&r->map, r->n);
	for (l = 0; l < 2; l++) {
		for (i = 0; i < ps->n[l]; i++, k++) {
			const struct xfib_pfx *p = &ps->p[l][i];
			u128 a = from_bytes(f->bits, p->addr);

			r->v[k].first = pfx_first(f->bits, a, p->plen);
			r->v[k].last = pfx_last(f->bits, a, p->plen);
			r->v[k].nh = p->nh;
			r->v[k].plen = p->plen;
			if (!pm_put(&r->map, r->v[k].first, p->plen, l, p->nh))
				fail("test bug: duplicate prefix in one list");
			seen[l][p->plen] = true;
		}
		r->nlens[l] = 0;
		for (len = f->bits; len >= 0; len--)
			if (seen[l][len])
				r->lens[l][r->nlens[l]++] = len;
	}
}

static void ref_free(struct ref *r)
{
	free(r->v);
	pm_free(&r->map);
}

/* The definition itself: the longest override, else the longest main. */
static __u32 ref_naive(const struct ref *r, u128 a)
{
	return naive_lpm(r->v + r->nmain, r->n - r->nmain, a,
			 naive_lpm(r->v, r->nmain, a, XFIB_NH_IDX_NONE));
}

static __u32 ref_hash(const struct ref *r, u128 a)
{
	unsigned int i;
	int l;

	for (l = OVER; l >= MAIN; l--) {
		for (i = 0; i < r->nlens[l]; i++) {
			unsigned int len = r->lens[l][i];
			const struct hent *e;

			e = pm_get(&r->map, pfx_first(r->f->bits, a, len), len,
				   l);
			if (e)
				return e->nh;
		}
	}
	return XFIB_NH_IDX_NONE;
}

/* ---- building and checking -------------------------------------------- */

struct range {
	u128 start;
	__u32 nh;
};

static int do_build(const struct fam *f, const struct pset *ps, void *out,
		    size_t cap)
{
	if (f->bits == 32)
		return xfib_ranges4_build(ps->p[MAIN], ps->n[MAIN], ps->p[OVER],
					  ps->n[OVER], out, cap);
	return xfib_ranges6_build(ps->p[MAIN], ps->n[MAIN], ps->p[OVER],
				  ps->n[OVER], out, cap);
}

static void decode(const struct fam *f, const void *raw, size_t n,
		   struct range *r)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (f->bits == 32) {
			const struct xfib_bs4_range *x = raw;

			r[i].start = x[i].start;
			r[i].nh = x[i].nh;
		} else {
			const struct xfib_bs6_range *x = raw;

			CHECK(x[i].pad == 0, "%s range %zu: pad is %u", f->name,
			      i, x[i].pad);
			r[i].start = (u128)x[i].hi << 64 | x[i].lo;
			r[i].nh = x[i].nh;
		}
	}
}

/* Independent of lookup_bsearch.h: last range whose start <= a. */
static __u32 plain_search(const struct range *r, size_t n, u128 a)
{
	size_t lo = 0, hi = n; /* r[lo].start <= a < r[hi].start */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start <= a)
			lo = mid;
		else
			hi = mid;
	}
	return r[lo].nh;
}

static void *slot_base(struct fam *f, unsigned int slot)
{
	return (char *)f->tbl.base + (size_t)slot * f->slot_size * f->esz;
}

static void poison(struct fam *f, unsigned int slot, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++) {
		char *e = (char *)slot_base(f, slot) + i * f->esz;

		memset(e, 0xa5, f->esz);
		if (f->bits == 32)
			((struct xfib_bs4_range *)e)->nh = POISON_NH;
		else
			((struct xfib_bs6_range *)e)->nh = POISON_NH;
	}
}

static void fam_init(struct fam *f)
{
	f->tbl.esz = f->esz;
	f->tbl.n = 2 * f->slot_size;
	f->tbl.base = xmalloc(f->tbl.n * f->esz);
	poison(f, 0, 0, f->slot_size);
	poison(f, 1, 0, f->slot_size);
}

static void fam_fini(struct fam *f)
{
	free(f->tbl.base);
}

/* What the dataplane would answer for a, from the slot loaded in it. */
static __u32 real_lookup(struct fam *f, unsigned int slot, unsigned int log2n,
			 u128 a)
{
	if (f->bits == 32)
		return xfib_bs4_lookup(&f->tbl, slot, log2n, (__u32)a);
	return xfib_bs6_lookup(&f->tbl, slot, log2n, (__u64)(a >> 64),
			       (__u64)a);
}

struct checker {
	struct fam *f;
	const struct ref *ref;
	const struct range *r;
	size_t n;
	bool real; /* the table fits a slot: ask the real lookup too */
	unsigned int slot, log2n;
};

static void check_addr(const struct checker *c, u128 a)
{
	char buf[INET6_ADDRSTRLEN];
	__u32 exp, got;

	if (c->ref->n <= NAIVE_MAX) {
		exp = ref_naive(c->ref, a);
		got = ref_hash(c->ref, a);
		CHECK(exp == got,
		      "%s %s: test bug: references disagree (%u, %u)",
		      c->f->name, fmt_addr(c->f->bits, a, buf), exp, got);
	} else {
		exp = ref_hash(c->ref, a);
	}
	got = plain_search(c->r, c->n, a);
	CHECK(exp == got, "%s %s: ranges give nh %u, longest match is %u",
	      c->f->name, fmt_addr(c->f->bits, a, buf), got, exp);
	if (c->real) {
		got = real_lookup(c->f, c->slot, c->log2n, a);
		CHECK(exp == got,
		      "%s %s: lookup (slot %u, log2n %u) gives nh %u, longest match is %u",
		      c->f->name, fmt_addr(c->f->bits, a, buf), c->slot,
		      c->log2n, got, exp);
	}
	n_lookups++;
}

/* Where a run of addresses begins: a, and the last address before it. */
static void check_edge(const struct checker *c, u128 a)
{
	if (a > 0)
		check_addr(c, a - 1);
	check_addr(c, a);
}

static size_t nrandom_default = 200;

/*
 * Builds ps, checks the result as described at the top and returns the raw
 * ranges (caller frees) and their count in *np.
 */
static void *build_checked(struct fam *f, const struct pset *ps, size_t *np)
{
	size_t total = ps->n[MAIN] + ps->n[OVER], cap = 2 * total + 1;
	size_t nrandom = nrandom_default, i;
	struct pset before;
	struct checker c;
	struct range *r;
	struct ref ref;
	void *out, *tight;
	int ret, l;

	ps_copy(&before, ps);
	out = xmalloc(cap * f->esz);
	ret = do_build(f, ps, out, cap);
	*np = ret;
	CHECK(ret > 0, "%s: build of %zu prefixes failed: %d", f->name, total,
	      ret);
	CHECK((size_t)ret <= cap, "%s: %d ranges from %zu prefixes", f->name,
	      ret, total);
	for (l = 0; l < 2; l++)
		CHECK(!ps->n[l] || !memcmp(before.p[l], ps->p[l],
			      ps->n[l] * sizeof(*ps->p[l])),
		      "%s: build modified its input", f->name);
	ps_free(&before);

	/* Exactly n fit; n - 1 must not, and nothing past cap is written. */
	tight = xmalloc(*np * f->esz);
	CHECK(do_build(f, ps, tight, *np) == ret, "%s: cap == n fails",
	      f->name);
	CHECK(!memcmp(tight, out, *np * f->esz),
	      "%s: cap == n gives other ranges", f->name);
	free(tight);
	/* Sized to cap exactly, so ASan reports any write past it. */
	tight = xmalloc((*np - 1) * f->esz);
	ret = do_build(f, ps, tight, *np - 1);
	CHECK(ret == -ENOSPC, "%s: cap == n - 1 returns %d, not -ENOSPC",
	      f->name, ret);
	free(tight);
	if (total <= NAIVE_MAX) {
		ret = do_build(f, ps, NULL, 0);
		CHECK(ret == -ENOSPC, "%s: cap 0 returns %d", f->name, ret);
	}

	r = xmalloc(*np * sizeof(*r));
	decode(f, out, *np, r);
	CHECK(r[0].start == 0, "%s: first range starts at %s", f->name,
	      fmt_addr(f->bits, r[0].start, (char[INET6_ADDRSTRLEN]){ 0 }));
	for (i = 1; i < *np; i++) {
		CHECK(r[i].start > r[i - 1].start,
		      "%s: range %zu does not start after range %zu", f->name,
		      i, i - 1);
		CHECK(r[i].nh != r[i - 1].nh,
		      "%s: ranges %zu and %zu both have nh %u (not merged)",
		      f->name, i - 1, i, r[i].nh);
	}

	ref_init(&ref, f, ps);
	c = (struct checker){ .f = f, .ref = &ref, .r = r, .n = *np };
	if (*np <= f->slot_size) {
		void *s;

		c.real = true;
		c.slot = f->next_slot++ & 1;
		s = slot_base(f, c.slot);
		memcpy(s, out, *np * f->esz);
		c.log2n = f->bits == 32 ? xfib_ranges4_pad(s, *np) :
					  xfib_ranges6_pad(s, *np);
		CHECK(c.log2n <= f->log2_max &&
			      ((size_t)1 << c.log2n) >= *np &&
			      (!c.log2n || ((size_t)1 << (c.log2n - 1)) < *np),
		      "%s: pad of %zu returns log2n %u", f->name, *np,
		      c.log2n);
		for (i = *np; i < ((size_t)1 << c.log2n); i++)
			CHECK(!memcmp((char *)s + i * f->esz,
				      (char *)s + (*np - 1) * f->esz, f->esz),
			      "%s: padding entry %zu is not the last range",
			      f->name, i);
	}

	check_addr(&c, 0);
	check_addr(&c, last_addr(f->bits));
	for (i = 0; i < ref.n; i++) {
		check_edge(&c, ref.v[i].first);
		/* The last address, and one past it. */
		check_addr(&c, ref.v[i].last);
		if (ref.v[i].last < last_addr(f->bits))
			check_addr(&c, ref.v[i].last + 1);
	}
	for (i = 0; i < *np; i++)
		check_edge(&c, r[i].start);
	for (i = 0; i < nrandom; i++) {
		check_addr(&c, rnd_addr(f->bits));
		/* Uniform IPv6 addresses mostly miss: also aim inside. */
		if (ref.n) {
			const struct npfx *p = &ref.v[rnd_below(ref.n)];

			check_addr(&c, p->first | (rnd_addr(f->bits) &
						   (p->last - p->first)));
		}
	}

	if (c.real)
		poison(f, c.slot, 0, (size_t)1 << c.log2n);
	ref_free(&ref);
	free(r);
	n_tables++;
	return out;
}

static size_t check_set(struct fam *f, const struct pset *ps)
{
	size_t n;

	free(build_checked(f, ps, &n));
	return n;
}

/* Builds a and b and requires byte-identical ranges. */
static void check_same(struct fam *f, const struct pset *a,
		       const struct pset *b, const char *what)
{
	size_t na, nb;
	void *ra = build_checked(f, a, &na);
	void *rb = build_checked(f, b, &nb);

	CHECK(na == nb && !memcmp(ra, rb, na * f->esz),
	      "%s: %s gives other ranges (%zu vs %zu)", f->name, what, na, nb);
	free(ra);
	free(rb);
}

/* ---- the tests --------------------------------------------------------- */

static void test_empty(struct fam *f)
{
	struct pset ps = PSET_INIT;
	struct range r[2];
	__u64 raw[2 * 3]; /* two bs6 entries, aligned for either family */
	int ret;

	cur_test = "empty";
	ret = do_build(f, &ps, raw, 2);
	CHECK(ret == 1, "%s: empty set gives %d ranges", f->name, ret);
	decode(f, raw, 1, r);
	CHECK(r[0].start == 0 && r[0].nh == XFIB_NH_IDX_NONE,
	      "%s: empty set is not one no-route range", f->name);
	CHECK(check_set(f, &ps) == 1, "%s: empty", f->name);
}

/* /0 first, last, alone, and with the first and last host routes. */
static void test_default(struct fam *f)
{
	struct pset a = PSET_INIT, b = PSET_INIT;
	u128 ones = last_addr(f->bits);
	size_t n;

	cur_test = "default-route";
	ps_add(&a, f, MAIN, 0, 0, 7);
	CHECK(check_set(f, &a) == 1, "%s: /0 alone is not one range", f->name);

	/* Host bits of a /0 are every bit. */
	ps_free(&a);
	ps_add(&a, f, MAIN, ones, 0, 7);
	CHECK(check_set(f, &a) == 1, "%s: /0 with host bits", f->name);

	ps_free(&a);
	ps_add(&a, f, MAIN, 0, 0, 7);
	ps_add(&a, f, MAIN, ones, f->bits, 9);
	n = check_set(f, &a);
	CHECK(n == 2, "%s: /0 + all-ones host route gives %zu ranges",
	      f->name, n);
	ps_add(&b, f, MAIN, ones, f->bits, 9);
	ps_add(&b, f, MAIN, 0, 0, 7);
	check_same(f, &a, &b, "/0 added last");

	/* All-ones host route alone: the sweep ends exactly at the top. */
	ps_free(&b);
	ps_add(&b, f, MAIN, ones, f->bits, 9);
	CHECK(check_set(f, &b) == 2, "%s: all-ones alone", f->name);

	ps_add(&a, f, MAIN, 0, f->bits, 3);
	CHECK(check_set(f, &a) == 3, "%s: /0 + both host routes", f->name);
	ps_add(&a, f, MAIN, ones, 1, 4);
	ps_add(&a, f, MAIN, 0, 1, 5);
	CHECK(check_set(f, &a) == 4, "%s: both halves", f->name);

	/* /0 in the override list hides all of main. */
	ps_add(&a, f, OVER, 0, 0, 1);
	CHECK(check_set(f, &a) == 1, "%s: override /0", f->name);

	/* /0 with nh 0 is the same as no route. */
	ps_free(&a);
	ps_add(&a, f, MAIN, 0, 0, XFIB_NH_IDX_NONE);
	ps_add(&a, f, MAIN, ones, f->bits, XFIB_NH_IDX_NONE);
	CHECK(check_set(f, &a) == 1, "%s: nh-0 prefixes", f->name);

	ps_free(&a);
	ps_free(&b);
}

/* /1 .. /bits nested on one address, longest added last or first. */
static void test_depth(struct fam *f)
{
	u128 addrs[4] = { rnd_addr(f->bits), 0, last_addr(f->bits),
			  f->bits == 32 ? A(f->bits, "192.168.1.77") :
					  A(f->bits, "2001:db8:dead:beef::1") };
	unsigned int i, len;
	int list;

	cur_test = "depth";
	for (list = MAIN; list <= OVER; list++) {
		for (i = 0; i < 4; i++) {
			struct pset up = PSET_INIT, down = PSET_INIT;

			for (len = 0; len <= f->bits; len++) {
				/* Alternate nexthops so nothing merges away. */
				ps_add(&up, f, list, addrs[i], len,
				       100 + len % 2);
				check_set(f, &up);
			}
			for (len = f->bits + 1; len-- > 0;) {
				ps_add(&down, f, list, addrs[i], len,
				       100 + len % 2);
				check_set(f, &down);
			}
			check_same(f, &up, &down, "deepest first");

			/* Distinct nexthops: one range per level each side. */
			ps_free(&up);
			for (len = 1; len <= f->bits; len++)
				ps_add(&up, f, list, addrs[i], len, 1000 + len);
			check_set(f, &up);
			ps_free(&up);
			ps_free(&down);
		}
	}
}

static void expect_ranges(struct fam *f, const struct pset *ps,
			  const char *const *starts, const __u32 *nhs, size_t n)
{
	char b1[INET6_ADDRSTRLEN];
	size_t got, i;
	struct range *r;
	void *raw;

	raw = build_checked(f, ps, &got);
	CHECK(got == n, "%s: %zu ranges, expected %zu", f->name, got, n);
	r = xmalloc(n * sizeof(*r));
	decode(f, raw, n, r);
	for (i = 0; i < n; i++)
		CHECK(r[i].start == A(f->bits, starts[i]) && r[i].nh == nhs[i],
		      "%s: range %zu is %s nh %u, expected %s nh %u", f->name,
		      i, fmt_addr(f->bits, r[i].start, b1), r[i].nh, starts[i],
		      nhs[i]);
	free(r);
	free(raw);
}

/* Hand-computed results for nesting, merging, overrides and deletion. */
static void test_golden4(void)
{
	static const char *const s1[] = {
		"0.0.0.0", "10.0.0.0", "10.1.0.0", "10.1.2.0", "10.1.2.128",
		"10.1.3.0", "10.2.0.0", "12.0.0.0",
	};
	static const __u32 n1[] = { 0, 2, 3, 4, 2, 3, 2, 0 };
	static const char *const s2[] = {
		"0.0.0.0", "10.0.0.0", "10.1.0.0", "10.1.2.0", "10.1.2.128",
		"10.1.2.200", "10.1.2.201", "10.1.3.0", "10.2.0.0", "12.0.0.0",
		"127.0.0.0", "128.0.0.0",
	};
	static const __u32 n2[] = { 0, 2, 3, 4, 2, 1, 2, 3, 2, 0, 1, 0 };
	static const char *const s3[] = {
		"0.0.0.0", "10.0.0.0", "10.1.0.0", "10.2.0.0", "12.0.0.0",
	};
	static const __u32 n3[] = { 0, 2, 1, 2, 0 };
	static const char *const s4[] = {
		"0.0.0.0", "10.1.0.0", "10.1.2.0", "10.1.2.128", "10.1.3.0",
		"10.2.0.0", "10.3.0.0", "11.0.0.0", "12.0.0.0",
	};
	static const __u32 n4[] = { 0, 3, 4, 2, 3, 2, 0, 2, 0 };
	static const char *const s5[] = { "0.0.0.0", "10.1.2.0", "10.1.3.0" };
	static const __u32 n5[] = { 0, 4, 0 };
	struct fam *f = &f4;
	struct pset ps = PSET_INIT;
	size_t i;

	cur_test = "golden4";
	ps_add(&ps, f, MAIN, A(f->bits, "10.0.0.0"), 8, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.0.0"), 16, 3);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.0"), 24, 4);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.128"), 25, 2);
	/* Same nexthop as its parent: adds no range. */
	ps_add(&ps, f, MAIN, A(f->bits, "10.2.0.0"), 16, 2);
	/* Adjacent to 10/8 with the same nexthop: merges into it. */
	ps_add(&ps, f, MAIN, A(f->bits, "11.0.0.0"), 8, 2);
	expect_ranges(f, &ps, s1, n1, 8);

	/* Overrides beat longer main prefixes, even a /25 under a /32. */
	ps_add(&ps, f, OVER, A(f->bits, "10.1.2.200"), 32, 1);
	ps_add(&ps, f, OVER, A(f->bits, "127.0.0.0"), 8, 1);
	ps_add(&ps, f, OVER, A(f->bits, "127.0.0.1"), 32, 1);
	expect_ranges(f, &ps, s2, n2, 12);

	/* A short override covering long main prefixes hides them all. */
	ps_free(&ps);
	ps_add(&ps, f, MAIN, A(f->bits, "10.0.0.0"), 8, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.0.0"), 16, 3);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.0"), 24, 4);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.128"), 25, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.2.0.0"), 16, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "11.0.0.0"), 8, 2);
	ps_add(&ps, f, OVER, A(f->bits, "10.1.0.0"), 16, 1);
	expect_ranges(f, &ps, s3, n3, 5);

	/* Delete the covering 10/8 (and the override). */
	ps_free(&ps);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.0.0"), 16, 3);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.0"), 24, 4);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.128"), 25, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.2.0.0"), 16, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "11.0.0.0"), 8, 2);
	expect_ranges(f, &ps, s4, n4, 9);

	/* Then everything but the /24, given with host bits set. */
	ps_free(&ps);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.99"), 24, 4);
	expect_ranges(f, &ps, s5, n5, 3);

	/* Any order of the first set gives the same ranges. */
	ps_free(&ps);
	ps_add(&ps, f, MAIN, A(f->bits, "10.0.0.0"), 8, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.0.0"), 16, 3);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.0"), 24, 4);
	ps_add(&ps, f, MAIN, A(f->bits, "10.1.2.128"), 25, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "10.2.0.0"), 16, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "11.0.0.0"), 8, 2);
	for (i = 0; i < 20; i++) {
		ps_shuffle(&ps);
		expect_ranges(f, &ps, s1, n1, 8);
	}
	ps_free(&ps);
}

static void test_golden6(void)
{
	static const char *const s1[] = {
		"::", "2001:db8::", "2001:db8:1::", "2001:db8:1::1",
		"2001:db8:1::2", "2001:db8:2::", "2001:db9::", "fe80::",
		"fec0::", "ff00::",
	};
	static const __u32 n1[] = { 9, 2, 3, 1, 3, 2, 9, 1, 9, 1 };
	struct fam *f = &f6;
	struct pset ps = PSET_INIT;

	cur_test = "golden6";
	ps_add(&ps, f, MAIN, 0, 0, 9);
	ps_add(&ps, f, MAIN, A(f->bits, "2001:db8::"), 32, 2);
	ps_add(&ps, f, MAIN, A(f->bits, "2001:db8:1::"), 48, 3);
	ps_add(&ps, f, MAIN, A(f->bits, "2001:db8:1::1"), 128, 4);
	ps_add(&ps, f, OVER, A(f->bits, "2001:db8:1::1"), 128, 1);
	ps_add(&ps, f, OVER, A(f->bits, "fe80::"), 10, 1);
	ps_add(&ps, f, OVER, A(f->bits, "ff00::"), 8, 1);
	expect_ranges(f, &ps, s1, n1, 10);
	ps_free(&ps);
}

/* Random small overlapping sets in a narrow space: dense nesting. */
static void test_overlap(struct fam *f)
{
	unsigned int t, i;

	cur_test = "overlap";
	for (t = 0; t < 300; t++) {
		struct pset ps = PSET_INIT, rev;
		struct pmap seen;
		/* Everything inside one /(bits-10) so prefixes collide. */
		u128 base = rnd_addr(f->bits) &
			    ~host_mask(f->bits, f->bits - 10);
		unsigned int n = 1 + rnd_below(60);

		pm_init(&seen, n);
		for (i = 0; i < n; i++) {
			int list = rnd_below(5) ? MAIN : OVER;
			unsigned int len = f->bits - rnd_below(12);
			u128 a = base | (rnd_addr(f->bits) &
					 host_mask(f->bits, f->bits - 10));

			if (rnd_below(20) == 0)
				len = rnd_below(f->bits + 1);
			if (pm_put(&seen, pfx_first(f->bits, a, len), len, list,
				   0))
				ps_add(&ps, f, list, a, len, 2 + rnd_below(4));
		}
		pm_free(&seen);
		ps_copy(&rev, &ps);
		ps_reverse(&rev);
		check_same(f, &ps, &rev, "reverse order");
		ps_free(&ps);
		ps_free(&rev);
	}
}

/* Delete prefixes one at a time, covering ones first, and re-check. */
static void test_delete(struct fam *f)
{
	u128 centre[3] = { rnd_addr(f->bits), rnd_addr(f->bits),
			   rnd_addr(f->bits) };
	struct pset ps = PSET_INIT;
	struct pmap seen;
	unsigned int k;

	cur_test = "delete";
	pm_init(&seen, 400);
	for (k = 0; k < 200; k++) {
		/* Mostly on the chains of a few centres: deep nesting. */
		u128 a = centre[rnd_below(3)] ^
			 (rnd_addr(f->bits) &
			  host_mask(f->bits, rnd_below(f->bits + 1)));
		unsigned int len = rnd_below(f->bits + 1);
		int list = rnd_below(8) ? MAIN : OVER;

		if (pm_put(&seen, pfx_first(f->bits, a, len), len, list, 0))
			ps_add(&ps, f, list, a, len, 2 + rnd_below(3));
	}
	pm_free(&seen);
	while (ps.n[MAIN] + ps.n[OVER]) {
		int list = ps.n[MAIN] ? MAIN : OVER;
		size_t i, best = 0;

		/* The shortest: the one most likely to cover others. */
		for (i = 1; i < ps.n[list]; i++)
			if (ps.p[list][i].plen < ps.p[list][best].plen)
				best = i;
		ps_del(&ps, list, rnd_below(3) ? best : rnd_below(ps.n[list]));
		check_set(f, &ps);
	}
	ps_free(&ps);
}

static void test_einval(struct fam *f)
{
	struct pset ps = PSET_INIT;
	__u64 raw[8 * 3];
	int ret;

	cur_test = "einval";
	ps_add(&ps, f, MAIN, 0, f->bits + 1, 2);
	ret = do_build(f, &ps, raw, 8);
	CHECK(ret == -EINVAL, "%s: plen %u gives %d", f->name, f->bits + 1,
	      ret);
	ps_free(&ps);
	ps_add(&ps, f, MAIN, 0, 0, 2);
	ps_add(&ps, f, OVER, 0, 255, 2);
	ret = do_build(f, &ps, raw, 8);
	CHECK(ret == -EINVAL, "%s: override plen 255 gives %d", f->name, ret);
	ps_free(&ps);

	/* The same prefix twice in one list, once with host bits set. */
	ps_add(&ps, f, MAIN,
	       A(f->bits, f->bits == 32 ? "10.0.0.0" : "2001:db8::"),
	       f->bits / 4, 2);
	ps_add(&ps, f, MAIN,
	       A(f->bits, f->bits == 32 ? "10.0.0.1" : "2001:db8::1"),
	       f->bits / 4, 3);
	ret = do_build(f, &ps, raw, 8);
	CHECK(ret == -EINVAL, "%s: duplicate in main gives %d", f->name, ret);
	ps_free(&ps);
	/* ... but once in each list is fine. */
	ps_add(&ps, f, MAIN,
	       A(f->bits, f->bits == 32 ? "10.0.0.0" : "2001:db8::"),
	       f->bits / 4, 2);
	ps_add(&ps, f, OVER,
	       A(f->bits, f->bits == 32 ? "10.0.0.0" : "2001:db8::"),
	       f->bits / 4, 3);
	CHECK(check_set(f, &ps) == 3, "%s: same prefix in both lists", f->name);
	ps_free(&ps);
}

static void test_pad(struct fam *f)
{
	static const size_t ns[] = { 1, 2, 3, 4, 5, 7, 8, 9, 1000 };
	unsigned int i, exp;
	size_t j, n;

	cur_test = "pad";
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		char *r;

		n = ns[i];
		for (exp = 0; ((size_t)1 << exp) < n; exp++)
			;
		/* Exactly 2^log2n entries, so ASan sees any overrun. */
		r = xmalloc(((size_t)1 << exp) * f->esz);
		for (j = 0; j < n * f->esz; j++)
			r[j] = (char)rnd();
		j = f->bits == 32 ? xfib_ranges4_pad((void *)r, n) :
				    xfib_ranges6_pad((void *)r, n);
		CHECK(j == exp, "%s: pad(%zu) = %zu, expected %u", f->name, n,
		      j, exp);
		for (j = n; j < ((size_t)1 << exp); j++)
			CHECK(!memcmp(r + j * f->esz, r + (n - 1) * f->esz,
				      f->esz),
			      "%s: pad(%zu): entry %zu differs", f->name, n, j);
		free(r);
	}
	/* A full slot needs no padding and the largest log2n. */
	n = f->slot_size;
	{
		char *r = calloc(n, f->esz);

		CHECK(r, "out of memory");
		j = f->bits == 32 ? xfib_ranges4_pad((void *)r, n) :
				    xfib_ranges6_pad((void *)r, n);
		CHECK(j == f->log2_max, "%s: pad of a full slot = %zu",
		      f->name, j);
		free(r);
	}
}

/* ---- random tables ----------------------------------------------------- */

/*
 * A table that looks like a routing table: more-specifics inside
 * aggregates, runs of neighbouring prefixes, mostly the nexthop of the
 * surrounding or neighbouring prefix, a few upstreams doing most of the
 * work. spread is the share (in %) of prefixes placed at random instead,
 * inherit the share of the others that take their relative's nexthop.
 */
static void gen_table(const struct fam *f, struct pset *ps, size_t n,
		      unsigned int spread, unsigned int inherit,
		      unsigned int nhs)
{
	struct pmap seen;
	size_t tries = 0;

	pm_init(&seen, n);
	while (ps->n[MAIN] < n) {
		unsigned int len = f->bits == 32 ? len_v4() : len_v6();
		unsigned int mode = rnd_below(100);
		__u32 nh = rnd_nh(2, nhs);
		u128 a;

		CHECK(++tries < 50 * n, "test bug: generator stuck");
		if (mode < spread || !ps->n[MAIN]) {
			a = f->bits == 32 ? addr_v4() : addr_v6();
		} else {
			const struct xfib_pfx *q =
				&ps->p[MAIN][rnd_below(ps->n[MAIN])];
			u128 qa = from_bytes(f->bits, q->addr);

			if (rnd_below(100) < inherit)
				nh = q->nh;
			/* A /0 is never inside q and has no neighbour. */
			if (len == 0)
				continue;
			a = pfx_near(f->bits, qa, q->plen, len, mode % 2);
		}
		if (pm_put(&seen, pfx_first(f->bits, a, len), len, MAIN, 0))
			ps_add(ps, f, MAIN, a, len, nh);
	}
	pm_free(&seen);
}

/* Local addresses: host routes inside main prefixes, plus some blocks. */
static void gen_local(const struct fam *f, struct pset *ps, size_t n)
{
	struct pmap seen;
	size_t i;

	pm_init(&seen, n + 8);
	if (f->bits == 32) {
		pm_put(&seen, A(f->bits, "127.0.0.0"), 8, OVER, 0);
		ps_add(ps, f, OVER, A(f->bits, "127.0.0.0"), 8,
		       XFIB_NH_IDX_LOCAL);
		pm_put(&seen, A(f->bits, "255.255.255.255"), 32, OVER, 0);
		ps_add(ps, f, OVER, A(f->bits, "255.255.255.255"), 32,
		       XFIB_NH_IDX_LOCAL);
	} else {
		pm_put(&seen, A(f->bits, "::1"), 128, OVER, 0);
		ps_add(ps, f, OVER, A(f->bits, "::1"), 128, XFIB_NH_IDX_LOCAL);
		pm_put(&seen, A(f->bits, "ff00::"), 8, OVER, 0);
		ps_add(ps, f, OVER, A(f->bits, "ff00::"), 8, XFIB_NH_IDX_LOCAL);
	}
	for (i = 0; i < n; i++) {
		const struct xfib_pfx *q = &ps->p[MAIN][rnd_below(ps->n[MAIN])];
		u128 a = from_bytes(f->bits, q->addr) |
			 (rnd_addr(f->bits) & host_mask(f->bits, q->plen));
		unsigned int len = rnd_below(8) ? f->bits : f->bits - 8;

		if (pm_put(&seen, pfx_first(f->bits, a, len), len, OVER, 0))
			ps_add(ps, f, OVER, a, len, XFIB_NH_IDX_LOCAL);
	}
	pm_free(&seen);
}

static void print_mix(const struct fam *f, const struct pset *ps)
{
	size_t cnt[129] = { 0 }, i;

	for (i = 0; i < ps->n[MAIN]; i++)
		cnt[ps->p[MAIN][i].plen]++;
	print_len_mix(f->name, cnt, f->bits, ps->n[MAIN], 200);
}

static void test_random(struct fam *f, size_t n, unsigned int spread,
			unsigned int inherit, unsigned int nhs)
{
	struct pset ps = PSET_INIT, alt;
	size_t nr, i, kept;
	void *raw, *raw2;
	double t;

	cur_test = "random";
	gen_table(f, &ps, n, spread, inherit, nhs);
	gen_local(f, &ps, n / 100);
	print_mix(f, &ps);

	t = now();
	nrandom_default = 100000;
	raw = build_checked(f, &ps, &nr);
	nrandom_default = 200;
	printf("    %s: %zu + %zu prefixes -> %zu ranges%s, checked in %.2fs\n",
	       f->name, ps.n[MAIN], ps.n[OVER], nr,
	       nr <= f->slot_size ? " (fit a slot)" : " (exceed a slot)",
	       now() - t);
	/* Else the real lookup is not exercised: tune the generator. */
	CHECK(nr <= f->slot_size,
	      "%s: test bug: table of %zu ranges does not fit a slot", f->name,
	      nr);

	/* Input order must not matter. */
	ps_copy(&alt, &ps);
	ps_reverse(&alt);
	raw2 = xmalloc((2 * n + 1) * f->esz);
	CHECK(do_build(f, &alt, raw2, 2 * n + 1) == (int)nr &&
		      !memcmp(raw, raw2, nr * f->esz),
	      "%s: reversed input gives other ranges", f->name);
	ps_shuffle(&alt);
	CHECK(do_build(f, &alt, raw2, 2 * n + 1) == (int)nr &&
		      !memcmp(raw, raw2, nr * f->esz),
	      "%s: shuffled input gives other ranges", f->name);
	free(raw2);
	free(raw);

	/* Withdraw the short, covering prefixes and a random tenth. */
	cur_test = "random-delete";
	for (i = 0, kept = 0; i < alt.n[MAIN]; i++)
		if (alt.p[MAIN][i].plen > (f->bits == 32 ? 16 : 32) &&
		    rnd_below(10))
			alt.p[MAIN][kept++] = alt.p[MAIN][i];
	alt.n[MAIN] = kept;
	t = now();
	nrandom_default = 50000;
	check_set(f, &alt);
	nrandom_default = 200;
	printf("    %s: after withdrawing to %zu prefixes, checked in %.2fs\n",
	       f->name, alt.n[MAIN], now() - t);
	ps_free(&alt);
	ps_free(&ps);
}

/* Build time of a full-size IPv4 table (informational); it must succeed. */
static void bench(const struct fam *f, size_t n)
{
	struct pset ps = PSET_INIT;
	void *out = xmalloc((2 * n + 1) * f->esz);
	double t;
	int ret;

	cur_test = "bench";
	gen_table(f, &ps, n, 30, 70, 64);
	t = now();
	ret = do_build(f, &ps, out, 2 * n + 1);
	t = now() - t;
	CHECK(ret > 0, "%s: build of %zu prefixes: %d", f->name, n, ret);
	printf("    %s: %zu prefixes -> %d ranges, built in %.3fs\n",
	       f->name, n, ret, t);
	free(out);
	ps_free(&ps);
}

int main(int argc, char **argv)
{
	struct fam *fams[2] = { &f4, &f6 };
	double t0 = now();
	int i;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	fflush(stdout);

	fam_init(&f4);
	fam_init(&f6);
	for (i = 0; i < 2; i++) {
		struct fam *f = fams[i];

		test_empty(f);
		test_default(f);
		test_depth(f);
		test_overlap(f);
		test_delete(f);
		test_einval(f);
		test_pad(f);
		printf("  %s: small tables ok\n", f->name);
		fflush(stdout);
	}
	test_golden4();
	test_golden6();
	printf("  golden tables ok\n");

	/* Realistic, clustered: must fit a slot, so the real lookup runs. */
	test_random(&f4, 250000, 15, 70, 32);
	test_random(&f6, 200000, 10, 90, 32);
	/* Scattered, many nexthops: little merges. */
	test_random(&f4, 100000, 100, 0, 4000);
	test_random(&f6, 50000, 100, 0, 4000);
	bench(&f4, 1000000);
	fam_fini(&f4);
	fam_fini(&f6);

	printf("test_ranges: ok: %llu tables, %llu addresses checked, %.1fs\n",
	       n_tables, n_lookups, now() - t0);
	return 0;
}
