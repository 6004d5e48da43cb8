// SPDX-License-Identifier: GPL-2.0-only
/*
 * Control-plane prefix tree: a path-compressed binary (Patricia) trie.
 *
 * Every node stands for one prefix (key, plen) and has up to two children,
 * child[b] holding only prefixes that extend the node's prefix with bit b
 * at position plen. A node either carries a route (has_route, nh) or is a
 * glue node, created where the paths of two prefixes split; a glue node
 * always has two children, so nodes <= 2 * routes - 1 and the shape of the
 * tree depends only on the set of prefixes, never on the order of updates.
 * Lengths strictly increase downwards, so any path is at most bits + 1
 * nodes long, and everything below runs in bounded, explicit loops; no
 * recursion, whatever the table.
 *
 *  - set walks down while the node's prefix contains the new one. Where it
 *    stops, the new prefix is either the node itself (update, or a glue
 *    node that gains a route), a child slot that was empty, a new parent of
 *    the node (the new prefix contains it), or a sibling under a new glue
 *    node at the length where the two keys first differ.
 *  - del turns a route with two children into glue; otherwise the node is
 *    spliced out, and if that leaves its parent a glue node with a single
 *    child, the parent goes too. That keeps the invariant above.
 *  - lookup follows the address's bits and remembers the last route seen.
 *  - walk_span descends to the subtree that holds exactly the prefixes
 *    inside the span, keeping the longest route that contains the span as
 *    the starting nexthop. An in-order walk of that subtree then emits,
 *    for every node, the gaps its children leave with the node's effective
 *    nexthop (its own route, else the one inherited from above). Merging
 *    equal neighbours happens in one pending range before the callback.
 *    Cost: the descent plus the subtree, whose size is at most twice the
 *    number of prefixes inside the span.
 *
 * Keys are kept left-aligned in an unsigned __int128 ("bit i" is bit i of
 * the address counted from its most significant end) so one code path
 * serves both families; an IPv4 key just has 96 zero bits at the bottom,
 * and range bounds are shifted back to host order only when emitted.
 *
 * Nodes sit in chunks of CHUNK_NODES and name each other by a 32-bit index
 * (index 0 is never handed out and means "none"): half the size of
 * pointers, and growing the table never moves a node, so a pointer to a
 * child slot stays valid across an allocation. A node is a 16-byte body
 * followed by its key, stored at the family's width (4 or 16 bytes), so an
 * IPv4 node takes 20 bytes and an IPv6 node 32. Freed nodes go on a free
 * list and are reused; chunks are returned only by ptree_fini().
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptree.h"

typedef xfib_u128 u128;

#define CHUNK_SHIFT 11
#define CHUNK_NODES (1u << CHUNK_SHIFT)
#define CHUNK_MASK (CHUNK_NODES - 1)

/* A walk holds its span's frame plus one per node of one path. */
#define WALK_FRAMES (128 + 2)

struct ptree_node {
	__u32 child[2];
	__u32 nh;
	__u8 plen;
	__u8 has_route;
	__u16 pad;
	/* followed by the key: __u32 (IPv4) or u128 (IPv6), host order */
};
_Static_assert(sizeof(struct ptree_node) == 16, "ptree node body size");

static struct ptree_node *node_at(const struct ptree *t, __u32 i)
{
	return (struct ptree_node *)(t->chunks[i >> CHUNK_SHIFT] +
				     (size_t)(i & CHUNK_MASK) * t->stride);
}

/* The node's key, left-aligned. memcpy: an IPv6 key may be unaligned. */
static u128 node_key(const struct ptree *t, const struct ptree_node *n)
{
	const unsigned char *k = (const unsigned char *)(n + 1);

	if (t->bits == 32) {
		__u32 v;

		memcpy(&v, k, sizeof(v));
		return (u128)v << 96;
	} else {
		u128 v;

		memcpy(&v, k, sizeof(v));
		return v;
	}
}

