// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prefixes to bsearch ranges.
 *
 * A set of prefixes of one family is laminar: two prefixes are either
 * disjoint or one contains the other. Sorted by (first address ascending,
 * length ascending), every prefix comes after all the prefixes that
 * contain it, so one left-to-right sweep with a stack of "open" prefixes
 * sees, at any address, exactly the chain of prefixes covering it: the
 * stack, outermost at the bottom. The sweep keeps a cursor, the first
 * address whose nexthop has not been emitted yet, and emits a range each
 * time the covering chain changes:
 *
 *  - before a prefix is pushed, every open prefix that ends before it
 *    starts is popped; the addresses from the cursor to the end of each
 *    popped prefix belong to the chain as it was with that prefix on top;
 *  - the addresses from the cursor to just before the new prefix belong
 *    to whatever is still open (or to no route);
 *  - after the last prefix, the stack is drained the same way and the
 *    rest of the space gets no route.
 *
 * The winner for a chain is the entry of highest rank, where a prefix of
 * the override list outranks any prefix of the main list and, within a
 * list, a longer prefix outranks a shorter one. Each stack entry records
 * the winner of the chain up to and including itself, so the winner of
 * the whole chain is read off the top in O(1) and a push costs one
 * comparison. Emitting a range whose nexthop equals the previous one just
 * extends the previous one, which is the merge of adjacent ranges.
 *
 * Addresses are handled as unsigned __int128 for both families so a
 * single sweep serves both; IPv4 simply never uses the upper 96 bits.
 * The cost is the sort, O(n log n); the sweep is O(n) because each prefix
 * is pushed and popped once, and the stack never holds more than one
 * prefix per length per list.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ranges.h"

typedef unsigned __int128 u128;

#define V4_BITS 32
#define V6_BITS 128

/* One prefix, normalised: host bits cleared, first address in host order. */
struct rpfx {
	u128 start;
	__u32 nh;
	__u8 plen;
	__u8 over; /* 1: from the override list */
};

struct open_pfx {
	u128 end;       /* last address of the prefix */
	__u32 best_nh;  /* winner of the chain up to this entry */
	__u32 best_rank;
};

/* Two chains of nested prefixes, one per list, each at most bits+1 deep. */
#define STACK_MAX (2 * (V6_BITS + 1))

struct sweep {
	unsigned int bits;
	struct xfib_bs4_range *out4;
	struct xfib_bs6_range *out6;
	size_t cap;
	size_t n;
	u128 cursor;
	bool full; /* the cursor went past the last address of the space */
	struct open_pfx stack[STACK_MAX];
	unsigned int depth;
};

static u128 space_last(unsigned int bits)
{
	/* (1 << 128) - 1 would shift by the type's width: spell it out. */
	return bits == V6_BITS ? ~(u128)0 : ((u128)1 << bits) - 1;
}

/* Host bits of a prefix: the addresses it spans, minus one. */
static u128 host_mask(unsigned int bits, unsigned int plen)
{
	if (plen == 0)
		return space_last(bits);
	return ((u128)1 << (bits - plen)) - 1;
}

static u128 addr_to_host(const __u8 *addr, unsigned int bits)
{
	u128 v = 0;
	unsigned int i;

	for (i = 0; i < bits / 8; i++)
		v = (v << 8) | addr[i];
	return v;
}

static unsigned int rank(const struct rpfx *p)
{
	/* Any override prefix beats any main prefix, whatever the lengths. */
	return (p->over ? 256u : 0u) + p->plen;
}

static int rpfx_cmp(const void *a, const void *b)
{
	const struct rpfx *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Shorter first: a prefix must be pushed before those it contains. */
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	/*
	 * qsort is not stable: break every tie so equal keys cannot come
	 * out in an order that depends on the input's.
	 */
	if (x->over != y->over)
		return x->over < y->over ? -1 : 1;
	if (x->nh != y->nh)
		return x->nh < y->nh ? -1 : 1;
	return 0;
}

static __u32 last_nh(const struct sweep *s)
{
	return s->out4 ? s->out4[s->n - 1].nh : s->out6[s->n - 1].nh;
}

