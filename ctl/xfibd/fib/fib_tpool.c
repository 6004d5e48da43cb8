// SPDX-License-Identifier: GPL-2.0-only
/* Power-of-two blocks of a table pool. See fib_tpool.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fib_tpool.h"

static int push(struct fib_tpool *p, __u32 order, __u32 off)
{
	if (p->nfree[order] == p->cap[order]) {
		__u32 cap = p->cap[order] ? 2 * p->cap[order] : 8;
		__u32 *v = realloc(p->free[order], cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->free[order] = v;
		p->cap[order] = cap;
	}
	p->free[order][p->nfree[order]++] = off;
	return 0;
}

/* Takes off out of order's free list; false if it is not there. */
static int take(struct fib_tpool *p, __u32 order, __u32 off)
{
	__u32 i;

	for (i = 0; i < p->nfree[order]; i++) {
		if (p->free[order][i] == off) {
			p->free[order][i] = p->free[order][--p->nfree[order]];
			return 1;
		}
	}
	return 0;
}

int fib_tpool_init(struct fib_tpool *p, __u32 log2size)
{
	memset(p, 0, sizeof(*p));
	if (log2size >= FIB_TPOOL_ORDERS)
		return -EINVAL;
	p->log2size = log2size;
	return push(p, log2size, 0);
}

void fib_tpool_fini(struct fib_tpool *p)
{
	__u32 i;

	for (i = 0; i < FIB_TPOOL_ORDERS; i++)
		free(p->free[i]);
	memset(p, 0, sizeof(*p));
}

int fib_tpool_alloc(struct fib_tpool *p, __u32 order, __u32 *off)
{
	__u32 k;

	if (order > p->log2size)
		return -ENOSPC;
	for (k = order; k <= p->log2size && !p->nfree[k]; k++)
		;
	if (k > p->log2size)
		return -ENOSPC;
	*off = p->free[k][--p->nfree[k]];
	/* Split down to the order asked for, freeing the upper halves. The
	 * lists only grow by one here, and were as long before the block
	 * was split off: no room, and the block goes back whole. */
	while (k > order) {
		k--;
		if (push(p, k, *off + (1u << k))) {
			fib_tpool_free(p, *off, k + 1);
			return -ENOMEM;
		}
	}
	return 0;
}

void fib_tpool_free(struct fib_tpool *p, __u32 off, __u32 order)
{
	while (order < p->log2size && take(p, order, off ^ (1u << order))) {
		off &= ~(1u << order);
		order++;
	}
	/* Cannot fail for want of memory: the list held this block's
	 * entry, or its parts', before. Should it, the block is lost to
	 * the pool, not to correctness. */
	push(p, order, off);
}
