// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of dxr: the builder (ctl/xfibd/fib/dxr.c) together with the lookup
 * the dataplane runs (include/xfib/lookup_dxr.h).
 *
 * Prefix sets are compiled into ranges by the tests' own compiler
 * (tests/unit/ref/ranges.c), built into a slot, and looked up. The lookup
 * reads the tables as the BPF program does: __u64 values holding two
 * entries, low half first, with every read checked against the end of the
 * map (a read past it fails the test: BPF would answer "no route").
 *
 * Checks:
 *  - the naive longest match (a scan of the prefixes) on random
 *    addresses, and on the first and last address of every prefix and the
 *    ones just outside it, for small tables;
 *  - for large tables, every range's first and last address and random
 *    addresses against the reference ranges (which test_ranges checks
 *    against the naive match);
 *  - cases: no route; /0 alone; 0.0.0.0/32 and 255.255.255.255/32; every
 *    depth 0..32 nested at one address, each boundary; a chunk cut into
 *    more runs than a descriptor's length field holds, and a chunk of
 *    2^16 /32s (the longest search), every address of each;
 *  - both slots: a build into slot 1 answers through slot 1 and leaves
 *    slot 0 byte for byte as it was;
 *  - errors: a table too large for the capacity (-ENOSPC), a nexthop of
 *    2^16 (-ERANGE), unsorted or not starting at 0 (-EINVAL);
 *  - sizes: range entries per prefix on the realistic tables, printed.
 *
 * Usage: unit_test_dxr [seed]. The seed is printed first; passing it back
 * replays the same tables.
 */
#include <errno.h>

#define TESTLIB_SEED 0xd8a1b4c2000d0001ull
#include "testlib.h"
#include "ranges.h"
#include "fib/dxr.h"

/* The memory is written as __u32 by dxr.c: let the __u64 view alias it. */
typedef __u64 __attribute__((may_alias)) u64_alias;

/* A table as the lookup sees it: n __u32 entries. */
struct tbl {
	__u32 *p;
	size_t n;
};

static unsigned long long n_lookups;

static __u32 u32_at(const struct tbl *t, __u32 i)
{
	__u64 v;

	CHECK(i < t->n, "read of entry %u past the end (%zu)", i, t->n);
	v = ((const u64_alias *)t->p)[i >> 1];
	return (__u32)(v >> ((i & 1) * 32));
}

#define XFIB_U32_AT(t, i) u32_at((t), (i))
#include "xfib/lookup_dxr.h"

/* Both slots of both tables, as the maps hold them. */
struct inst {
	struct tbl direct, ranges;
};

static void inst_init(struct inst *in)
{
	in->direct.n = 2 * (size_t)XFIB_DXR_CHUNKS;
	in->ranges.n = 2 * (size_t)XFIB_DXR_SLOT_RANGES;
	in->direct.p = calloc(in->direct.n, sizeof(__u32));
	in->ranges.p = calloc(in->ranges.n, sizeof(__u32));
	CHECK(in->direct.p && in->ranges.p, "out of memory");
}

static void inst_fini(struct inst *in)
{
	free(in->direct.p);
	free(in->ranges.p);
}

static long build_slot(struct inst *in, unsigned int slot,
		       const struct xfib_bs4_range *r, size_t n, size_t cap)
{
	return dxr_build(r, n, in->direct.p + (size_t)slot * XFIB_DXR_CHUNKS,
			 in->ranges.p + (size_t)slot * XFIB_DXR_SLOT_RANGES, cap);
}

static __u32 lookup(struct inst *in, unsigned int slot, __u32 a)
{
	n_lookups++;
	return xfib_dxr_lookup(&in->direct, &in->ranges, slot, a);
}

/* A prefix set and its reference ranges. */
struct set {
	struct xfib_pfx *p;
	struct npfx *np;
	size_t n, cap;
	struct xfib_bs4_range *r;
	size_t nr;
};

