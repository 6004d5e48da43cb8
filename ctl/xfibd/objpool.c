// SPDX-License-Identifier: GPL-2.0-only
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "objpool.h"

#define CHUNK_BYTES (2u << 20)
/* Pages are faulted in this many bytes at a time, ahead of the objects
 * carved from them (objpool_zalloc). */
#define POPULATE_BYTES (256u << 10)

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
	p->populated = c;
	p->end = (char *)c + CHUNK_BYTES / p->size * p->size;
	return 0;
}

/*
 * Makes the chunk's pages up to at least upto present, POPULATE_BYTES at
 * a time, by one madvise(MADV_POPULATE_WRITE) call (Linux 5.14) instead
 * of a page fault per 4 KiB page as objects are carved: a full table
 * carves some 170 MiB of objects, and on a virtual machine each fault is
 * dear. Where the kernel does not know the call, the pages fault in as
 * before.
 */
static void populate(struct objpool *p, const char *upto)
{
	char *chunk_end = (char *)p->chunks[p->nchunks - 1] + CHUNK_BYTES;

	while (p->populated < upto && p->populated < chunk_end) {
		size_t n = POPULATE_BYTES;

		if ((size_t)(chunk_end - p->populated) < n)
			n = chunk_end - p->populated;
		if (madvise(p->populated, n, MADV_POPULATE_WRITE))
			p->populated = chunk_end; /* unknown here: fault as before */
		else
			p->populated += n;
	}
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
		if (p->next > p->populated)
			populate(p, p->next);
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
