/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A buddy allocator of power-of-two blocks in a pool of 2^log2size
 * entries: where each table's ranges go (fib_tables.c). Tables are few
 * (at most XFIB_TABLE_SLOTS - 1 per family), so the free lists are short
 * arrays searched in full.
 */
#ifndef XFIB_FIB_TPOOL_H
#define XFIB_FIB_TPOOL_H

#include <linux/types.h>

#define FIB_TPOOL_ORDERS 32

struct fib_tpool {
	__u32 log2size;
	__u32 *free[FIB_TPOOL_ORDERS]; /* offsets of free blocks, by order */
	__u32 nfree[FIB_TPOOL_ORDERS], cap[FIB_TPOOL_ORDERS];
};

/* The whole pool free; -ENOMEM. */
int fib_tpool_init(struct fib_tpool *p, __u32 log2size);
void fib_tpool_fini(struct fib_tpool *p);
/* A block of 2^order entries at *off; -ENOSPC if none is free. */
int fib_tpool_alloc(struct fib_tpool *p, __u32 order, __u32 *off);
/* Gives back what fib_tpool_alloc gave, merged with its free buddies. */
void fib_tpool_free(struct fib_tpool *p, __u32 off, __u32 order);

#endif /* XFIB_FIB_TPOOL_H */
