/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the benchmark programs (fwdbench, lookupbench) share: error lines
 * prefixed with the program's name, libbpf's messages (debug ones with
 * -v), and a monotonic clock.
 */
#ifndef XFIB_BENCHUTIL_H
#define XFIB_BENCHUTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <bpf/libbpf.h>

static int verbose;

static void __attribute__((format(printf, 1, 2))) err_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* CLOCK_MONOTONIC, in seconds. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif /* XFIB_BENCHUTIL_H */
