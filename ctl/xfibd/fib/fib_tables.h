/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The tables policy rules reach besides main (include/xfib/tables.h):
 * each slot the RIB assigns (rib/rib_table.c) compiled into sorted ranges
 * in its family's pool and published by its descriptor (fib_tables.c).
 */
#ifndef XFIB_FIB_TABLES_H
#define XFIB_FIB_TABLES_H

#include "fib.h"

/* Maps the tables' maps; every slot a previous xfibd published is left to
 * the kernel until this one builds it. */
int fib_tables_init(struct fib *f);
void fib_tables_fini(struct fib *f);
/* Builds and publishes every slot whose table changed (after the RIB's
 * commit), and one whose instance failed to build once its backoff is
 * over (now: mono_ms()). */
int fib_tables_flush(struct fib *f, __u64 now);
/* Milliseconds until such a slot is due, -1 if none. */
int fib_tables_timeout(const struct fib *f, __u64 now);
/* Blocks of replaced tables wait for a grace period ... */
bool fib_tables_has_retired(const struct fib *f);
/* ... after which they are reused. */
void fib_tables_reclaim(struct fib *f);

#endif /* XFIB_FIB_TABLES_H */
