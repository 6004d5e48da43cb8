/* SPDX-License-Identifier: GPL-2.0-only */
/* Finding, creating and opening a router's pinned dataplane. */
#ifndef XFIB_PIN_H
#define XFIB_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include "xfib_fwd.skel.h"

#define XFIB_BPFFS "/sys/fs/bpf"
#define XFIB_PIN_DIR_MAX 256

/*
 * The pin directory of this network namespace: override (from --pin-dir) if
 * set, else $XFIB_PIN_DIR, else /sys/fs/bpf/xfib in the initial namespace
 * and /sys/fs/bpf/xfib-ns<cookie> elsewhere, so that several routers on one
 * host keep separate dataplanes. Returns 0 or -errno.
 */
int xfib_pin_dir(const char *override, char *buf, size_t len);

/* 0 if dir (or, if it does not exist, its parent) is on a bpffs. */
int xfib_check_bpffs(const char *dir);

/*
 * Only root may change what the dataplane runs: a pin directory that
 * exists must be root's, mode 0700, and not a symlink. Returns 0 (also
 * when it does not exist), -EPERM with why (e.g. "mode 0755, not 0700")
 * filled in, or -errno.
 */
int xfib_pin_dir_safe(const char *dir, char *why, size_t len);

/* Creates the pin directory (root's, mode 0700) if missing; 0, -EPERM
 * if it exists and is not safe, -ENOTSUP if not on a bpffs, or -errno. */
int xfib_pin_dir_create(const char *dir);

/*
 * The daemon's exclusive lock on a pin directory: returns a file
 * descriptor holding it until closed (or the process exits), or
 * -EWOULDBLOCK with *holder set to the pid holding it (0 if unknown), or
 * -errno.
 */
int xfib_pin_lock(const char *dir, int *holder);

/*
 * kconfig.c: the kernel configuration values the program reads
 * (CONFIG_HZ) for libbpf when it cannot read the kernel's config itself
 * (no /proc/config.gz, no /boot/config-<release>): NULL if it can.
 * Without one, for an open that loads the program (prog), HZ is measured
 * (xfib_hz_measure), once per process; if that fails, 1000, the largest
 * in common use, with which the program refreshes conntrack timeouts on
 * more packets than it needs to. An open that loads only maps gets 1000
 * without measuring: no program reads it.
 */
const char *xfib_kconfig(bool prog);
/* The kernel's HZ, measured against CLOCK_MONOTONIC (about 60 ms), or
 * -errno. Needs CAP_BPF, as loading the program does. */
int xfib_hz_measure(void);

/*
 * Whether this kernel has the conntrack kfuncs the gate calls
 * (bpf/lib/ctgate.h): in vmlinux, or in nf_conntrack's BTF while that
 * module is loaded. xfib_open() loads the program built without them where
 * they are missing: its packets that conntrack would have to be asked
 * about go to the kernel (pass_ct_unavailable).
 */
bool xfib_ct_kfuncs(void);

/*
 * Opens the forwarder's object through its skeleton: the build with the
 * conntrack kfuncs if with_ct, else the one without (Makefile). Their maps
 * are the same, so either reuses the other's pins. NULL with errno set on
 * failure.
 */
struct xfib_fwd_bpf *xfib_fwd_open(const struct bpf_object_open_opts *opts,
				   bool with_ct);

enum xfib_open_flags {
	XFIB_OPEN_PROG = 1 << 0,   /* load the XDP program too */
	XFIB_OPEN_CREATE = 1 << 1, /* create the pin directory if missing */
};

/*
 * Opens the dataplane object with every map pinned under pin_dir: maps that
 * exist there are reused, missing ones are created and pinned. Without
 * XFIB_OPEN_PROG only the maps are loaded (the daemon needs no program).
 * Without XFIB_OPEN_CREATE a missing pin directory is -ENOENT, so that
 * looking at a router does not set one up. A pin directory that is not
 * safe (xfib_pin_dir_safe) is -EPERM, and nothing in it is touched; one
 * holding maps of another layout, or a map this build defines differently,
 * is -ESTALE (xfib_stale_why() says which). Returns 0 or -errno; *skel is
 * set on success.
 */
int xfib_open(const char *pin_dir, unsigned int flags, struct xfib_fwd_bpf **skel);
/*
 * xfib_open(), and in *tbl24_fd a map of the dir24_8 / trie6 tbl24 shape,
 * fresh and zeroed, if one was made as the template of outer maps created
 * now (a fresh pin directory): the caller owns it, and building its first
 * tbl24 there saves allocating and zeroing 64 MiB more. -1 if none.
 */
int xfib_open_tbl24(const char *pin_dir, unsigned int flags,
		    struct xfib_fwd_bpf **skel, int *tbl24_fd);

/*
 * 1 if a map pinned in pin_dir is not the map this build defines (a pin
 * left by another version of xfib: type, sizes or flags differ), with why
 * naming it and both shapes; 0 if none differs. xfib_open() returns
 * -ESTALE for such a pin: libbpf will not reuse it, and replacing it would
 * leave the programs attached reading a map nobody maintains. Maps of an
 * older layout are upgraded by xfibd (ctl/xfibd/upgrade.h); for maps
 * that differ at the same layout, or at none, the way out is a fresh
 * dataplane: detach every port, remove pin_dir, attach again and start
 * xfibd.
 */
int xfib_pin_mismatch(const char *pin_dir, char *why, size_t len);

/* mmap()s a BPF_F_MMAPABLE array map read-write (or read-only). */
void *xfib_map_mmap(const struct bpf_map *map, bool writable, size_t *len);

/* The pid of the xfibd maintaining these maps, or 0 if none is running. */
int xfib_daemon_pid(struct xfib_fwd_bpf *skel);

#endif /* XFIB_PIN_H */
