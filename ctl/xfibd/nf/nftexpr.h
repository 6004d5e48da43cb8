/* SPDX-License-Identifier: GPL-2.0-only */
/* nf_tables rule expressions into the check's form (nfrules.h). */
#ifndef XFIB_NFTEXPR_H
#define XFIB_NFTEXPR_H

#include <stdbool.h>
#include "nfrules.h"

struct nlattr;

/* Appends the expressions of NFTA_RULE_EXPRESSIONS list to r. One that
 * cannot be read becomes an action. 0, or -1 out of memory. */
int nft_rule_exprs(struct nfx_rule *r, const struct nlattr *list);

/* The verdict in an nft_data nest (NFTA_DATA_VERDICT): 0, or -1 if it
 * holds none. chain is NULL unless a jump or goto names one. */
int nft_verdict(const struct nlattr *data, int *code, const char **chain);

/* Is expression i of r a lookup of the ct state (so the check needs the
 * set's elements)? */
bool nft_rule_needs_set(const struct nfx_rule *r, unsigned int i);

#endif /* XFIB_NFTEXPR_H */
