// SPDX-License-Identifier: GPL-2.0-only
/* xfibd's command line: its defaults, help and parsing. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/rtnetlink.h>

#include "nf/nfgate.h"
#include "options.h"

#define DEFAULT_BATCH_MS 10
#define DEFAULT_EVAL_CHANGES 100
#define DEFAULT_EVAL_MS 30000
#define DEFAULT_RCVBUF (32 << 20)
/* How long the dataplane forwards by the mirror after the last renewal:
 * long enough for a restart at full table (SIGTERM to the new daemon's
 * first renewal at 1.25M routes: 15.0-17.5 s on a 2-core VM at load
 * average 8, make bench-ctl's restart_ms), after systemd's RestartSec of
 * 2 s and up to 1 s since the last renewal, with half again to spare;
 * short enough that a withdrawn route does not stay in the dataplane for
 * long without a daemon. See xfibd(8). */
#define DEFAULT_LEASE_S 30

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: xfibd [OPTIONS]\n"
		"Mirror this network namespace's FIB into the xfib XDP dataplane.\n"
		"Runs in the foreground; SIGTERM/SIGINT stop it and leave the dataplane forwarding for the lease.\n"
		"\n"
		"  -p, --pin-dir DIR     pinned maps directory (default: /sys/fs/bpf/xfib in the\n"
		"                        initial namespace, /sys/fs/bpf/xfib-ns<cookie> elsewhere)\n"
		"  -t, --table ID        routing table to mirror (default: %u, main)\n"
		"  -b, --batch-ms MS     coalesce route changes for MS milliseconds (default: %d)\n"
		"  -r, --rcvbuf BYTES    netlink receive buffer (default: %d)\n"
		"  -c, --eval-changes N  re-evaluate the lookup algorithm after N prefix\n"
		"                        changes (default: %d) ...\n"
		"  -e, --eval-ms MS      ... or MS milliseconds after the first change (default: %d)\n"
		"  -n, --netfilter MODE  while the forward path has netfilter rules: conntrack\n"
		"                        (forward established flows the rules accept in XDP,\n"
		"                        the rest by the kernel; default), pass (all by the\n"
		"                        kernel) or ignore (forward as if there were none)\n"
		"  -l, --lease SECONDS   the dataplane forwards by the mirror only while xfibd,\n"
		"                        in sync with the kernel, renewed its lease within\n"
		"                        SECONDS; after that, everything goes to the kernel\n"
		"                        (default: %d)\n"
		"  -H, --hash-seed N     seed of the multipath flow hash (default: drawn at\n"
		"                        random at the first start, kept in the pinned maps)\n"
		"  -s, --syslog          log to syslog instead of stderr\n"
		"  -v, --verbose         more logging (-v debug, -vv library messages too)\n"
		"  -h, --help            this help\n",
		RT_TABLE_MAIN, DEFAULT_BATCH_MS, DEFAULT_RCVBUF,
		DEFAULT_EVAL_CHANGES, DEFAULT_EVAL_MS, DEFAULT_LEASE_S);
}


/*
 * The argument of option --name as a number from min to max: all of it
 * digits (decimal, or 0x hex, 0 octal), no sign. Otherwise says so,
 * naming what the option wants, and returns -EINVAL: a value that does
 * not fit is refused, never cut down to one that does.
 */
static int opt_number(const char *name, const char *arg, const char *what,
		      unsigned long long min, unsigned long long max,
		      unsigned long long *val)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (!*arg || *end || errno || strchr(arg, '-') || v < min || v > max) {
		fprintf(stderr, "xfibd: --%s '%s': not %s (%llu..%llu)\n", name, arg,
			what, min, max);
		return -EINVAL;
	}
	*val = v;
	return 0;
}

static void options_defaults(struct options *o)
{
	*o = (struct options){
		.table = RT_TABLE_MAIN,
		.batch_ms = DEFAULT_BATCH_MS,
		.rcvbuf = DEFAULT_RCVBUF,
		.eval_changes = DEFAULT_EVAL_CHANGES,
		.eval_ms = DEFAULT_EVAL_MS,
		.lease_s = DEFAULT_LEASE_S,
	};
}

int options_parse(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "table", required_argument, NULL, 't' },
		{ "batch-ms", required_argument, NULL, 'b' },
		{ "rcvbuf", required_argument, NULL, 'r' },
		{ "eval-changes", required_argument, NULL, 'c' },
		{ "eval-ms", required_argument, NULL, 'e' },
		{ "netfilter", required_argument, NULL, 'n' },
		{ "lease", required_argument, NULL, 'l' },
		{ "hash-seed", required_argument, NULL, 'H' },
		{ "syslog", no_argument, NULL, 's' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c, err = 0;

	options_defaults(o);
	while (!err && (c = getopt_long(argc, argv, "p:t:b:r:c:e:n:l:H:svh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->pin_dir = optarg;
			break;
		case 't':
			err = opt_number("table", optarg, "a table id", 1, UINT32_MAX,
					 &o->table);
			break;
		case 'b':
			err = opt_number("batch-ms", optarg, "a number of milliseconds",
					 0, 10000, &o->batch_ms);
			break;
		case 'r':
			err = opt_number("rcvbuf", optarg, "a size in bytes", 4096,
					 INT_MAX, &o->rcvbuf);
			break;
		case 'c':
			err = opt_number("eval-changes", optarg, "a number of changes",
					 1, UINT32_MAX, &o->eval_changes);
			break;
		case 'e':
			err = opt_number("eval-ms", optarg, "a number of milliseconds",
					 0, UINT32_MAX, &o->eval_ms);
			break;
		case 'n':
			o->netfilter = nfgate_option(optarg);
			if (o->netfilter < 0) {
				fprintf(stderr, "xfibd: --netfilter '%s': not conntrack, pass or ignore\n",
					optarg);
				err = -EINVAL;
			}
			break;
		case 'l':
			err = opt_number("lease", optarg, "a number of seconds",
					 1, 3600, &o->lease_s);
			break;
		case 'H':
			err = opt_number("hash-seed", optarg, "a 32-bit number", 0,
					 UINT32_MAX, &o->hash_seed);
			o->hash_seed_set = true;
			break;
		case 's':
			o->syslog = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (!err && optind < argc) {
		fprintf(stderr, "xfibd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return -EINVAL;
	}
	return err;
}
