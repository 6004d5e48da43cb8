// SPDX-License-Identifier: GPL-2.0-only
/*
 * lookupreads: an untimed pass of lookupbench that counts, per lookup,
 * the table reads (each call of the accessors the lookup headers are
 * written against) and the distinct 64-byte cache lines they touch, and,
 * over a whole key set, the distinct lines touched: its working set.
 * The accessors behave as dpl_priv.h's (reads past the end answer
 * nothing and touch no memory), so the answers are those of the timed
 * native loops, which lookupbench checks by comparing the sums.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lookupreads.h"

/* Lines one lookup may touch: the longest walk (dxr, poptrie6: about 20
 * reads) twice over, for entries across a line boundary. */
#define LR_LINES_MAX 64

static struct {
	__u32 reads;
	__u32 nlines;
	uintptr_t line[LR_LINES_MAX];
	bool overflow;
} cur;

/* Notes the lines of len bytes at p, once per lookup. */
static void note(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p / LR_LINE_BYTES;
	uintptr_t z = ((uintptr_t)p + len - 1) / LR_LINE_BYTES;
	__u32 i;

	for (; a <= z; a++) {
		for (i = 0; i < cur.nlines && cur.line[i] != a; i++)
			;
		if (i < cur.nlines)
			continue;
		if (cur.nlines == LR_LINES_MAX) {
			cur.overflow = true;
			return;
		}
		cur.line[cur.nlines++] = a;
	}
}

static void *lr_tbl_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;
	void *p;

	cur.reads++;
	if (idx >= t->n)
		return NULL;
	p = (char *)t->base + (size_t)idx * t->esz;
	note(p, t->esz);
	return p;
}

static __u32 lr_u32_at(void *tbl, __u32 idx)
{
	struct dpl_tbl *t = tbl;
	const __u32 *p;

	cur.reads++;
	if (idx >= t->n)
		return XFIB_NH_IDX_NONE;
	p = (const __u32 *)t->base + idx;
	note(p, sizeof(*p));
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

#define XFIB_TBL_AT(tbl, idx) lr_tbl_at((tbl), (idx))
#define XFIB_U32_AT(tbl, idx) lr_u32_at((tbl), (idx))
#include "xfib/lookup_bsearch.h"
#include "xfib/lookup_dir24.h"
#include "xfib/lookup_trie6.h"
#include "xfib/lookup_dxr.h"
#include "xfib/lookup_poptrie6.h"
#include "dpl_dispatch.h"

/* Key j's answer, as lookupbench.c's N_* macros compute it. */
static __u32 lookup(struct dpl *d, const __u8 *keys, __u32 j)
{
	return dpl_dispatch(d, keys + (size_t)j * (d->fam == XFIB_V4 ? 4 : 16));
}

static int cmp_line(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

/* The distinct lines among the n in v (sorted in place). */
static __u64 distinct(uintptr_t *v, size_t n)
{
	__u64 c = 0;
	size_t i;

	qsort(v, n, sizeof(*v), cmp_line);
	for (i = 0; i < n; i++)
		c += !i || v[i] != v[i - 1];
	return c;
}

int lr_count(struct dpl *d, const __u8 *keys, __u32 mask, __u64 n,
	     struct lr_stats *st)
{
	uintptr_t *all = NULL, *p;
	size_t nall = 0, cap = 0;
	__u64 i;

	memset(st, 0, sizeof(*st));
	switch (d->act.algo) {
	case XFIB_ALGO_BSEARCH4:
	case XFIB_ALGO_DIR24_8:
	case XFIB_ALGO_DXR:
	case XFIB_ALGO_BSEARCH6:
	case XFIB_ALGO_TRIE6:
	case XFIB_ALGO_POPTRIE6:
		break;
	default:
		return -ENOTSUP;
	}
	for (i = 0; i < n; i++) {
		memset(&cur, 0, sizeof(cur));
		st->sum += lookup(d, keys, i & mask);
		if (cur.overflow) {
			free(all);
			return -E2BIG;
		}
		st->reads += cur.reads;
		if (cur.reads > st->reads_max)
			st->reads_max = cur.reads;
		st->lines += cur.nlines;
		if (nall + cur.nlines > cap) {
			cap = cap ? 2 * cap : 65536;
			p = realloc(all, cap * sizeof(*all));
			if (!p) {
				free(all);
				return -ENOMEM;
			}
			all = p;
		}
		memcpy(all + nall, cur.line, cur.nlines * sizeof(*all));
		nall += cur.nlines;
	}
	st->lookups = n;
	st->ws_lines = distinct(all, nall);
	free(all);
	return 0;
}
