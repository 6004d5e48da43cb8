// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test of the range list every build starts from (ctl/xfibd/fib/
 * fib_ranges.c): the mirrored table's prefix tree and the local table's,
 * walked and merged with the local table answering first, as the kernel
 * does. Checked against the tests' own compiler (tests/unit/ref/ranges.c),
 * which takes the same two prefix lists, the local one as its override
 * list, and knows nothing about trees.
 *
 * The two lists must match range for range: both merge neighbours with
 * equal nexthops, so the same answer has one spelling. Spans (a prefix's
 * part of the space, as an in-place update asks for it) are checked
 * against the reference clipped to the span.
 *
 * Cases: both trees empty; a local table only; the local table covering
 * all of main (a local /0); local prefixes inside, around and beside main
 * ones, with nexthops that equal main's so merges cross the two; random
 * tables of both families, realistic and clustered, with random spans,
 * including /0 and host routes; the output buffer reused across calls;
 * fib_full_ranges() over a RIB's two trees.
 *
 * Usage: unit_test_fib_ranges [seed]. The seed is printed first; passing
 * it back replays the same tables.
 */
#include <errno.h>

#define TESTLIB_SEED 0xf1b7a4c35eed0001ull
#include "testlib.h"
#include "ranges.h"
#include "fib/fib_ranges.h"

enum { MAIN, LOCAL };

struct fam {
	const char *name;
	unsigned int bits;
};

static const struct fam f4 = { .name = "ipv4", .bits = 32 };
static const struct fam f6 = { .name = "ipv6", .bits = 128 };

/* Both tables as trees and as the reference's lists. */
struct tables {
	const struct fam *f;
	struct ptree t[2];
	struct xfib_pfx *p[2];
	size_t n[2], cap[2];
};

/* The reference's full list, decoded. */
struct ref {
	u128 *start;
	__u32 *nh;
	size_t n;
};

static unsigned long long n_checked;

static void tables_init(struct tables *tb, const struct fam *f)
{
	memset(tb, 0, sizeof(*tb));
	tb->f = f;
	CHECK(!ptree_init(&tb->t[MAIN], f->bits) &&
	      !ptree_init(&tb->t[LOCAL], f->bits), "ptree_init");
}

static void tables_free(struct tables *tb)
{
	int k;

	for (k = 0; k < 2; k++) {
		ptree_fini(&tb->t[k]);
		free(tb->p[k]);
	}
}

/* Adds (a, plen) -> nh to table k unless it holds that prefix already. */
static void add(struct tables *tb, int k, u128 a, unsigned int plen, __u32 nh)
{
	struct xfib_pfx *x;
	__u8 b[16] = { 0 };
	__u32 old;

	to_bytes(tb->f->bits, pfx_first(tb->f->bits, a, plen), b);
	if (!ptree_get(&tb->t[k], b, plen, &old))
		return;
	CHECK(ptree_set(&tb->t[k], b, plen, nh) == 1, "ptree_set");
	if (tb->n[k] == tb->cap[k]) {
		tb->cap[k] = tb->cap[k] ? 2 * tb->cap[k] : 64;
		tb->p[k] = xrealloc(tb->p[k], tb->cap[k] * sizeof(*x));
	}
	x = &tb->p[k][tb->n[k]++];
	memset(x, 0, sizeof(*x));
	memcpy(x->addr, b, 16);
	x->plen = plen;
	x->nh = nh;
}

static void ref_build(const struct tables *tb, struct ref *r)
{
	int ret = xfib_ranges_build_decoded(tb->f->bits, tb->p[MAIN],
					    tb->n[MAIN], tb->p[LOCAL],
					    tb->n[LOCAL], &r->start, &r->nh);

	CHECK(ret > 0, "%s: test bug: reference build: %d", tb->f->name, ret);
	r->n = ret;
}

static void ref_free(struct ref *r)
{
	free(r->start);
	free(r->nh);
}

/* fib_tree_ranges() over the span (a, plen), into the reused *buf, against
 * the reference clipped to the span. */
