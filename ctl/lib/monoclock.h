/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * CLOCK_MONOTONIC, the one clock xfibd and xfibctl measure intervals and
 * deadlines on: it never jumps with the wall clock. The map fields that
 * hold times (include/xfib/netfilter.h) are on it too, as the kernel's
 * bpf_ktime_get_ns() is.
 */
#ifndef XFIB_MONOCLOCK_H
#define XFIB_MONOCLOCK_H

#include <time.h>

static inline unsigned long long mono_ns(void)
{
	struct timespec ts;

	/* Cannot fail for CLOCK_MONOTONIC with a valid pointer. */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline unsigned long long mono_us(void)
{
	return mono_ns() / 1000;
}

static inline unsigned long long mono_ms(void)
{
	return mono_ns() / 1000000;
}

#endif /* XFIB_MONOCLOCK_H */