static void node_set_key(const struct ptree *t, struct ptree_node *n, u128 key)
{
	unsigned char *k = (unsigned char *)(n + 1);

	if (t->bits == 32) {
		__u32 v = (__u32)(key >> 96);

		memcpy(k, &v, sizeof(v));
	} else {
		memcpy(k, &key, sizeof(key));
	}
}

/* Bits below a prefix of length plen; written out, a shift by 128 is UB. */
static u128 host_mask(unsigned int plen)
{
	return plen >= 128 ? 0 : ~(u128)0 >> plen;
}

/* Bit i (0 = most significant) of a left-aligned key; i < 128. */
static unsigned int bit_at(u128 k, unsigned int i)
{
	return (unsigned int)(k >> (127 - i)) & 1;
}

/* Leading equal bits of two keys: 128 if they are equal. */
static unsigned int common_bits(u128 a, u128 b)
{
	u128 x = a ^ b;
	__u64 hi = (__u64)(x >> 64), lo = (__u64)x;

	if (hi)
		return (unsigned int)__builtin_clzll(hi);
	if (lo)
		return 64 + (unsigned int)__builtin_clzll(lo);
	return 128;
}

/* True if a and b agree on their first plen bits. */
static bool same_prefix(u128 a, u128 b, unsigned int plen)
{
	return !((a ^ b) & ~host_mask(plen));
}

static u128 load_addr(const struct ptree *t, const __u8 *addr)
{
	u128 v = 0;
	unsigned int i;

	for (i = 0; i < t->bits / 8; i++)
		v = (v << 8) | addr[i];
	return v << (128 - t->bits);
}

int ptree_init(struct ptree *t, int bits)
{
	if (bits != 32 && bits != 128)
		return -EINVAL;
	memset(t, 0, sizeof(*t));
	t->bits = (__u32)bits;
	t->stride = sizeof(struct ptree_node) + (unsigned int)bits / 8;
	t->next_fresh = 1; /* index 0 means "none" */
	return 0;
}