static void set_add(struct set *s, __u32 a, unsigned int len, __u32 nh)
{
	__u32 mask = len ? ~0u << (32 - len) : 0;
	__u32 be = htonl(a & mask);

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->p = xrealloc(s->p, s->cap * sizeof(*s->p));
		s->np = xrealloc(s->np, s->cap * sizeof(*s->np));
	}
	memset(&s->p[s->n], 0, sizeof(s->p[s->n]));
	memcpy(s->p[s->n].addr, &be, 4);
	s->p[s->n].plen = len;
	s->p[s->n].nh = nh;
	s->np[s->n].first = a & mask;
	s->np[s->n].last = (a & mask) | ~mask;
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

/* Drops repeated prefixes (random tables draw some twice): the first
 * drawn stays. The order of the set does not matter. */
static void set_dedup(struct set *s)
{
	size_t i, k = 0;

	qsort(s->np, s->n, sizeof(*s->np), np_cmp);
	for (i = 0; i < s->n; i++) {
		if (k && !np_cmp(&s->np[k - 1], &s->np[i]))
			continue;
		s->np[k++] = s->np[i];
	}
	s->n = 0;
	for (i = 0; i < k; i++)
		set_add(s, (__u32)s->np[i].first, s->np[i].plen, s->np[i].nh);
}

static void set_compile(struct set *s)
{
	long nr;

	free(s->r);
	s->r = xmalloc((2 * s->n + 1) * sizeof(*s->r));
	nr = xfib_ranges4_build(s->p, s->n, NULL, 0, s->r, 2 * s->n + 1);
	CHECK(nr > 0, "reference compiler: %ld", nr);
	s->nr = nr;
}

static void set_free(struct set *s)
{
	free(s->p);
	free(s->np);
	free(s->r);
	memset(s, 0, sizeof(*s));
}

/* The reference ranges' answer for a. */
static __u32 ref_lpm(const struct set *s, __u32 a)
{
	size_t lo = 0, hi = s->nr;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->r[mid].start <= a)
			lo = mid;
		else
			hi = mid;
	}
	return s->r[lo].nh;
}

static void expect(struct inst *in, unsigned int slot, const struct set *s,
		   __u32 a, bool naive)
{
	__u32 want = naive ? naive_lpm(s->np, s->n, a, XFIB_NH_IDX_NONE) :
			     ref_lpm(s, a);
	__u32 got = lookup(in, slot, a);

	CHECK(got == want, "%u.%u.%u.%u: dxr %u, reference %u", a >> 24,
	      (a >> 16) & 255, (a >> 8) & 255, a & 255, got, want);
}

/* Builds s into slot and checks it: boundaries of every prefix (naive)
 * or every range (reference), and random addresses. */
static void check_set(struct inst *in, unsigned int slot, struct set *s,
		      bool naive, size_t randoms)
{
	long used;
	size_t i;

	set_compile(s);
	used = build_slot(in, slot, s->r, s->nr, XFIB_DXR_SLOT_RANGES);
	CHECK(used >= 0, "build of %zu ranges: %ld", s->nr, used);
	if (naive) {
		for (i = 0; i < s->n; i++) {
			__u32 f = s->np[i].first, l = s->np[i].last;

			expect(in, slot, s, f, true);
			expect(in, slot, s, l, true);
			expect(in, slot, s, f - 1, true);
			expect(in, slot, s, l + 1, true);
		}
	} else {
		for (i = 0; i < s->nr; i++) {
			expect(in, slot, s, s->r[i].start, false);
			expect(in, slot, s, s->r[i].start - 1, false);
		}
	}
	for (i = 0; i < randoms; i++)
		expect(in, slot, s, (__u32)rnd(), naive);
	expect(in, slot, s, 0, naive);
	expect(in, slot, s, ~0u, naive);
}

