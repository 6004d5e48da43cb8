/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * FNV-1a, 64 bits: a hash of bytes to tell one thing from another (a
 * route's attributes, a netfilter table's rules), not for hash tables
 * (htab.c has its own) nor for anything an outsider may choose inputs to
 * defeat.
 */
#ifndef XFIB_FNV_H
#define XFIB_FNV_H

#include <stddef.h>
#include <linux/types.h>

#define XFIB_FNV1A_BASIS 0xcbf29ce484222325ull

static inline __u64 xfib_fnv1a(__u64 h, const void *p, size_t len)
{
	const __u8 *b = p;

	while (len--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

#endif /* XFIB_FNV_H */
