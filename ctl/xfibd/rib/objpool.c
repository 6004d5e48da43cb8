// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "objpool.h"

#define CHUNK_BYTES (2u << 20)
/* Pages are made present this many bytes at a time, ahead of the objects
 * carved from them (objpool_zalloc); a chunk is whole steps of it. */
#define POPULATE_BYTES (256u << 10)
_Static_assert(CHUNK_BYTES % POPULATE_BYTES == 0, "a chunk is whole populate steps");

#if defined(__SANITIZE_ADDRESS__)
#define OBJPOOL_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OBJPOOL_MALLOC 1
#endif
#endif

void objpool_init(struct objpool *p, size_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = (size + sizeof(void *) - 1) & ~(sizeof(void *) - 1);
}

#ifdef OBJPOOL_MALLOC

void *objpool_zalloc(struct objpool *p)
{
	void *o = calloc(1, p->size);

	p->live += !!o;
	return o;
}

void objpool_free(struct objpool *p, void *obj)
{
	if (!obj)
		return;
	p->live--;
	free(obj);
}

#else

static int chunk_add(struct objpool *p)
{
	void *c;

	if (p->nchunks == p->chunks_cap) {
		size_t cap = p->chunks_cap ? 2 * p->chunks_cap : 16;
		void **a = realloc(p->chunks, cap * sizeof(*a));

		if (!a)
			return -1;
		p->chunks = a;
		p->chunks_cap = cap;
	}
	if (posix_memalign(&c, CHUNK_BYTES, CHUNK_BYTES))
		return -1;
	p->chunks[p->nchunks++] = c;
	p->next = c;
	p->end = (char *)c + CHUNK_BYTES / p->size * p->size;
	return 0;
}

void *objpool_zalloc(struct objpool *p)
{
	void *o = p->free;

	if (o) {
		memcpy(&p->free, o, sizeof(void *));
	} else {
		if (p->next == p->end && chunk_add(p))
			return NULL;
		o = p->next;
		p->next += p->size;
		/*
		 * The object ends in a step it does not start in (a chunk
		 * starts on a step): make that step's pages present with one
		 * madvise(MADV_POPULATE_WRITE) (Linux 5.14) rather than a page
		 * fault per 4 KiB page as objects are carved. A full table
		 * carves some 170 MiB of objects, and on a virtual machine
		 * each fault is dear. Where the kernel does not know the call,
		 * the pages fault in as before.
		 */
		if (((uintptr_t)o - 1) / POPULATE_BYTES !=
		    ((uintptr_t)p->next - 1) / POPULATE_BYTES)
			madvise((void *)(((uintptr_t)p->next - 1) &
					 ~(uintptr_t)(POPULATE_BYTES - 1)),
				POPULATE_BYTES, MADV_POPULATE_WRITE);
	}
	memset(o, 0, p->size);
	p->live++;
	return o;
}

void objpool_free(struct objpool *p, void *obj)
{
	if (!obj)
		return;
	memcpy(obj, &p->free, sizeof(void *));
	p->free = obj;
	p->live--;
}

#endif

void objpool_fini(struct objpool *p)
{
	size_t i;

	for (i = 0; i < p->nchunks; i++)
		free(p->chunks[i]);
	free(p->chunks);
	objpool_init(p, p->size);
}

size_t objpool_bytes(const struct objpool *p)
{
#ifdef OBJPOOL_MALLOC
	return p->live * p->size;
#else
	return p->nchunks * (size_t)CHUNK_BYTES;
#endif
}