#define ADDR(a, b, c, d) ((__u32)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static void test_cases(struct inst *in)
{
	struct set s = { 0 };
	unsigned int len;

	cur_test = "empty";
	set_add(&s, 0, 0, XFIB_NH_IDX_NONE);
	check_set(in, 0, &s, true, 1000);
	set_free(&s);

	cur_test = "default";
	set_add(&s, 0, 0, 7);
	check_set(in, 0, &s, true, 1000);
	CHECK(in->direct.p[0] == 7 && in->direct.p[XFIB_DXR_CHUNKS - 1] == 7,
	      "a /0 alone is direct descriptors");
	set_add(&s, 0, 32, 8);
	set_add(&s, ~0u, 32, 9);
	check_set(in, 0, &s, true, 1000);
	set_free(&s);

	cur_test = "ends without a default";
	set_add(&s, 0, 32, 8);
	set_add(&s, ~0u, 32, 9);
	check_set(in, 1, &s, true, 1000);
	set_free(&s);

	cur_test = "every depth";
	for (len = 0; len <= 32; len++)
		set_add(&s, ADDR(198, 18, 77, 129), len, 100 + len);
	check_set(in, 0, &s, true, 10000);
	set_free(&s);
	for (len = 1; len <= 32; len++)
		set_add(&s, ADDR(198, 19, 255, 255), len, 200 + len);
	check_set(in, 1, &s, true, 10000);
	set_free(&s);
}

/* Every address of the chunk holding a. */
static void check_chunk(struct inst *in, unsigned int slot, struct set *s,
			__u32 a)
{
	__u32 i, base = a & ~0xffffu;

	for (i = 0; i <= 0xffff; i++)
		expect(in, slot, s, base | i, false);
}

static void test_long_runs(struct inst *in)
{
	struct set s = { 0 };
	__u32 i, base = ADDR(198, 18, 0, 0), d;

	cur_test = "long run";
	set_add(&s, 0, 0, 1);
	/* 600 /32s alternating two nexthops: a run of 1201 entries. */
	for (i = 0; i < 600; i++)
		set_add(&s, base + 37 * i + 5, 32, 2 + (i & 1));
	check_set(in, 0, &s, false, 10000);
	d = in->direct.p[base >> 16];
	CHECK((d & XFIB_DXR_RANGE) && !((d & ~XFIB_DXR_RANGE) >> XFIB_DXR_BASE_BITS),
	      "a run of 1201 is long: descriptor %#x", d);
	CHECK(in->ranges.p[d & XFIB_DXR_BASE_MASK] == 1201,
	      "long run length %u", in->ranges.p[d & XFIB_DXR_BASE_MASK]);
	check_chunk(in, 0, &s, base);
	set_free(&s);

	cur_test = "longest run";
	/* 2^16 /32s with alternating nexthops: 2^16 entries, 16 steps. */
	for (i = 0; i <= 0xffff; i++)
		set_add(&s, ADDR(198, 19, 0, 0) | i, 32, 10 + (i & 1));
	set_add(&s, ADDR(198, 18, 0, 0), 15, 4);
	check_set(in, 1, &s, false, 1000);
	check_chunk(in, 1, &s, ADDR(198, 19, 0, 0));
	check_chunk(in, 1, &s, ADDR(198, 18, 0, 0));
	set_free(&s);
}

static void test_slots(struct inst *in)
{
	struct set a = { 0 }, b = { 0 };
	__u32 *d0, *r0;
	size_t i;

	cur_test = "slots";
	set_add(&a, ADDR(10, 0, 0, 0), 8, 1);
	set_add(&a, ADDR(10, 1, 2, 0), 24, 2);
	set_add(&a, ADDR(10, 1, 2, 128), 25, 3);
	check_set(in, 0, &a, true, 1000);
	d0 = xmalloc(XFIB_DXR_CHUNKS * sizeof(__u32));
	r0 = xmalloc(1024 * sizeof(__u32));
	memcpy(d0, in->direct.p, XFIB_DXR_CHUNKS * sizeof(__u32));
	memcpy(r0, in->ranges.p, 1024 * sizeof(__u32));
	for (i = 0; i < 5000; i++)
		set_add(&b, addr_v4(), len_v4(), 1 + rnd_below(1000));
	set_dedup(&b);
	check_set(in, 1, &b, true, 1000);
	CHECK(!memcmp(d0, in->direct.p, XFIB_DXR_CHUNKS * sizeof(__u32)) &&
	      !memcmp(r0, in->ranges.p, 1024 * sizeof(__u32)),
	      "a build into slot 1 changed slot 0");
	for (i = 0; i < 10000; i++)
		expect(in, 0, &a, (__u32)rnd(), true);
	free(d0);
	free(r0);
	set_free(&a);
	set_free(&b);
}

