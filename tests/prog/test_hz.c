// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's HZ as xfib measures it where no kernel config is readable
 * (ctl/lib/kconfig.c, xfib_hz_measure()): it must be the CONFIG_HZ of the
 * running kernel's config, read here from /proc/config.gz or
 * /boot/config-<release>, three times in a row (each measurement stands
 * alone). The conntrack gate converts timeouts to jiffies with it
 * (bpf/lib/ctgate.h ct_refresh()): a wrong HZ refreshes them on every
 * packet, or too late.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <zlib.h>

#include "pin.h"
#include "progtest.h"

/* CONFIG_HZ from the kernel config at path (gzip or plain), or 0. */
static int config_hz(const char *path)
{
	gzFile f = gzopen(path, "r");
	char line[256];
	int hz = 0;

	if (!f)
		return 0;
	while (!hz && gzgets(f, line, sizeof(line)))
		if (!strncmp(line, "CONFIG_HZ=", 10))
			hz = atoi(line + 10);
	gzclose(f);
	return hz;
}

int main(void)
{
	struct utsname u;
	char path[128];
	int hz, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP: needs root (loads a BPF program)\n");
		return SKIP;
	}
	hz = config_hz("/proc/config.gz");
	if (!hz && !uname(&u)) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		hz = config_hz(path);
	}
	if (!hz) {
		printf("SKIP: no kernel config to compare with\n");
		return SKIP;
	}
	for (i = 0; i < 3; i++) {
		int got = xfib_hz_measure();

		expect(got == hz, "measured HZ %d, CONFIG_HZ %d", got, hz);
	}
	printf("\n%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
