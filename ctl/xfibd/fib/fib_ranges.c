// SPDX-License-Identifier: GPL-2.0-only
/* The range list every build starts from. See fib_ranges.h. */
#include <errno.h>
#include <stdlib.h>

#include "fib_ranges.h"

#define NH_UNCOVERED 0xffffffffu /* walk default: no local-table prefix */

struct range_buf {
	struct fib_range *r;
	size_t n, cap;
};

static int range_push(struct range_buf *b, xfib_u128 first, xfib_u128 last,
		      __u32 nh)
{
	if (b->n && b->r[b->n - 1].nh == nh && b->r[b->n - 1].last + 1 == first) {
		b->r[b->n - 1].last = last;
		return 0;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct fib_range *r = realloc(b->r, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		b->r = r;
		b->cap = cap;
	}
	b->r[b->n].first = first;
	b->r[b->n].last = last;
	b->r[b->n].nh = nh;
	b->n++;
	return 0;
}

static int range_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh)
{
	return range_push(ctx, first, last, nh);
}

/* The main table's ranges, as the walk emits them, merged with the
 * local table's (both cover the whole span, in order) into res. */
struct span_merge {
	const struct range_buf *loc;
	size_t i; /* the first local range not wholly behind the walk */
	struct range_buf *res;
};

static int merge_emit(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh)
{
	struct span_merge *m = ctx;
	int err = 0;

	while (!err && m->i < m->loc->n) {
		const struct fib_range *a = &m->loc->r[m->i];
		xfib_u128 lo = a->first > first ? a->first : first;
		xfib_u128 hi = a->last < last ? a->last : last;

		err = range_push(m->res, lo, hi, a->nh != NH_UNCOVERED ? a->nh : nh);
		if (a->last > last)
			break; /* it reaches into the next main range */
		m->i++;
		if (a->last == last)
			break;
	}
	return err;
}

int fib_tree_ranges(const struct ptree *main, const struct ptree *local,
		    const __u8 *dst, unsigned int plen, struct fib_range **out,
		    size_t *n, size_t *cap)
{
	struct range_buf loc = { 0 }, res = { *out, 0, *cap };
	struct span_merge m = { .loc = &loc, .res = &res };
	int err;

	/* The kernel consults its local table before the mirrored one:
	 * wherever a local prefix covers an address, it answers. */
	err = ptree_walk_span(local, dst, plen, NH_UNCOVERED, range_emit, &loc);
	err = err ?: ptree_walk_span(main, dst, plen, XFIB_NH_IDX_NONE,
				     merge_emit, &m);
	free(loc.r);
	*out = res.r;
	*n = res.n;
	*cap = res.cap;
	return err;
}

int fib_tree_full_ranges(const struct ptree *t, struct fib_range **out,
			 size_t *n, size_t *cap)
{
	static const __u8 zero[16];
	size_t want = 2 * ptree_count(t) + 1; /* as fib_full_ranges() */
	struct range_buf b = { *out, 0, *cap };
	int err;

	if (b.cap < want) {
		struct fib_range *m = realloc(b.r, want * sizeof(*m));

		if (!m)
			return -ENOMEM;
		b.r = m;
		b.cap = want;
	}
	err = ptree_walk_span(t, zero, 0, XFIB_NH_IDX_NONE, range_emit, &b);
	*out = b.r;
	*n = b.n;
	*cap = b.cap;
	return err;
}

int fib_span_ranges(struct rib *r, int fam, const __u8 *dst, unsigned int plen,
		    struct fib_range **out, size_t *n, size_t *cap)
{
	return fib_tree_ranges(&r->tree[fam][0], &r->tree[fam][1], dst, plen,
			       out, n, cap);
}

int fib_full_ranges(struct rib *r, int fam, struct fib_range **out, size_t *n,
		    size_t *cap)
{
	static const __u8 zero[16];
	/* A tree of k prefixes cuts the space into at most 2k + 1 ranges,
	 * and the merge ends at most one range per cut of either tree:
	 * room for all of them at once, rather than a copy per doubling
	 * (a full table's list is tens of MiB; untouched room costs no
	 * memory). */
	size_t want = 2 * (ptree_count(&r->tree[fam][0]) +
			   ptree_count(&r->tree[fam][1])) + 1;

	if (*cap < want) {
		struct fib_range *m = realloc(*out, want * sizeof(*m));

		if (!m)
			return -ENOMEM;
		*out = m;
		*cap = want;
	}
	return fib_span_ranges(r, fam, zero, 0, out, n, cap);
}

int fib_changed_ranges(struct rib *r, int fam, struct fib_range **out,
		       size_t *n)
{
	struct rib_family_state *rs = &r->fam[fam];
	struct range_buf all = { 0 };
	struct fib_range *span = NULL;
	size_t nspan = 0, cap = 0, i;
	int err = 0;

	for (i = 0; i < rs->nchg && !err; i++) {
		size_t k;

		err = fib_span_ranges(r, fam, rs->chg[i].dst, rs->chg[i].plen,
				      &span, &nspan, &cap);
		for (k = 0; k < nspan && !err; k++)
			err = range_push(&all, span[k].first, span[k].last,
					 span[k].nh);
	}
	free(span);
	if (err) {
		free(all.r);
		return err;
	}
	*out = all.r;
	*n = all.n;
	return 0;
}

void fib_to_bs4(const struct fib_range *r, size_t n, struct xfib_bs4_range *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i].start = (__u32)r[i].first;
		out[i].nh = r[i].nh;
	}
}

void fib_to_bs6(const struct fib_range *r, size_t n, struct xfib_bs6_range *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		out[i].hi = (__u64)(r[i].first >> 64);
		out[i].lo = (__u64)r[i].first;
		out[i].nh = r[i].nh;
		out[i].pad = 0;
	}
}
