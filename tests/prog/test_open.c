// SPDX-License-Identifier: GPL-2.0-only
/*
 * Opening the dataplane's pinned maps (ctl/lib/pin.c) on a fresh pin
 * directory: xfib makes the outer (map-in-map) maps itself, one template
 * per inner shape, and hands the tbl24-shaped one to xfibd as its first
 * tbl24 instead of libbpf's two throwaway 64 MiB templates.
 *
 *  - a fresh directory: xfib_open_tbl24() returns a map of the tbl24
 *    shape, zeroed, made before the maps libbpf creates (its id is below
 *    theirs), which both tbl24 outer maps take as an inner map;
 *  - the same directory again, everything pinned: no map is made, -1;
 *  - one outer map unpinned: it is made again, with a template;
 *  - xfib_open() (xfibctl's) on a fresh directory: the template is not
 *    handed out and the outer maps are there;
 *  - loaders racing on a fresh directory (xfibd starting while xfibctl
 *    polls its status): every one ends up with the outer maps that stay
 *    pinned, none with one a loser unpinned after the others took it.
 *
 * Exit status: 0 pass, 1 failure, 77 cannot run here (reason on stdout).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "pin.h"
#include "xfib/lookup_dir24.h"
#include "xfib/maps.h"
#include "xfib_fwd.skel.h"
#include "progtest.h"

static int fd_info(int fd, struct bpf_map_info *info)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	return bpf_obj_get_info_by_fd(fd, info, &len);
}

/* Whether every byte of the map's one value is zero. */
static bool map_zeroed(int fd, size_t len)
{
	const unsigned long *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	bool zero = true;
	size_t i;

	if (p == MAP_FAILED)
		return false;
	for (i = 0; i < len / sizeof(*p) && zero; i++)
		zero = !p[i];
	munmap((void *)p, len);
	return zero;
}

/* Whether the outer map pinned at dir/name takes fd into slot 0. */
static bool outer_takes(const char *dir, const char *name, int fd)
{
	char path[256];
	__u32 key = 0;
	int outer, err;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	outer = bpf_obj_get(path);
	if (outer < 0)
		return false;
	err = bpf_map_update_elem(outer, &key, &fd, BPF_ANY);
	if (!err)
		bpf_map_delete_elem(outer, &key);
	close(outer);
	return !err;
}

/* The id of the map pinned at dir/name, 0 if none. */
static __u32 pinned_id(const char *dir, const char *name)
{
	struct bpf_map_info info;
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (fd_info(fd, &info))
		info.id = 0;
	close(fd);
	return info.id;
}

#define RACERS 4

/*
 * RACERS processes open one fresh directory at once; each writes the ids
 * of the tbl24 outer maps it holds (0 0 if its open failed) to out.
 */
static void racer(const char *dir, int go, int out)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct bpf_map_info a = {}, b = {};
	__u32 ids[2] = { 0, 0 };
	char c;

	/* End of file: the parent closed the write end. */
	if (read(go, &c, 1) < 0)
		_exit(2);
	if (!xfib_open(dir, XFIB_OPEN_CREATE, &skel) &&
	    !fd_info(bpf_map__fd(skel->maps.xfib_dir24_tbl24), &a) &&
	    !fd_info(bpf_map__fd(skel->maps.xfib_trie6_tbl24), &b)) {
		ids[0] = a.id;
		ids[1] = b.id;
	}
	if (write(out, ids, sizeof(ids)) != sizeof(ids))
		_exit(2);
	xfib_fwd_bpf__destroy(skel);
	_exit(0);
}

/* One round of racers; true if every one holds the pinned outer maps. */
static bool race_round(const char *dir)
{
	int go[2], out[2], i, held = 0;
	__u32 ids[2], want[2];
	pid_t pid[RACERS];

	if (pipe(go) || pipe(out))
		return false;
	for (i = 0; i < RACERS; i++) {
		pid[i] = fork();
		if (!pid[i]) {
			close(go[1]);
			close(out[0]);
			racer(dir, go[0], out[1]);
		}
	}
	/* Closing the write end releases them all at once. */
	close(go[0]);
	close(go[1]);
	close(out[1]);
	for (i = 0; i < RACERS; i++)
		waitpid(pid[i], NULL, 0);
	want[0] = pinned_id(dir, "xfib_dir24_tbl24");
	want[1] = pinned_id(dir, "xfib_trie6_tbl24");
	while (read(out[0], ids, sizeof(ids)) == sizeof(ids))
		held += ids[0] && ids[0] == want[0] && ids[1] == want[1];
	close(out[0]);
	return held == RACERS;
}

