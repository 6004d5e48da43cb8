/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the program tests share: each case is one expect() line, "ok" or
 * "FAIL", counted for the summary; exit status 0 pass, 1 failure, SKIP
 * when the test cannot run here (reason on stdout).
 */
#ifndef XFIB_TESTS_PROGTEST_H
#define XFIB_TESTS_PROGTEST_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#define SKIP 77

static int ncases, nfailed;

static void __attribute__((format(printf, 2, 3)))
expect(bool ok, const char *fmt, ...)
{
	va_list ap;

	ncases++;
	nfailed += !ok;
	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#endif /* XFIB_TESTS_PROGTEST_H */
