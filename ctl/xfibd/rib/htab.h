/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small chained hash table keyed by fixed-size byte strings. Entries embed
 * a struct htab_node followed (anywhere) by their key; the table stores the
 * key's offset. Grows by doubling at load factor 1.
 */
#ifndef XFIB_HTAB_H
#define XFIB_HTAB_H

#include <stddef.h>
#include <stdint.h>

struct htab_node {
	struct htab_node *next;
	uint32_t hash;
};

struct htab {
	struct htab_node **buckets;
	size_t nbuckets;
	size_t count;
	size_t node_off; /* offset of the htab_node in an entry */
	size_t key_off;  /* offset of the key in an entry */
	size_t key_len;
};

#define htab_entry(node, tab) ((void *)((char *)(node) - (tab)->node_off))

int htab_init(struct htab *t, size_t node_off, size_t key_off, size_t key_len);
void htab_free(struct htab *t);
void *htab_find(const struct htab *t, const void *key);
/* Starts loading key's bucket into the cache, for a find soon after. */
void htab_prefetch(const struct htab *t, const void *key);
/* Inserts entry; the caller makes sure its key is not present. */
int htab_insert(struct htab *t, void *entry);
void htab_remove(struct htab *t, void *entry);

/* Iteration safe against removing the current entry. */
#define htab_for_each(t, e, tmpnode, i)                                        \
	for ((i) = 0; (i) < (t)->nbuckets; (i)++)                              \
		for (struct htab_node *_n = (t)->buckets[(i)],                 \
				      *tmpnode = _n ? _n->next : NULL;         \
		     _n && (((e) = htab_entry(_n, (t))), 1);                   \
		     _n = tmpnode, tmpnode = _n ? _n->next : NULL)

#endif /* XFIB_HTAB_H */