static void remove_dir(const char *dir)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("cannot remove %s\n", dir);
}

int main(void)
{
	struct xfib_fwd_bpf *skel = NULL;
	struct bpf_map_info info, stats;
	char dir[128], path[160];
	int err, fd, i, ok;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("SKIP: needs root (BPF)\n");
		return SKIP;
	}
	libbpf_set_print(NULL);
	snprintf(dir, sizeof(dir), "%s/xfib-test-open-%d", XFIB_BPFFS, getpid());
	if (xfib_check_bpffs(XFIB_BPFFS)) {
		printf("SKIP: no bpffs at %s\n", XFIB_BPFFS);
		return SKIP;
	}

	/* A fresh directory. */
	err = xfib_open_tbl24(dir, XFIB_OPEN_CREATE, &skel, &fd);
	expect(!err, "fresh directory: opened (%s)", strerror(-err));
	if (err)
		goto out;
	expect(fd >= 0, "fresh directory: a tbl24 is handed over");
	if (fd >= 0 && !fd_info(fd, &info) &&
	    !fd_info(bpf_map__fd(skel->maps.xfib_stats), &stats)) {
		expect(info.type == BPF_MAP_TYPE_ARRAY && info.key_size == 4 &&
			       info.value_size == XFIB_DIR24_TBL24_BYTES &&
			       info.max_entries == 1 &&
			       info.map_flags == BPF_F_MMAPABLE,
		       "it has the tbl24 shape (type %u, %u x %u bytes, flags 0x%x)",
		       info.type, info.max_entries, info.value_size,
		       info.map_flags);
		expect(!strcmp(info.name, "xfib_tbl24"), "it is named xfib_tbl24 (%s)",
		       info.name);
		expect(info.id < stats.id,
		       "it was made before libbpf's maps (id %u, xfib_stats %u)",
		       info.id, stats.id);
		expect(map_zeroed(fd, XFIB_DIR24_TBL24_BYTES), "it is zeroed");
		expect(outer_takes(dir, "xfib_dir24_tbl24", fd) &&
			       outer_takes(dir, "xfib_trie6_tbl24", fd),
		       "both tbl24 outer maps take it");
	}
	if (fd >= 0)
		close(fd);
	xfib_fwd_bpf__destroy(skel);
	skel = NULL;

	/* Everything pinned: nothing to make. */
	err = xfib_open_tbl24(dir, 0, &skel, &fd);
	expect(!err && fd == -1, "complete directory: opened (%s), no tbl24 (%d)",
	       strerror(-err), fd);
	if (fd >= 0)
		close(fd);
	xfib_fwd_bpf__destroy(skel);
	skel = NULL;

	/* One outer map gone: made again. */
	snprintf(path, sizeof(path), "%s/xfib_trie6_tbl24", dir);
	expect(!unlink(path), "xfib_trie6_tbl24 unpinned");
	err = xfib_open_tbl24(dir, 0, &skel, &fd);
	expect(!err && fd >= 0 && !access(path, F_OK),
	       "xfib_trie6_tbl24 made again (%s), with a tbl24 (%d)",
	       strerror(-err), fd);
	if (fd >= 0)
		close(fd);
	xfib_fwd_bpf__destroy(skel);
	skel = NULL;
	remove_dir(dir);

	/* xfibctl's open: nothing handed over, the outer maps there. */
	err = xfib_open(dir, XFIB_OPEN_CREATE, &skel);
	snprintf(path, sizeof(path), "%s/xfib_dir24_tbl24", dir);
	expect(!err && !access(path, F_OK), "xfib_open: fresh directory opened (%s)",
	       strerror(-err));
	xfib_fwd_bpf__destroy(skel);
	skel = NULL;
	remove_dir(dir);

	/* Loaders racing on fresh directories. */
	for (i = 0, ok = 0; i < 10; i++) {
		ok += race_round(dir);
		remove_dir(dir);
	}
	expect(ok == 10, "%d racing loaders on a fresh directory all hold the pinned outer maps: %d of 10 rounds",
	       RACERS, ok);
out:
	xfib_fwd_bpf__destroy(skel);
	remove_dir(dir);
	printf("%d cases, %d failed\n", ncases, nfailed);
	return nfailed ? 1 : 0;
}
