/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Names of the lookup algorithms (enum xfib_algo in xfib/maps.h) and the
 * family each serves: what xfibctl prints and parses, what xfibd logs.
 */
#ifndef XFIB_ALGO_NAMES_H
#define XFIB_ALGO_NAMES_H

/* "bsearch4", "dir24_8", ...; "none" for XFIB_ALGO_NONE. */
const char *xfib_algo_name(unsigned int id);
/* XFIB_V4 or XFIB_V6 for an algorithm, -1 if unknown. */
int xfib_algo_family(unsigned int id);
/* enum xfib_algo of a name, or -1. */
int xfib_algo_by_name(const char *name);

#endif /* XFIB_ALGO_NAMES_H */
