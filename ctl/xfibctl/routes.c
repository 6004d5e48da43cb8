// SPDX-License-Identifier: GPL-2.0-only
/* xfibctl routes: the dataplane's live lookup table, written as prefixes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "dplookup.h"
#include "output.h"
#include "xfibctl.h"

struct range_list {
	struct {
		dpl_addr start;
		__u32 nh;
	} *v;
	size_t n, cap;
};

static int range_add(dpl_addr start, __u32 nh, void *arg)
{
	struct range_list *l = arg;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4096;
		void *p = realloc(l->v, cap * sizeof(*l->v));

		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n].start = start;
	l->v[l->n++].nh = nh;
	return 0;
}

/* The ranges of the family's live instance, consistent with one
 * generation. */
static int routes_ranges(struct dpl *d, struct range_list *l)
{
	int tries, err;

	for (tries = 0; tries < 10; tries++) {
		l->n = 0;
		err = dpl_walk(d, range_add, l);
		if (err)
			return err;
		err = dpl_refresh(d);
		if (err <= 0)
			return err;
	}
	return -EBUSY;
}

/* The range holding address x (ranges start at 0 and are sorted). */
static size_t range_of(const struct range_list *l, dpl_addr x)
{
	size_t lo = 0, hi = l->n - 1;

	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;

		if (l->v[mid].start <= x)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Addresses of the block [a, last] whose answer is nh. */
static dpl_addr block_share(const struct range_list *l, size_t i, size_t j,
			    dpl_addr a, dpl_addr last, __u32 nh)
{
	dpl_addr sum = 0;
	size_t m;

	for (m = i; m <= j; m++)
		if (l->v[m].nh == nh)
			sum += (m == j ? last : l->v[m + 1].start - 1) -
			       (m == i ? a : l->v[m].start) + 1;
	return sum;
}

/* One prefix of the output, in words. */
struct route_row {
	char prefix[INET6_ADDRSTRLEN + 4]; /* "198.18.0.0/24" */
	__u32 idx;
	struct xfib_nexthop nh;
};

static void route_text(const struct route_row *w)
{
	char ans[160];

	nexthop_str(&w->nh, w->idx, ans, sizeof(ans));
	printf("%s %s\n", w->prefix, ans);
}

static json_object *route_json(const struct route_row *w)
{
	json_object *o = json_object_new_object();

	js_set(o, "prefix", js_str(w->prefix));
	js_set(o, "nexthop", js_u64(w->idx));
	js_set(o, "kind", js_str(dpl_kind_name(w->nh.kind)));
	return o;
}

struct cover {
	struct ctl *c;
	struct dpl *d;
	const struct range_list *l;
	unsigned int bits;
	struct out_list *list; /* JSON */
};

/* The prefix a/plen and its nexthop idx, written out. */
static void cover_emit(struct cover *cv, dpl_addr a, unsigned int plen, __u32 idx)
{
	struct route_row w;
	__u8 b[16] = { 0 };
	size_t n;
	int i;

	if (cv->d->fam == XFIB_V4) {
		for (i = 0; i < 4; i++)
			b[i] = (__u8)(a >> (24 - 8 * i));
	} else {
		for (i = 0; i < 16; i++)
			b[i] = (__u8)(a >> (120 - 8 * i));
	}
	addr_str(fam_af(cv->d->fam), b, w.prefix, sizeof(w.prefix));
	n = strlen(w.prefix);
	snprintf(w.prefix + n, sizeof(w.prefix) - n, "/%u", plen);
	w.idx = idx;
	dpl_nexthop(cv->d, idx, &w.nh);
	if (cv->c->json)
		out_list_add(cv->list, route_json(&w));
	else
		route_text(&w);
}

/*
 * The table as nested prefixes, like routes. The block of 2^k addresses
 * at a takes the answer of its first or its last address, whichever
 * covers more of it, and gets a prefix when that differs from what the
 * enclosing prefix gives; then each half is done the same way. A block
 * reaching into addresses without a route gets none (such holes cannot
 * be written as routes). Longest-prefix match over the output gives
 * exactly the dataplane's answers; a covering route that more specific
 * ones split may come out as several prefixes.
 */
static void cover_block(struct cover *cv, dpl_addr a, unsigned int k, __u32 outer)
{
	const struct range_list *l = cv->l;
	dpl_addr last = a + (k == 128 ? ~(dpl_addr)0 : ((dpl_addr)1 << k) - 1);
	size_t i = range_of(l, a), j = range_of(l, last);
	__u32 first_nh = l->v[i].nh, last_nh = l->v[j].nh, nh;

	nh = block_share(l, i, j, a, last, last_nh) >
			     block_share(l, i, j, a, last, first_nh) ?
		     last_nh : first_nh;
	if (outer == XFIB_NH_IDX_NONE &&
	    (first_nh == XFIB_NH_IDX_NONE || last_nh == XFIB_NH_IDX_NONE))
		nh = outer;
	if (nh != outer) {
		outer = nh;
		cover_emit(cv, a, cv->bits - k, nh);
	}
	if (i == j)
		return;
	cover_block(cv, a, k - 1, outer);
	cover_block(cv, a + ((dpl_addr)1 << (k - 1)), k - 1, outer);
}

/* One family's table into cv's output. */
static int routes_family(struct cover *cv, struct xfib_fwd_bpf *skel, int fam,
			 struct range_list *l)
{
	struct dpl d;
	int err;

	err = dpl_open(&d, skel, fam);
	if (err) {
		err_cmd("open the %s lookup table: %s", fam_name(fam), strerror(-err));
		return err;
	}
	err = routes_ranges(&d, l);
	if (err) {
		err_cmd("read the %s lookup table: %s", fam_name(fam), strerror(-err));
	} else if (l->n) {
		cv->d = &d;
		cv->l = l;
		cv->bits = fam == XFIB_V4 ? 32 : 128;
		cover_block(cv, 0, cv->bits, XFIB_NH_IDX_NONE);
	}
	dpl_close(&d);
	return err;
}

int cmd_routes(struct ctl *c, int argc, char **argv)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct range_list l = { 0 };
	struct out_list list;
	struct cover cv = { .c = c, .list = &list };
	int fam, err, jerr;

	err = open_dataplane(c, 0, &skel);
	if (err)
		return err;
	if (c->json)
		out_list_begin(&list);
	for (fam = 0; fam < XFIB_FAMILIES && !err; fam++)
		if (c->fam < 0 || fam == c->fam)
			err = routes_family(&cv, skel, fam, &l);
	if (c->json) {
		jerr = out_list_end(&list);
		err = err ?: jerr;
	}
	free(l.v);
	xfib_fwd_bpf__destroy(skel);
	return err;
}
