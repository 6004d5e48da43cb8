// SPDX-License-Identifier: GPL-2.0-only
/* The group pool of dir24_8 and trie6. See grpool.h. */
#include <errno.h>
#include <string.h>

#include "grpool.h"

int grpool_init(struct grpool *p, __u32 *tbl8, __u32 ngroups, bool clear)
{
	/* One spare slot each: malloc(0) may return NULL. */
	size_t slots = (size_t)ngroups + 1;

	memset(p, 0, sizeof(*p));
	if (ngroups && !tbl8)
		return -EINVAL;
	p->free = malloc(slots * sizeof(*p->free));
	p->retired = malloc(slots * sizeof(*p->retired));
	if (!p->free || !p->retired) {
		grpool_fini(p);
		return -ENOMEM;
	}
	p->tbl8 = tbl8;
	p->ngroups = ngroups;
	if (clear && ngroups)
		memset(tbl8, 0, (size_t)ngroups * GRPOOL_GROUP_ENTRIES * sizeof(*tbl8));
	grpool_reset(p);
	return 0;
}

int grpool_grow(struct grpool *p, __u32 ngroups)
{
	size_t slots = (size_t)ngroups + 1;
	__u32 *free_, *retired, g;

	if (ngroups < p->ngroups)
		return -EINVAL;
	free_ = realloc(p->free, slots * sizeof(*p->free));
	if (!free_)
		return -ENOMEM;
	p->free = free_;
	retired = realloc(p->retired, slots * sizeof(*p->retired));
	if (!retired)
		return -ENOMEM; /* the larger free stack does no harm */
	p->retired = retired;
	/* The lowest new number on top. */
	for (g = ngroups; g > p->ngroups; g--)
		grpool_put(p, g - 1);
	p->ngroups = ngroups;
	return 0;
}

void grpool_fini(struct grpool *p)
{
	free(p->free);
	free(p->retired);
	memset(p, 0, sizeof(*p));
}

void grpool_reset(struct grpool *p)
{
	__u32 i;

	/* Lowest numbers on top: a fresh build fills the pool from its start. */
	for (i = 0; i < p->ngroups; i++)
		p->free[i] = p->ngroups - 1 - i;
	p->nfree = p->ngroups;
	p->nretired = 0;
}

void grpool_reclaim(struct grpool *p)
{
	while (p->nretired)
		grpool_put(p, p->retired[--p->nretired]);
}