void ptree_fini(struct ptree *t)
{
	__u32 i;

	for (i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	memset(t, 0, sizeof(*t));
}

/* A fresh node, zeroed but for the key, or 0 when out of memory. */
static __u32 node_alloc(struct ptree *t, u128 key, unsigned int plen)
{
	struct ptree_node *n;
	__u32 i;

	if (t->free_head) {
		i = t->free_head;
		t->free_head = node_at(t, i)->child[0];
	} else {
		/* The last index is never used, so next_fresh cannot wrap. */
		if (t->next_fresh == UINT32_MAX)
			return 0;
		if ((t->next_fresh >> CHUNK_SHIFT) == t->nchunks) {
			unsigned char *c;

			if (t->nchunks == t->chunks_cap) {
				__u32 cap = t->chunks_cap ? 2 * t->chunks_cap : 16;
				unsigned char **v;

				v = realloc(t->chunks, cap * sizeof(*v));
				if (!v)
					return 0;
				t->chunks = v;
				t->chunks_cap = cap;
			}
			c = malloc((size_t)CHUNK_NODES * t->stride);
			if (!c)
				return 0;
			t->chunks[t->nchunks++] = c;
		}
		i = t->next_fresh++;
	}
	n = node_at(t, i);
	memset(n, 0, sizeof(*n));
	n->plen = (__u8)plen;
	node_set_key(t, n, key);
	t->nodes++;
	return i;
}

static void node_free(struct ptree *t, __u32 i)
{
	struct ptree_node *n = node_at(t, i);

	n->has_route = 0;
	n->child[1] = 0;
	n->child[0] = t->free_head;
	t->free_head = i;
	t->nodes--;
}

static int set(struct ptree *t, const __u8 *addr, unsigned int plen, __u32 nh,
	       __u32 *old)
{
	struct ptree_node *n, *m, *g;
	__u32 *link = &t->root, i, mi, gi;
	unsigned int c;
	u128 key, nk;

	if (plen > t->bits)
		return -EINVAL;
	key = load_addr(t, addr) & ~host_mask(plen);

	while ((i = *link)) {
		n = node_at(t, i);
		nk = node_key(t, n);
		c = common_bits(key, nk);
		if (c > plen)
			c = plen;
		if (c > n->plen)
			c = n->plen;
		if (c == n->plen) {
			if (n->plen == plen) {
				int inserted = !n->has_route;

				if (old && !inserted)
					*old = n->nh;
				n->nh = nh;
				n->has_route = 1;
				t->routes += inserted;
				return inserted;
			}
			/* n contains the new prefix: go on below it. */
			link = &n->child[bit_at(key, n->plen)];
			continue;
		}
		/* The paths split above n, at length c. */
		mi = node_alloc(t, key, plen);
		if (!mi)
			return -ENOMEM;
		m = node_at(t, mi);
		m->nh = nh;
		m->has_route = 1;
		if (c == plen) {
			/* The new prefix contains n: it becomes n's parent. */
			m->child[bit_at(nk, plen)] = i;
			*link = mi;
			t->routes++;
			return 1;
		}
		gi = node_alloc(t, key & ~host_mask(c), c);
		if (!gi) {
			node_free(t, mi);
			return -ENOMEM;
		}
		g = node_at(t, gi);
		/* c is below both lengths, so the keys differ at bit c. */
		g->child[bit_at(key, c)] = mi;
		g->child[bit_at(nk, c)] = i;
		*link = gi;
		t->routes++;
		return 1;
	}
	mi = node_alloc(t, key, plen);
	if (!mi)
		return -ENOMEM;
	m = node_at(t, mi);
	m->nh = nh;
	m->has_route = 1;
	*link = mi;
	t->routes++;
	return 1;
}

int ptree_set(struct ptree *t, const __u8 *addr, unsigned int plen, __u32 nh)
{
	return set(t, addr, plen, nh, NULL);
}

int ptree_set_old(struct ptree *t, const __u8 *addr, unsigned int plen,
		  __u32 nh, __u32 *old)
{
	return set(t, addr, plen, nh, old);
}

/*
 * The link (root or child slot) that holds the node of exactly (key, plen),
 * route or glue, and in *plink the link that holds its parent (NULL for the
 * root). NULL if there is no such node. Shared by del and the read-only
 * get, hence the const tree and the writable links.
 */
static __u32 *find_link(const struct ptree *t, u128 key, unsigned int plen,
			__u32 **plink)
{
	__u32 *link = (__u32 *)&t->root, *up = NULL;
	const struct ptree_node *n;
	__u32 i;

	while ((i = *link)) {
		n = node_at(t, i);
		if (n->plen > plen || !same_prefix(key, node_key(t, n), n->plen))
			return NULL;
		if (n->plen == plen) {
			if (plink)
				*plink = up;
			return link;
		}
		up = link;
		link = (__u32 *)&n->child[bit_at(key, n->plen)];
	}
	return NULL;
}

int ptree_del(struct ptree *t, const __u8 *addr, unsigned int plen)
{
	__u32 *link, *plink, i, pi, child;
	struct ptree_node *n, *p;

	if (plen > t->bits)
		return -EINVAL;
	link = find_link(t, load_addr(t, addr) & ~host_mask(plen), plen,
			 &plink);
	if (!link)
		return -ENOENT;
	i = *link;
	n = node_at(t, i);
	if (!n->has_route)
		return -ENOENT;
	n->has_route = 0;
	t->routes--;
	if (n->child[0] && n->child[1])
		return 0; /* still needed where its two branches split */
	child = n->child[0] | n->child[1];
	*link = child;
	node_free(t, i);
	if (child || !plink)
		return 0;
	/*
	 * n was a leaf: its parent lost a child. A glue parent with one
	 * child left marks no split any more and is spliced out as well.
	 */
	pi = *plink;
	p = node_at(t, pi);
	if (!p->has_route) {
		*plink = p->child[0] | p->child[1];
		node_free(t, pi);
	}
	return 0;
}

int ptree_get(const struct ptree *t, const __u8 *addr, unsigned int plen,
	      __u32 *nh)
{
	const struct ptree_node *n;
	__u32 *link;

	if (plen > t->bits)
		return -EINVAL;
	link = find_link(t, load_addr(t, addr) & ~host_mask(plen), plen, NULL);
	if (!link)
		return -ENOENT;
	n = node_at(t, *link);
	if (!n->has_route)
		return -ENOENT;
	*nh = n->nh;
	return 0;
}

__u32 ptree_lookup(const struct ptree *t, const __u8 *addr,
		   unsigned int *plen_out, __u32 def)
{
	const struct ptree_node *n;
	unsigned int len = 0;
	__u32 i = t->root, nh = def;
	u128 a = load_addr(t, addr);

	while (i) {
		n = node_at(t, i);
		/* Below a node that does not match, nothing can match. */
		if (!same_prefix(a, node_key(t, n), n->plen))
			break;
		if (n->has_route) {
			nh = n->nh;
			len = n->plen;
		}
		if (n->plen >= t->bits)
			break;
		i = n->child[bit_at(a, n->plen)];
	}
	if (plen_out)
		*plen_out = len;
	return nh;
}

/* Ranges waiting to be emitted: one pending range absorbs equal nexthops. */
struct span_out {
	int (*emit)(void *ctx, xfib_u128 first, xfib_u128 last, __u32 nh);
	void *ctx;
	unsigned int shift; /* left-aligned to host order */
	bool with_plen;     /* emit ptree_plen_value()s */
	bool pending;
	u128 first, last;
	__u32 nh;
};

/* Adds [first, last], which starts right after the previous range and
 * is answered by a prefix of length plen (nh). */
static int span_add(struct span_out *o, u128 first, u128 last, __u32 nh,
		    unsigned int plen)
{
	int ret;

	if (o->with_plen)
		nh = ptree_plen_value(nh, plen);
	if (o->pending && o->nh == nh) {
		o->last = last;
		return 0;
	}
	if (o->pending) {
		ret = o->emit(o->ctx, o->first >> o->shift, o->last >> o->shift,
			      o->nh);
		if (ret)
			return ret;
	}
	o->pending = true;
	o->first = first;
	o->last = last;
	o->nh = nh;
	return 0;
}

/* A node being walked: the part of its span not emitted yet. */
struct span_frame {
	u128 pos;  /* first address not emitted yet */
	u128 last; /* last address of the span */
	__u32 child[2];
	__u32 nh;  /* effective nexthop of the gaps between children */
	__u8 plen; /* ... the length of the prefix it is of */
	__u8 next; /* child to visit next; 2: only the tail is left */
	bool done; /* a child reached last: no tail */
};

/*
 * The frame of the span [q, q | host_mask(plen)] itself: descends to the
 * prefixes inside the span, collecting the longest route that contains
 * it on the way: that is what the span's gaps get (def without one).
 */
static struct span_frame span_start(const struct ptree *t, u128 q,
				    unsigned int plen, __u32 def)
{
	const struct ptree_node *n;
	__u32 i, nh = def, kids[2] = { 0, 0 };
	unsigned int len = 0;
	u128 nk;

	for (i = t->root; i; i = n->child[bit_at(q, n->plen)]) {
		n = node_at(t, i);
		nk = node_key(t, n);
		if (n->plen >= plen) {
			if (!same_prefix(q, nk, plen))
				break; /* n, and all below it, lie outside */
			if (n->plen == plen) {
				if (n->has_route)
					nh = n->nh, len = n->plen;
				kids[0] = n->child[0];
				kids[1] = n->child[1];
			} else {
				kids[0] = i; /* the only subtree inside */
			}
			break;
		}
		if (!same_prefix(q, nk, n->plen))
			break;
		if (n->has_route)
			nh = n->nh, len = n->plen;
	}
	return (struct span_frame){
		.pos = q,
		.last = q | host_mask(plen),
		.child = { kids[0], kids[1] },
		.nh = nh,
		.plen = len,
	};
}

/*
 * The top frame's next child, if it has one: emits the gap before it and
 * pushes the child's frame (st holds *depth frames).
 */
static int span_enter_child(const struct ptree *t, struct span_frame *st,
			    unsigned int *depth, struct span_out *o)
{
	struct span_frame *f = &st[*depth - 1];
	const struct ptree_node *n;
	u128 cfirst, clast;
	__u32 i;
	int ret;

	i = f->child[f->next++];
	if (!i)
		return 0;
	n = node_at(t, i);
	cfirst = node_key(t, n);
	clast = cfirst | host_mask(n->plen);
	if (cfirst > f->pos) {
		ret = span_add(o, f->pos, cfirst - 1, f->nh, f->plen);
		if (ret)
			return ret;
	}
	/* Where the parent resumes; clast + 1 may not exist. */
	if (clast < f->last)
		f->pos = clast + 1;
	else
		f->done = true;
	/*
	 * Lengths grow strictly along a path, so the stack cannot fill up
	 * unless the tree is corrupted.
	 */
	if (*depth == WALK_FRAMES)
		return -EFAULT;
	st[(*depth)++] = (struct span_frame){
		.pos = cfirst,
		.last = clast,
		.child = { n->child[0], n->child[1] },
		.nh = n->has_route ? n->nh : f->nh,
		.plen = n->has_route ? n->plen : f->plen,
	};
	return 0;
}

static int walk_span(const struct ptree *t, const __u8 *addr, unsigned int plen,
		     __u32 def, bool with_plen,
		     int (*emit)(void *ctx, xfib_u128 first, xfib_u128 last,
				 __u32 nh),
		     void *ctx)
{
	struct span_frame st[WALK_FRAMES], *f;
	struct span_out o = {
		.emit = emit,
		.ctx = ctx,
		.shift = 128 - t->bits,
		.with_plen = with_plen,
	};
	unsigned int depth;
	int ret;

	if (plen > t->bits)
		return -EINVAL;
	st[0] = span_start(t, load_addr(t, addr) & ~host_mask(plen), plen, def);
	depth = 1;
	while (depth) {
		f = &st[depth - 1];
		if (f->next < 2) {
			ret = span_enter_child(t, st, &depth, &o);
			if (ret)
				return ret;
			continue;
		}
		if (!f->done) {
			ret = span_add(&o, f->pos, f->last, f->nh, f->plen);
			if (ret)
				return ret;
		}
		depth--;
	}
	/* The frame of the span itself always leaves something pending. */
	return emit(ctx, o.first >> o.shift, o.last >> o.shift, o.nh);
}

int ptree_walk_span(const struct ptree *t, const __u8 *addr, unsigned int plen,
		    __u32 def,
		    int (*emit)(void *ctx, xfib_u128 first, xfib_u128 last,
				__u32 nh),
		    void *ctx)
{
	return walk_span(t, addr, plen, def, false, emit, ctx);
}

int ptree_walk_span_plen(const struct ptree *t, const __u8 *addr,
			 unsigned int plen, __u32 def,
			 int (*emit)(void *ctx, xfib_u128 first,
				     xfib_u128 last, __u32 v),
			 void *ctx)
{
	return walk_span(t, addr, plen, def, true, emit, ctx);
}

size_t ptree_count(const struct ptree *t)
{
	return t->routes;
}

size_t ptree_mem_bytes(const struct ptree *t)
{
	return (size_t)t->nchunks * CHUNK_NODES * t->stride +
	       (size_t)t->chunks_cap * sizeof(*t->chunks);
}
