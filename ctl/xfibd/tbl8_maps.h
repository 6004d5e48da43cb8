/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF side of a dir24_8 / trie6 group pool: its chunk maps
 * (include/xfib/tbl8_pool.h), mmap()ed back to back so that the update
 * side (grpool.h, dir24.c, trie6.c) sees one array of groups, and their
 * entries in the family's outer map.
 *
 * A pool's chunks go into their slot's entries of the outer map when they
 * are created: that slot is the standby one (fib.c builds only there), so
 * no packet reads them before the instance is published. A chunk's
 * descriptor is closed as soon as the outer map holds it; the mapping
 * keeps the map alive for the daemon, so a pool of any size costs no
 * descriptors. Every write to an outer map waits for an RCU grace period
 * (milliseconds), per syscall, so chunks are linked and unlinked in
 * batches.
 */
#ifndef XFIB_TBL8_MAPS_H
#define XFIB_TBL8_MAPS_H

#include <stddef.h>
#include <linux/types.h>

struct tbl8_maps {
	void *base;     /* nchunks chunks, back to back, read-write */
	size_t len;
	__u32 nchunks;
};

/* Placeholder chunk for the entries of retired pools: one per daemon. */
struct tbl8_spare {
	int fd;         /* -1 until first needed */
	__u32 id;
};

/*
 * Creates nchunks zeroed chunk maps, maps them and puts them into slot
 * `slot` of the outer map outer_fd. On error nothing is left mapped, and
 * the slot's entries may hold some of the new chunks until the next
 * tbl8_maps_clear(). Returns 0 or -errno.
 */
int tbl8_maps_create(struct tbl8_maps *m, __u32 nchunks, int outer_fd,
		     __u32 slot);
/* Unmaps the chunks (the outer map may still hold them). */
void tbl8_maps_destroy(struct tbl8_maps *m);
/*
 * Releases every chunk the outer map holds in slot `slot` (the daemon's
 * own, or a previous daemon's) by replacing them with the spare in one
 * batch: for a slot no packet reads any more. Returns 0 or -errno.
 */
int tbl8_maps_clear(struct tbl8_spare *spare, int outer_fd, __u32 slot);
void tbl8_spare_fini(struct tbl8_spare *spare);

#endif /* XFIB_TBL8_MAPS_H */
