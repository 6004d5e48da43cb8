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

int fib_span_ranges(struct rib *r, int fam, const __u8 *dst, unsigned int plen,
		    struct fib_range **out, size_t *n, size_t *cap)
{
	struct range_buf loc = { 0 }, mn = { 0 }, res = { *out, 0, *cap };
	size_t i = 0, j = 0;
	int err;

	/* The kernel consults its local table before the mirrored one:
	 * wherever a local prefix covers an address, it answers. */
	err = ptree_walk_span(&r->tree[fam][1], dst, plen, NH_UNCOVERED,
			      range_emit, &loc);
	err = err ?: ptree_walk_span(&r->tree[fam][0], dst, plen,
				     XFIB_NH_IDX_NONE, range_emit, &mn);
	while (!err && i < loc.n && j < mn.n) {
		const struct fib_range *a = &loc.r[i], *b = &mn.r[j];
		xfib_u128 first = a->first > b->first ? a->first : b->first;
		xfib_u128 last = a->last < b->last ? a->last : b->last;

		err = range_push(&res, first, last,
				 a->nh != NH_UNCOVERED ? a->nh : b->nh);
		if (a->last == last)
			i++;
		if (b->last == last)
			j++;
	}
	free(loc.r);
	free(mn.r);
	*out = res.r;
	*n = res.n;
	*cap = res.cap;
	return err;
}

int fib_full_ranges(struct rib *r, int fam, struct fib_range **out, size_t *n,
		    size_t *cap)
{
	static const __u8 zero[16];

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