static void check_span(const struct tables *tb, const struct ref *r, u128 a,
		       unsigned int plen, struct fib_range **buf, size_t *cap)
{
	const unsigned int bits = tb->f->bits;
	u128 first = pfx_first(bits, a, plen), last = pfx_last(bits, a, plen);
	size_t n, i, j = xfib_ranges_at(r->start, r->n, first);
	__u8 b[16] = { 0 };
	int ret;

	/* Host bits must not matter. */
	to_bytes(bits, a, b);
	ret = fib_tree_ranges(&tb->t[MAIN], &tb->t[LOCAL], b, plen, buf, &n, cap);
	CHECK(!ret, "%s: span %s/%u: %d", tb->f->name, FA(bits, first), plen, ret);
	CHECK(n >= 1 && n <= *cap, "%s: span %s/%u: %zu ranges, room for %zu",
	      tb->f->name, FA(bits, first), plen, n, *cap);
	for (i = 0; i < n; i++, j++) {
		const struct fib_range *x = &(*buf)[i];
		u128 want_first, want_last;

		CHECK(j < r->n && r->start[j] <= last,
		      "%s: span %s/%u: %zu ranges, the reference has fewer",
		      tb->f->name, FA(bits, first), plen, n);
		xfib_ranges_clip(r->start, r->n, j, first, last, &want_first,
				 &want_last);
		CHECK(x->first == want_first && x->last == want_last &&
		      x->nh == r->nh[j],
		      "%s: span %s/%u, range %zu: %s..%s -> %u, want %s..%s -> %u",
		      tb->f->name, FA(bits, first), plen, i,
		      FA(bits, x->first), FA(bits, x->last), x->nh,
		      FA(bits, want_first), FA(bits, want_last), r->nh[j]);
	}
	CHECK((*buf)[n - 1].last == last, "%s: span %s/%u ends at %s",
	      tb->f->name, FA(bits, first), plen, FA(bits, (*buf)[n - 1].last));
	n_checked += n;
}

/* The whole space, then spans: every prefix of both tables, nspans random
 * ones (of every length), and a neighbour of a random prefix. */
static void check_all(const struct tables *tb, size_t nspans)
{
	const unsigned int bits = tb->f->bits;
	struct fib_range *buf = NULL;
	size_t cap = 0, i;
	struct ref r;
	int k;

	ref_build(tb, &r);
	check_span(tb, &r, 0, 0, &buf, &cap);
	for (k = 0; k < 2; k++)
		for (i = 0; i < tb->n[k] && i < nspans; i++) {
			const struct xfib_pfx *x = &tb->p[k][rnd_below(tb->n[k])];

			check_span(tb, &r, from_bytes(bits, x->addr) |
					   (rnd_addr(bits) &
					    host_mask(bits, x->plen)),
				   x->plen, &buf, &cap);
		}
	for (i = 0; i < nspans; i++)
		check_span(tb, &r, rnd_addr(bits), rnd_below(bits + 1), &buf,
			   &cap);
	free(buf);
	ref_free(&r);
}

static unsigned int rnd_plen(const struct fam *f)
{
	return f->bits == 32 ? len_v4() : len_v6();
}

static u128 rnd_pfx_addr(const struct fam *f)
{
	return f->bits == 32 ? addr_v4() : addr_v6();
}

/* Local prefixes as a host has them: host routes inside main prefixes,
 * the odd block inside or around one, and some anywhere. Nexthops from a
 * small set that main's share, so merges cross the two tables. */
static void gen_local(struct tables *tb, size_t n)
{
	const unsigned int bits = tb->f->bits;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int plen = rnd_below(4) ? bits : rnd_below(bits + 1);
		u128 a = rnd_addr(bits);

		if (tb->n[MAIN] && rnd_below(4)) {
			const struct xfib_pfx *q =
				&tb->p[MAIN][rnd_below(tb->n[MAIN])];

			a = from_bytes(bits, q->addr) |
			    (a & host_mask(bits, q->plen));
			if (!rnd_below(8)) /* around q instead */
				plen = rnd_below(q->plen + 1);
		}
		add(tb, LOCAL, a, plen, rnd_nh(1, 4));
	}
}

