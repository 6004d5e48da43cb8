// SPDX-License-Identifier: GPL-2.0-only
/*
 * CONFIG_HZ for the program (bpf/lib/ctgate.h converts conntrack timeouts
 * to jiffies with it) where libbpf cannot read the kernel's config: no
 * /proc/config.gz, no /boot/config-<release>. No file says HZ then
 * (sysconf(_SC_CLK_TCK) is USER_HZ, 100 whatever HZ is), so it is
 * measured: jiffies, read by a two-instruction program through
 * BPF_PROG_TEST_RUN, against CLOCK_MONOTONIC, from one tick to another
 * about 250 ms later. Both ends are taken on a tick, so the count of
 * jiffies is exact, and the moment each tick is seen is known to within
 * two reads: a tick seen across a longer gap (the process was preempted
 * between reads, common on a busy machine) is not used, the next one is.
 * The tick itself may come late, though: on a busy virtual machine by
 * half a millisecond and more (a 50 ms span measured 247 for 250), so
 * the span is long enough for 1 ms of lateness to stay within the 1%
 * that tells 250 from 256.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "monoclock.h"
#include "pin.h"

#define HZ_SPAN_NS 250000000ull
#define HZ_EDGE_NS 50000ull
/* Give up on finding a tick seen closely enough after this long. With
 * four tests and an emulated CPU beside it on two CPUs, one second passed
 * without two reads 50 us apart around a tick (-ETIME); the wait costs
 * only a machine that busy, once per load of the program. */
#define HZ_TICK_MAX_NS 5000000000ull

/* The low 32 bits of jiffies, or -errno in *err. */
static __u32 jiffies_now(int prog_fd, int *err)
{
	__u8 frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = 1);

	if (bpf_prog_test_run_opts(prog_fd, &opts))
		*err = -errno;
	return opts.retval;
}

/* Waits for the next tick seen within HZ_EDGE_NS: jiffies then into *j,
 * the middle of the reads' span into *ns. */
static int next_tick(int prog_fd, __u32 *j, unsigned long long *ns)
{
	unsigned long long start = mono_ns(), before, prev, after;
	int err = 0;
	__u32 last, now;

	prev = mono_ns();
	last = jiffies_now(prog_fd, &err);
	for (;;) {
		before = mono_ns();
		now = jiffies_now(prog_fd, &err);
		after = mono_ns();
		if (err)
			return err;
		/* The tick fell between the start of the read that saw
		 * last and the end of the one that saw now. */
		if (now != last && after - prev <= HZ_EDGE_NS)
			break;
		if (after - start > HZ_TICK_MAX_NS)
			return -ETIME;
		last = now;
		prev = before;
	}
	*j = now;
	*ns = prev + (after - prev) / 2;
	return 0;
}

/* The configured values of HZ (the kernel's Kconfig choices across
 * architectures): a measurement within 1% of one is that one. */
static int hz_snap(double hz)
{
	static const int known[] = {
		24, 32, 48, 64, 100, 128, 200, 250,
		256, 300, 500, 512, 1000, 1024, 1200,
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (hz > known[i] * 0.99 && hz < known[i] * 1.01)
			return known[i];
	return (int)(hz + 0.5);
}

int xfib_hz_measure(void)
{
	/* r0 = bpf_jiffies64(); return r0 (the low 32 bits). */
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_jiffies64 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned long long t0, t1;
	__u32 j0, j1;
	int fd, err = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xfib_hz", "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), NULL);
	if (fd < 0)
		return -errno;
	err = next_tick(fd, &j0, &t0);
	if (!err) {
		const struct timespec span = { 0, HZ_SPAN_NS };

		nanosleep(&span, NULL);
		err = next_tick(fd, &j1, &t1);
	}
	close(fd);
	if (err)
		return err;
	return hz_snap((double)(j1 - j0) * 1e9 / (double)(t1 - t0));
}

const char *xfib_kconfig(bool prog)
{
	static char conf[32];
	struct utsname u;
	char path[128];
	int hz;

	if (!access("/proc/config.gz", R_OK))
		return NULL;
	if (!uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		if (!access(path, R_OK))
			return NULL;
	}
	if (!prog)
		return "CONFIG_HZ=1000\n";
	if (conf[0])
		return conf;
	hz = xfib_hz_measure();
	/* Without a measurement, the largest HZ in use: the program then
	 * refreshes timeouts on more packets than it needs to (on every
	 * packet if HZ is smaller; never too few). */
	snprintf(conf, sizeof(conf), "CONFIG_HZ=%d\n", hz > 0 ? hz : 1000);
	return conf;
}
