/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The BPF side of a dir24_8 / trie6 group pool: its chunk maps
 * (include/xfib/tbl8_pool.h), mmap()ed back to back so that the update
 * side (grpool.h, dir24.c, trie6.c) sees one array of groups, and their
 * entries in the family's outer map.
 *
 * A pool's chunks go into their slot's entries of the outer map when they
 * are created: that slot is the standby one (fib_publish.c builds only
 * there), so no packet reads them before the instance is published. A live pool
 * grows in place: new chunks go into its slot's next entries, and only
 * then are their groups handed out, so no table entry refers to a chunk
 * the outer map does not hold yet. The addresses of a whole slot's
 * chunks are reserved up front, so the mapping stays one array. A chunk's
 * descriptor is closed as soon as the outer map holds it; the mapping
 * keeps the map alive for the daemon, so a pool of any size costs no
 * descriptors. Every write to an outer map waits for an RCU grace period
 * (milliseconds), per syscall, so chunks are linked and unlinked in
 * batches. Older kernels (6.1; not 6.12) wait once per element instead,
 * reads included, so nothing here reads or writes more of a slot's
 * entries than its pools used.
 */
#ifndef XFIB_TBL8_MAPS_H
#define XFIB_TBL8_MAPS_H

#include <stddef.h>
#include <linux/types.h>

struct tbl8_maps {
	void *base;     /* nchunks chunks, back to back, read-write */
	size_t len;     /* bytes of the nchunks chunks */
	size_t reserved; /* addresses for XFIB_POOL_SLOT_CHUNKS chunks */
	__u32 nchunks;
	int outer_fd;   /* the outer map (not owned) and slot they are in */
	__u32 slot;
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
/*
 * Adds chunks up to nchunks (at most XFIB_POOL_SLOT_CHUNKS), zeroed,
 * mapped after the others and linked into the slot's next entries before
 * it returns. On error m->nchunks counts the chunks added and linked
 * before it (batches of them); the outer map may also hold some of the
 * failed batch's chunks, which nothing refers to. Returns 0 or -errno.
 */
int tbl8_maps_grow(struct tbl8_maps *m, __u32 nchunks);
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