static void gen_main(struct tables *tb, size_t n, bool clustered)
{
	const unsigned int bits = tb->f->bits;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned int plen = rnd_plen(tb->f);
		u128 a = rnd_pfx_addr(tb->f);

		if (clustered && plen && tb->n[MAIN] && rnd_below(4)) {
			const struct xfib_pfx *q =
				&tb->p[MAIN][rnd_below(tb->n[MAIN])];

			a = pfx_near(bits, from_bytes(bits, q->addr), q->plen,
				     plen, rnd_below(2));
		}
		add(tb, MAIN, a, plen, rnd_nh(1, 8));
	}
}

static void test_cases(const struct fam *f)
{
	const unsigned int bits = f->bits;
	struct tables tb;

	cur_test = "empty";
	tables_init(&tb, f);
	check_all(&tb, 64);

	cur_test = "local only";
	add(&tb, LOCAL, 0, bits, 3);
	add(&tb, LOCAL, last_addr(bits), bits, 3);
	add(&tb, LOCAL, A(bits, bits == 32 ? "198.18.0.0" : "2001:db8::"),
	    bits / 2, 5);
	check_all(&tb, 256);

	cur_test = "main beside local";
	add(&tb, MAIN, 0, 0, 3); /* the same nexthop as local's host routes */
	add(&tb, MAIN, A(bits, bits == 32 ? "198.18.0.0" : "2001:db8::"),
	    bits / 2 + 1, 5);
	add(&tb, MAIN, A(bits, bits == 32 ? "198.19.0.0" : "2001:db8:8000::"),
	    bits / 2 + 1, 6);
	check_all(&tb, 256);

	cur_test = "local /0";
	add(&tb, LOCAL, 0, 0, 7);
	check_all(&tb, 256);
	tables_free(&tb);
}

static void test_random(const struct fam *f, size_t nmain, size_t nlocal,
			bool clustered, size_t nspans)
{
	struct tables tb;
	double t = now();

	cur_test = clustered ? "random clustered" : "random";
	tables_init(&tb, f);
	gen_main(&tb, nmain, clustered);
	gen_local(&tb, nlocal);
	check_all(&tb, nspans);
	printf("    %s: %zu + %zu prefixes%s, checked in %.2fs\n", f->name,
	       tb.n[MAIN], tb.n[LOCAL], clustered ? " (clustered)" : "",
	       now() - t);
	tables_free(&tb);
}

/* fib_full_ranges() over a RIB: room for the whole list before the walk,
 * and the same list as the span /0. */
static void test_full(const struct fam *f, int fam)
{
	struct rib *rib = xmalloc(sizeof(*rib));
	struct fib_range *buf = NULL, *span = NULL;
	size_t n, cap = 0, ns, scap = 0;
	struct tables tb;
	__u8 zero[16] = { 0 };

	cur_test = "fib_full_ranges";
	tables_init(&tb, f);
	gen_main(&tb, 5000, true);
	gen_local(&tb, 100);
	memset(rib, 0, sizeof(*rib));
	rib->tree[fam][0] = tb.t[MAIN];
	rib->tree[fam][1] = tb.t[LOCAL];
	CHECK(!fib_full_ranges(rib, fam, &buf, &n, &cap), "fib_full_ranges");
	CHECK(cap >= 2 * (tb.n[MAIN] + tb.n[LOCAL]) + 1,
	      "%s: room for %zu ranges, want 2 * %zu + 1", f->name, cap,
	      tb.n[MAIN] + tb.n[LOCAL]);
	CHECK(!fib_tree_ranges(&tb.t[MAIN], &tb.t[LOCAL], zero, 0, &span, &ns,
			       &scap) &&
	      ns == n && !memcmp(buf, span, n * sizeof(*buf)),
	      "%s: the full list is not the span /0's", f->name);
	free(buf);
	free(span);
	free(rib);
	tables_free(&tb);
}

int main(int argc, char **argv)
{
	const struct fam *fams[] = { &f4, &f6 };
	int i;

	testlib_start(argv[0], argc > 1 ? argv[1] : NULL);
	for (i = 0; i < 2; i++) {
		const struct fam *f = fams[i];

		printf("%s:\n", f->name);
		test_cases(f);
		test_random(f, 30, 10, false, 2000);
		test_random(f, 300, 40, true, 2000);
		test_random(f, 20000, 300, false, 300);
		test_random(f, 20000, 300, true, 300);
		test_full(f, i);
	}
	printf("ok: %llu ranges checked\n", n_checked);
	return 0;
}
