/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The router's flow hash seed (struct xfib_hash_seed): kept in the pinned
 * map, drawn at random on the first start, or set by the operator.
 */
#ifndef XFIBD_HASH_SEED_H
#define XFIBD_HASH_SEED_H

#include <stdbool.h>
#include <linux/types.h>

struct xfib_fwd_bpf;

/*
 * Before anything is forwarded by the mirror: with set, makes value the
 * seed; otherwise keeps the pinned one, or draws one if there is none
 * yet. 0 or -errno after saying why.
 */
int hash_seed_init(struct xfib_fwd_bpf *skel, bool set, __u32 value);

#endif /* XFIBD_HASH_SEED_H */
