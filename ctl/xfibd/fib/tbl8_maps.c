// SPDX-License-Identifier: GPL-2.0-only
/* The chunk maps of a group pool. See tbl8_maps.h. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>

#include "xfib/tbl8_pool.h"
#include "tbl8_maps.h"

/* Chunks created, then linked with one outer map write (one grace
 * period), per round; also the descriptors open at a time. */
#define LINK_BATCH 256

static int chunk_create(const char *name)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	/* Must match bpf/lib/maps.h's xfib_tbl8_inner exactly: the outer
	 * map refuses any other inner map. */
	return bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32),
			      sizeof(__u64), XFIB_POOL_CHUNK_VALUES, &o);
}

static __u32 slot_key(__u32 slot, __u32 c)
{
	return slot * XFIB_POOL_SLOT_CHUNKS + c;
}

/* Chunks [first, first + n): created, mapped at their place in m->base,
 * linked; the descriptors are closed whatever happens. */
static int create_batch(struct tbl8_maps *m, __u32 first, __u32 n,
			int outer_fd, __u32 slot)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	__u32 keys[LINK_BATCH], count = n, i;
	int fds[LINK_BATCH], err = 0;

	for (i = 0; i < n; i++)
		fds[i] = -1;
	for (i = 0; i < n && !err; i++) {
		char *at = (char *)m->base + (size_t)(first + i) *
						     XFIB_POOL_CHUNK_BYTES;

		keys[i] = slot_key(slot, first + i);
		fds[i] = chunk_create(XFIB_POOL_CHUNK_NAME);
		if (fds[i] < 0 ||
		    mmap(at, XFIB_POOL_CHUNK_BYTES, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fds[i], 0) == MAP_FAILED)
			err = -errno;
	}
	if (!err && bpf_map_update_batch(outer_fd, keys, fds, &count, &bo))
		err = -errno;
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return err;
}

/* Chunks [m->nchunks, nchunks) in batches; m->nchunks counts those
 * linked. On error the chunks of the failed batch are unmapped. */
static int add_chunks(struct tbl8_maps *m, __u32 nchunks)
{
	__u32 n;
	int err = 0;

	for (; m->nchunks < nchunks; m->nchunks += n) {
		n = nchunks - m->nchunks < LINK_BATCH ? nchunks - m->nchunks :
							LINK_BATCH;
		err = create_batch(m, m->nchunks, n, m->outer_fd, m->slot);
		if (err) {
			/* Back to bare addresses. */
			mmap((char *)m->base + (size_t)m->nchunks *
						       XFIB_POOL_CHUNK_BYTES,
			     (size_t)n * XFIB_POOL_CHUNK_BYTES, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
				     MAP_FIXED, -1, 0);
			break;
		}
	}
	m->len = (size_t)m->nchunks * XFIB_POOL_CHUNK_BYTES;
	return m->nchunks < nchunks ? err : 0;
}

int tbl8_maps_create(struct tbl8_maps *m, __u32 nchunks, int outer_fd,
		     __u32 slot)
{
	int err;

	memset(m, 0, sizeof(*m));
	if (!nchunks || nchunks > XFIB_POOL_SLOT_CHUNKS)
		return -EINVAL;
	/* Addresses only, for as many chunks as the slot may ever hold:
	 * each chunk is mapped over its part of them. */
	m->reserved = (size_t)XFIB_POOL_SLOT_CHUNKS * XFIB_POOL_CHUNK_BYTES;
	m->base = mmap(NULL, m->reserved, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->base == MAP_FAILED) {
		m->base = NULL;
		return -errno;
	}
	m->outer_fd = outer_fd;
	m->slot = slot;
	err = add_chunks(m, nchunks);
	if (err)
		tbl8_maps_destroy(m);
	return err;
}

int tbl8_maps_grow(struct tbl8_maps *m, __u32 nchunks)
{
	if (!m->base || nchunks > XFIB_POOL_SLOT_CHUNKS)
		return -EINVAL;
	return add_chunks(m, nchunks); /* nothing to do if it has them */
}

void tbl8_maps_destroy(struct tbl8_maps *m)
{
	/* One munmap() takes the reservation and every chunk mapped in it. */
	if (m->base)
		munmap(m->base, m->reserved);
	memset(m, 0, sizeof(*m));
}

static int spare_get(struct tbl8_spare *s)
{
	struct bpf_map_info info = { 0 };
	__u32 len = sizeof(info);

	if (s->fd >= 0)
		return 0;
	s->fd = chunk_create(XFIB_POOL_SPARE_NAME);
	if (s->fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(s->fd, &info, &len)) {
		tbl8_spare_fini(s);
		return -errno;
	}
	s->id = info.id;
	return 0;
}

void tbl8_spare_fini(struct tbl8_spare *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->id = 0;
}

int tbl8_maps_clear(struct tbl8_spare *spare, int outer_fd, __u32 slot)
{
	LIBBPF_OPTS(bpf_map_batch_opts, bo);
	__u32 keys[XFIB_POOL_SLOT_CHUNKS], n = 0, c, id;
	int fds[XFIB_POOL_SLOT_CHUNKS], err;

	/*
	 * From userspace an outer map's value is the inner map's id. A
	 * pool's chunks are linked in order from the slot's first entry, and
	 * a cleared one holds the spare, so the entries in use end at the
	 * first empty one: reading on past it would cost, on the kernels
	 * that wait for a grace period on every element a syscall reads from
	 * an outer map (6.1 does, 6.12 does not), a grace period per entry
	 * for all 1024 of them, seconds on every release.
	 */
	for (c = 0; c < XFIB_POOL_SLOT_CHUNKS; c++) {
		__u32 key = slot_key(slot, c);

		if (bpf_map_lookup_elem(outer_fd, &key, &id))
			break; /* empty: the end of what any pool used */
		if (spare->fd >= 0 && id == spare->id)
			continue;
		keys[n++] = key;
	}
	if (!n)
		return 0;
	err = spare_get(spare);
	if (err) {
		/* No memory for the spare: empty them, a grace period each. */
		for (c = 0; c < n; c++)
			bpf_map_delete_elem(outer_fd, &keys[c]);
		return err;
	}
	for (c = 0; c < n; c++)
		fds[c] = spare->fd;
	return bpf_map_update_batch(outer_fd, keys, fds, &n, &bo) ? -errno : 0;
}