static void test_errors(struct inst *in)
{
	struct xfib_bs4_range r[4] = {
		{ 0, 1 }, { ADDR(10, 0, 0, 0), 2 }, { ADDR(10, 0, 1, 0), 3 },
		{ ADDR(11, 0, 0, 0), 1 },
	};
	struct set s = { 0 };
	size_t i;

	cur_test = "errors";
	/* 10.0/16 is cut once: two entries; the rest is direct. */
	CHECK(build_slot(in, 0, r, 4, 1) == -ENOSPC, "capacity 1 holds 2 entries");
	CHECK(build_slot(in, 0, r, 4, 2) == 2, "capacity 2 holds 2 entries");
	r[2].nh = 0x10000;
	CHECK(build_slot(in, 0, r, 4, 100) == -ERANGE, "nexthop 2^16 accepted");
	r[2].nh = 0xffff;
	CHECK(build_slot(in, 0, r, 4, 100) == 2, "nexthop 2^16 - 1 refused");
	r[2].start = ADDR(9, 0, 0, 0);
	CHECK(build_slot(in, 0, r, 4, 100) == -EINVAL, "unsorted accepted");
	CHECK(build_slot(in, 0, r + 1, 3, 100) == -EINVAL, "start above 0 accepted");
	CHECK(build_slot(in, 0, r, 0, 100) == -EINVAL, "no ranges accepted");

	/* A long run needs its length word: capacity exactly fits or not. */
	set_add(&s, 0, 0, 1);
	for (i = 0; i < 300; i++)
		set_add(&s, ADDR(198, 18, 1, 0) + 2 * i, 32, 2);
	set_compile(&s);
	CHECK(build_slot(in, 0, s.r, s.nr, 601) == -ENOSPC, "no room for length");
	CHECK(build_slot(in, 0, s.r, s.nr, 602) == 602, "601 entries and length");
	set_free(&s);
}

/* A realistic table of n prefixes: lengths as in a full table, addresses
 * clustered around earlier prefixes as tables grow. */
static void gen(struct set *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int len = len_v4();
		__u32 a;

		if (i && rnd_below(2)) {
			const struct npfx *q = &s->np[rnd_below(i)];

			a = (__u32)pfx_near(32, q->first, q->plen, len ? len : 1,
					    rnd_below(2));
		} else {
			a = (__u32)addr_v4();
		}
		set_add(s, a, len, rnd_nh(2, 4000));
	}
	set_dedup(s);
}

static void test_random(struct inst *in, size_t n, bool naive, unsigned int slot)
{
	struct set s = { 0 };
	long used;

	cur_test = "random";
	gen(&s, n);
	check_set(in, slot, &s, naive, naive ? 20000 : 1000000);
	used = build_slot(in, slot, s.r, s.nr, XFIB_DXR_SLOT_RANGES);
	printf("    %zu prefixes: %zu ranges, %ld entries, %.2f bytes/prefix\n",
	       s.n, s.nr, used,
	       (double)(XFIB_DXR_CHUNKS + used) * sizeof(__u32) / (double)n);
	set_free(&s);
}

int main(int argc, char **argv)
{
	double t0 = now();
	struct inst in;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	inst_init(&in);
	test_cases(&in);
	test_long_runs(&in);
	test_slots(&in);
	test_errors(&in);
	printf("  cases, long runs, slots and errors ok (%.1fs)\n", now() - t0);
	test_random(&in, 100, true, 0);
	test_random(&in, 3000, true, 1);
	test_random(&in, 100000, false, 0);
	test_random(&in, 1000000, false, 1);
	inst_fini(&in);
	printf("test_dxr: ok, %llu lookups (%.1fs)\n", n_lookups, now() - t0);
	return 0;
}