/* Gives the addresses from the cursor on (up to the next emit) to nh. */
static int emit(struct sweep *s, __u32 nh)
{
	/* Same nexthop as the range before: that range just grows. */
	if (s->n && last_nh(s) == nh)
		return 0;
	if (s->n >= s->cap)
		return -ENOSPC;
	if (s->out4) {
		s->out4[s->n].start = (__u32)s->cursor;
		s->out4[s->n].nh = nh;
	} else {
		s->out6[s->n].hi = (__u64)(s->cursor >> 64);
		s->out6[s->n].lo = (__u64)s->cursor;
		s->out6[s->n].nh = nh;
		s->out6[s->n].pad = 0;
	}
	s->n++;
	return 0;
}

/* Closes the top of the stack: the cursor up to its end goes to its chain. */
static int pop(struct sweep *s)
{
	const struct open_pfx *top = &s->stack[--s->depth];
	int err;

	/* A nested prefix ending at the same address already got there. */
	if (s->full || s->cursor > top->end)
		return 0;
	err = emit(s, top->best_nh);
	if (err)
		return err;
	if (top->end == space_last(s->bits))
		s->full = true;
	else
		s->cursor = top->end + 1;
	return 0;
}

static int push(struct sweep *s, const struct rpfx *p)
{
	struct open_pfx *e;
	__u32 r = rank(p);
	int err;

	while (s->depth && s->stack[s->depth - 1].end < p->start) {
		err = pop(s);
		if (err)
			return err;
	}
	/* The gap before p belongs to what is still open, if anything. */
	if (s->cursor < p->start) {
		err = emit(s, s->depth ? s->stack[s->depth - 1].best_nh :
					 XFIB_NH_IDX_NONE);
		if (err)
			return err;
		s->cursor = p->start;
	}
	/*
	 * Without duplicates within a list the chain holds at most one
	 * prefix per length per list; guard the array all the same.
	 */
	if (s->depth >= STACK_MAX)
		return -EINVAL;
	e = &s->stack[s->depth];
	e->end = p->start | host_mask(s->bits, p->plen);
	if (s->depth && s->stack[s->depth - 1].best_rank > r) {
		e->best_nh = s->stack[s->depth - 1].best_nh;
		e->best_rank = s->stack[s->depth - 1].best_rank;
	} else {
		e->best_nh = p->nh;
		e->best_rank = r;
	}
	s->depth++;
	return 0;
}

static int collect(struct rpfx *dst, const struct xfib_pfx *src, size_t n,
		   unsigned int bits, bool over)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (src[i].plen > bits)
			return -EINVAL;
		dst[i].start = addr_to_host(src[i].addr, bits) &
			       ~host_mask(bits, src[i].plen);
		dst[i].plen = src[i].plen;
		dst[i].over = over;
		dst[i].nh = src[i].nh;
	}
	return 0;
}

