// SPDX-License-Identifier: GPL-2.0-only
/*
 * The dxr builder (dxr.h). One pass over the ranges, chunk by chunk: a
 * chunk no range boundary cuts gets its answer in the descriptor, any
 * other gets a run of entries, one at offset 0 with the answer the chunk
 * starts with, then one per boundary inside it. Entries with the same
 * nexthop as the one before are dropped, so unmerged input costs nothing.
 */
#include <errno.h>

#include "dxr.h"

#define CHUNK_SIZE (1ull << XFIB_DXR_CHUNK_BITS)

/* Appends entry e to the run being built unless it repeats the nexthop. */
static void run_add(__u32 *run, size_t *len, __u32 off, __u32 nh)
{
	if (*len && (run[*len - 1] & 0xffff) == nh)
		return;
	run[(*len)++] = XFIB_DXR_ENTRY(off, nh);
}

/*
 * Writes the run of chunk c (entries from tmp) at ranges[*used], or makes
 * the chunk direct if the run has one entry.
 */
static int chunk_put(__u32 *direct, __u32 *ranges, size_t cap, size_t *used,
		     __u32 c, const __u32 *run, size_t len)
{
	size_t need = len + (len > XFIB_DXR_LEN_MAX), i, pos = *used;

	if (len == 1) {
		direct[c] = run[0] & 0xffff;
		return 0;
	}
	if (pos + need > cap)
		return -ENOSPC;
	if (len > XFIB_DXR_LEN_MAX) {
		direct[c] = XFIB_DXR_DESC(pos, 0);
		ranges[pos++] = len;
	} else {
		direct[c] = XFIB_DXR_DESC(pos, len);
	}
	for (i = 0; i < len; i++)
		ranges[pos + i] = run[i];
	*used = pos + len;
	return 0;
}

long dxr_build(const struct xfib_bs4_range *r, size_t n, __u32 *direct,
	       __u32 *ranges, size_t cap)
{
	static __u32 run[CHUNK_SIZE];
	size_t i = 0, used = 0, len;
	__u64 c;
	int err;

	if (!n || r[0].start != 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (r[i].nh > 0xffff)
			return -ERANGE;
		if (i && r[i].start <= r[i - 1].start)
			return -EINVAL;
	}
	i = 0;
	if (cap > XFIB_DXR_SLOT_RANGES)
		cap = XFIB_DXR_SLOT_RANGES;
	for (c = 0; c < XFIB_DXR_CHUNKS; c++) {
		__u64 first = c << XFIB_DXR_CHUNK_BITS, end = first + CHUNK_SIZE;

		/* r[i] is the range holding the chunk's first address. */
		while (i + 1 < n && r[i + 1].start <= first)
			i++;
		len = 0;
		for (; i < n && r[i].start < end; i++)
			run_add(run, &len, r[i].start > first ?
				r[i].start - first : 0, r[i].nh);
		/* The last range may run on into the next chunk. */
		i--;
		err = chunk_put(direct, ranges, cap, &used, c, run, len);
		if (err)
			return err;
	}
	return used;
}
