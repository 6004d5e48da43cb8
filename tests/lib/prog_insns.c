// SPDX-License-Identifier: GPL-2.0-only
/*
 * prog-insns ID|PATH...: for each loaded BPF program, given by id or by
 * a pinned path, one JSON line {"name", "id", "verified_insns"}: the
 * instructions the verifier processed for it (bpf_prog_info, Linux >=
 * 5.16; 0 before). bpftool 7.1 does not print the field. Exit 1 if a
 * program is not found. scripts/prog-insns.sh is the front end (names,
 * XDP devices, margins, --max).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prog_insns.h"

/* An fd for ARG: a number is an id, anything else a pinned path. */
static int prog_fd(const char *arg)
{
	char *end;
	unsigned long id = strtoul(arg, &end, 10);

	if (*arg && !*end)
		return bpf_prog_get_fd_by_id(id);
	return bpf_obj_get(arg);
}

int main(int argc, char **argv)
{
	struct bpf_prog_info info;
	int i, fd, rc = 0;
	__u32 len;

	if (argc < 2) {
		fprintf(stderr, "usage: prog-insns ID|PINNED_PATH...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		fd = prog_fd(argv[i]);
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
			fprintf(stderr, "prog-insns: %s: no such program (%s)\n",
				argv[i], strerror(errno));
			rc = 1;
			if (fd >= 0)
				close(fd);
			continue;
		}
		printf("{\"name\":\"%s\",\"id\":%u,\"verified_insns\":%u}\n",
		       info.name, info.id, prog_insns_of_fd(fd));
		close(fd);
	}
	return rc;
}
