/* SPDX-License-Identifier: GPL-2.0-only */
/* xfibd's command line (xfibd -h, man/xfibd.8). */
#ifndef XFIB_OPTIONS_H
#define XFIB_OPTIONS_H

#include <stdbool.h>

/* The command line. */
struct options {
	const char *pin_dir;
	unsigned long long table, batch_ms, rcvbuf, eval_changes, eval_ms, lease_s;
	unsigned long long hash_seed;
	bool hash_seed_set;
	int netfilter; /* enum xfib_nf_option */
	bool syslog;
	int verbose;
};

/* Fills o from the defaults and the arguments: 0 to run, 1 after printing
 * the help (-h), or -EINVAL after saying why. */
int options_parse(int argc, char **argv, struct options *o);

#endif /* XFIB_OPTIONS_H */