static int build(const struct xfib_pfx *main_pfx, size_t nmain,
		 const struct xfib_pfx *over_pfx, size_t nover,
		 unsigned int bits, struct sweep *s)
{
	struct rpfx *v;
	size_t n = nmain + nover, i;
	int err;

	if (n < nmain || n >= SIZE_MAX / sizeof(*v))
		return -ENOMEM;
	/* malloc(0) may return NULL; one spare entry keeps that case simple. */
	v = malloc((n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	err = collect(v, main_pfx, nmain, bits, false);
	if (!err)
		err = collect(v + nmain, over_pfx, nover, bits, true);
	if (err)
		goto out;

	qsort(v, n, sizeof(*v), rpfx_cmp);

	for (i = 0; i < n; i++) {
		/*
		 * A duplicate within one list has no defined winner: reject
		 * it rather than let the sort order pick one.
		 */
		if (i && v[i].start == v[i - 1].start &&
		    v[i].plen == v[i - 1].plen && v[i].over == v[i - 1].over) {
			err = -EINVAL;
			goto out;
		}
		err = push(s, &v[i]);
		if (err)
			goto out;
	}
	while (s->depth) {
		err = pop(s);
		if (err)
			goto out;
	}
	if (!s->full)
		err = emit(s, XFIB_NH_IDX_NONE);
	if (!err)
		err = (int)s->n;
out:
	free(v);
	return err;
}

int xfib_ranges4_build(const struct xfib_pfx *main, size_t nmain,
		       const struct xfib_pfx *over, size_t nover,
		       struct xfib_bs4_range *out, size_t cap)
{
	struct sweep *s;
	int ret;

	/* The count is returned as an int. */
	if (cap > INT_MAX)
		cap = INT_MAX;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->bits = V4_BITS;
	s->out4 = out;
	s->cap = cap;
	ret = build(main, nmain, over, nover, V4_BITS, s);
	free(s);
	return ret;
}

int xfib_ranges6_build(const struct xfib_pfx *main, size_t nmain,
		       const struct xfib_pfx *over, size_t nover,
		       struct xfib_bs6_range *out, size_t cap)
{
	struct sweep *s;
	int ret;

	if (cap > INT_MAX)
		cap = INT_MAX;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->bits = V6_BITS;
	s->out6 = out;
	s->cap = cap;
	ret = build(main, nmain, over, nover, V6_BITS, s);
	free(s);
	return ret;
}

int xfib_ranges_build_decoded(unsigned int bits, const struct xfib_pfx *main,
			      size_t nmain, const struct xfib_pfx *over,
			      size_t nover, unsigned __int128 **start,
			      __u32 **nh)
{
	size_t cap = 2 * (nmain + nover) + 1, i;
	struct xfib_bs4_range *r4 = NULL;
	struct xfib_bs6_range *r6 = NULL;
	int n;

	*start = NULL;
	*nh = NULL;
	if (bits == V4_BITS) {
		r4 = malloc(cap * sizeof(*r4));
		n = r4 ? xfib_ranges4_build(main, nmain, over, nover, r4, cap) :
			 -ENOMEM;
	} else {
		r6 = malloc(cap * sizeof(*r6));
		n = r6 ? xfib_ranges6_build(main, nmain, over, nover, r6, cap) :
			 -ENOMEM;
	}
	if (n > 0) {
		*start = malloc(n * sizeof(**start));
		*nh = malloc(n * sizeof(**nh));
		if (!*start || !*nh) {
			free(*start);
			free(*nh);
			*start = NULL;
			*nh = NULL;
			n = -ENOMEM;
		}
	}
	for (i = 0; n > 0 && i < (size_t)n; i++) {
		if (r4) {
			(*start)[i] = r4[i].start;
			(*nh)[i] = r4[i].nh;
		} else {
			(*start)[i] = (unsigned __int128)r6[i].hi << 64 | r6[i].lo;
			(*nh)[i] = r6[i].nh;
		}
	}
	free(r4);
	free(r6);
	return n;
}

size_t xfib_ranges_at(const unsigned __int128 *start, size_t n,
		      unsigned __int128 a)
{
	size_t lo = 0, hi = n; /* start[lo] <= a < start[hi] */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (start[mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void xfib_ranges_clip(const unsigned __int128 *start, size_t n, size_t i,
		      unsigned __int128 first, unsigned __int128 last,
		      unsigned __int128 *cfirst, unsigned __int128 *clast)
{
	*cfirst = start[i] > first ? start[i] : first;
	*clast = i + 1 < n && start[i + 1] - 1 < last ? start[i + 1] - 1 : last;
}

/* Smallest log2n with 2^log2n >= n. */
static unsigned int log2_ceil(size_t n)
{
	unsigned int l = 0;

	while (l < sizeof(size_t) * 8 - 1 && ((size_t)1 << l) < n)
		l++;
	return l;
}

unsigned int xfib_ranges4_pad(struct xfib_bs4_range *r, size_t n)
{
	unsigned int l = log2_ceil(n);
	size_t i;

	/* The repeats share the last start, so the search may land on any. */
	for (i = n; n && i < ((size_t)1 << l); i++)
		r[i] = r[n - 1];
	return l;
}

unsigned int xfib_ranges6_pad(struct xfib_bs6_range *r, size_t n)
{
	unsigned int l = log2_ceil(n);
	size_t i;

	for (i = n; n && i < ((size_t)1 << l); i++)
		r[i] = r[n - 1];
	return l;
}
