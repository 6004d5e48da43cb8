// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "htab.h"

/*
 * Keys are fixed-size structs: mixed 8 bytes at a time (a multiply and a
 * shift per word), with a final avalanche. Byte-at-a-time FNV-1a made a
 * 44-byte route key a chain of 44 dependent multiplies.
 */
static uint32_t hash_bytes(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (len) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static struct htab_node *node_of(const struct htab *t, void *entry)
{
	return (struct htab_node *)((char *)entry + t->node_off);
}

static const void *key_of(const struct htab *t, const struct htab_node *n)
{
	return (const char *)n - t->node_off + t->key_off;
}

int htab_init(struct htab *t, size_t node_off, size_t key_off, size_t key_len)
{
	memset(t, 0, sizeof(*t));
	t->nbuckets = 64;
	t->buckets = calloc(t->nbuckets, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->node_off = node_off;
	t->key_off = key_off;
	t->key_len = key_len;
	return 0;
}

void htab_free(struct htab *t)
{
	free(t->buckets);
	t->buckets = NULL;
	t->nbuckets = t->count = 0;
}

void *htab_find(const struct htab *t, const void *key)
{
	uint32_t h = hash_bytes(key, t->key_len);
	struct htab_node *n;

	for (n = t->buckets[h & (t->nbuckets - 1)]; n; n = n->next)
		if (n->hash == h && !memcmp(key_of(t, n), key, t->key_len))
			return htab_entry(n, t);
	return NULL;
}

void htab_prefetch(const struct htab *t, const void *key)
{
	uint32_t h = hash_bytes(key, t->key_len);

	__builtin_prefetch(&t->buckets[h & (t->nbuckets - 1)]);
}

static int htab_grow(struct htab *t)
{
	size_t nb = t->nbuckets * 2, i;
	struct htab_node **b = calloc(nb, sizeof(*b)), *n, *next;

	if (!b)
		return -ENOMEM;
	for (i = 0; i < t->nbuckets; i++) {
		for (n = t->buckets[i]; n; n = next) {
			next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
		}
	}
	free(t->buckets);
	t->buckets = b;
	t->nbuckets = nb;
	return 0;
}

int htab_insert(struct htab *t, void *entry)
{
	struct htab_node *n = node_of(t, entry);
	size_t b;

	/* A failed grow only costs longer chains. */
	if (t->count >= t->nbuckets)
		htab_grow(t);
	n->hash = hash_bytes(key_of(t, n), t->key_len);
	b = n->hash & (t->nbuckets - 1);
	n->next = t->buckets[b];
	t->buckets[b] = n;
	t->count++;
	return 0;
}

void htab_remove(struct htab *t, void *entry)
{
	struct htab_node *n = node_of(t, entry), **pp;

	for (pp = &t->buckets[n->hash & (t->nbuckets - 1)]; *pp; pp = &(*pp)->next) {
		if (*pp == n) {
			*pp = n->next;
			t->count--;
			return;
		}
	}
}
