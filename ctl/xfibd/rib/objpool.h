/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A pool of fixed-size objects (the RIB's routes, their variants and
 * prefixes): carved from 2 MiB chunks, freed objects reused first.
 *
 * Why not malloc: a full table is millions of such objects, and malloc
 * adds 16 bytes to each (a sixth of a route's memory). Chunks are not
 * returned to the system before objpool_fini: a table that shrinks keeps
 * its memory for the next one. Huge pages (MADV_HUGEPAGE) were measured
 * and not kept: on a 1.25M-route cold start they saved 0.4 s of user
 * time and cost 1.2 s of system time (compaction on the fault path).
 *
 * Built with AddressSanitizer, each object is its own calloc(), so that
 * use after free is still caught.
 */
#ifndef XFIB_OBJPOOL_H
#define XFIB_OBJPOOL_H

#include <stddef.h>

struct objpool {
	size_t size;        /* bytes per object, rounded up to a pointer */
	void *free;         /* freed objects, linked through their first word */
	char *next, *end;   /* the unused rest of the newest chunk */
	void **chunks;
	size_t nchunks, chunks_cap;
	size_t live;        /* objects allocated and not freed */
};

void objpool_init(struct objpool *p, size_t size);
/* A zeroed object; NULL when out of memory. */
void *objpool_zalloc(struct objpool *p);
void objpool_free(struct objpool *p, void *obj);
/* Releases every chunk: the objects still live are gone too (with
 * AddressSanitizer, the caller must have freed them). */
void objpool_fini(struct objpool *p);
/* Memory the pool holds. */
size_t objpool_bytes(const struct objpool *p);

#endif /* XFIB_OBJPOOL_H */
