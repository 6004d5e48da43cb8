// SPDX-License-Identifier: GPL-2.0-only
/*
 * The destinations `xfibctl verify` checks: for every prefix of the
 * tables xfibd mirrors (verify_dest.c), its first and last address and
 * the addresses just before and after it, where longest-match bugs live;
 * then random ones, half uniform over the address space and half inside
 * a randomly chosen prefix. Rule flows (verify_flow.c) draw theirs from
 * the same points.
 */
#include <string.h>

#include "verify.h"
#include "verify_priv.h"

static bool addr_dec(__u8 *a, size_t alen)
{
	size_t i;

	for (i = alen; i-- > 0;)
		if (a[i]-- != 0)
			return true;
	return false; /* was the first address: no predecessor */
}

static bool addr_inc(__u8 *a, size_t alen)
{
	size_t i;

	for (i = alen; i-- > 0;)
		if (++a[i] != 0)
			return true;
	return false;
}

static __u8 pfx_mask(const struct pfx *p, size_t byte)
{
	unsigned int bits = p->plen > byte * 8 ? p->plen - byte * 8 : 0;

	return bits >= 8 ? 0xff : (__u8)(0xff00 >> bits);
}

bool pfx_point(const struct pfx *p, size_t alen, int which, __u8 *a)
{
	size_t i;

	memset(a, 0, 16);
	for (i = 0; i < alen; i++)
		a[i] = which & 1 ? p->dst[i] | (__u8)~pfx_mask(p, i) : p->dst[i];
	if (which == 2)
		return addr_dec(a, alen);
	if (which == 3)
		return addr_inc(a, alen);
	return true;
}


bool gen_next(struct gen *g, __u8 *a)
{
	size_t alen = fam_alen(g->fam), i;
	__u64 r[2];

	while (g->fixed < 4 * g->p->n) {
		size_t k = g->fixed++;

		if (pfx_point(&g->p->v[k / 4], alen, k % 4, a))
			return true;
	}
	if (!g->rnd_left)
		return false;
	r[0] = splitmix64(&g->rng);
	r[1] = splitmix64(&g->rng);
	memset(a, 0, 16);
	memcpy(a, r, alen);
	if ((g->rnd_left-- & 1) && g->p->n) {
		const struct pfx *p = &g->p->v[splitmix64(&g->rng) % g->p->n];

		for (i = 0; i < alen; i++)
			a[i] = (p->dst[i] & pfx_mask(p, i)) | (a[i] & ~pfx_mask(p, i));
	}
	return true;
}

void gen_pick(int fam, const struct pfxs *p, __u64 *rng, __u8 *a)
{
	size_t alen = fam_alen(fam), n = p[0].n + p[1].n, k;
	__u64 r[2];

	if (n && splitmix64(rng) & 3) {
		k = splitmix64(rng) % (4 * n);
		if (pfx_point(k / 4 < p[0].n ? &p[0].v[k / 4] : &p[1].v[k / 4 - p[0].n],
			      alen, k % 4, a))
			return;
	}
	r[0] = splitmix64(rng);
	r[1] = splitmix64(rng);
	memset(a, 0, 16);
	memcpy(a, r, alen);
}
