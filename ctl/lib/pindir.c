// SPDX-License-Identifier: GPL-2.0-only
/*
 * The pin directory: where a namespace's xfib maps are pinned (one
 * directory per network namespace), whether it is on a BPF filesystem
 * and safe to use, and the lock that keeps one xfibd per directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/sysmacros.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "xfib/maps.h"
#include "pin.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* Since Linux 6.14 the initial network namespace has a fixed inode. */
#define PROC_NET_INIT_INO 0xEFFFFFF9U

/* 1 if we are in the initial network namespace. */
static int in_initial_netns(void)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self))
		return 0;
	/* pid 1's namespace may be unreadable (sandboxes, hidepid). */
	if (stat("/proc/1/ns/net", &init) == 0)
		return self.st_ino == init.st_ino && self.st_dev == init.st_dev;
	return self.st_ino == PROC_NET_INIT_INO;
}

int xfib_pin_dir(const char *override, char *buf, size_t len)
{
	const char *env = getenv("XFIB_PIN_DIR");
	__u64 cookie = 0;
	socklen_t clen = sizeof(cookie);
	int fd, n;

	if (!override && env && *env)
		override = env;
	if (override)
		n = snprintf(buf, len, "%s", override);
	else if (in_initial_netns())
		n = snprintf(buf, len, "%s/xfib", XFIB_BPFFS);
	else {
		/* The cookie, unlike the namespace inode, is never reused, so a
		 * new namespace cannot pick up a dead one's stale maps. */
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &clen)) {
			n = -errno;
			close(fd);
			return n;
		}
		close(fd);
		n = snprintf(buf, len, "%s/xfib-ns%llu", XFIB_BPFFS,
			     (unsigned long long)cookie);
	}
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int xfib_check_bpffs(const char *dir)
{
	char parent[XFIB_PIN_DIR_MAX];
	struct statfs st;
	char *slash;

	if (statfs(dir, &st) == 0)
		return st.f_type == BPF_FS_MAGIC ? 0 : -ENOTSUP;
	if (errno != ENOENT)
		return -errno;
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return -ENOTSUP;
	if (slash == parent)
		slash[1] = '\0';
	else
		*slash = '\0';
	if (statfs(parent, &st))
		return -errno;
	return st.f_type == BPF_FS_MAGIC ? 0 : -ENOTSUP;
}

int xfib_pin_dir_safe(const char *dir, char *why, size_t len)
{
	struct stat st;

	if (lstat(dir, &st))
		return errno == ENOENT ? 0 : -errno;
	/* Whoever can write here can swap the maps or the program the
	 * dataplane runs, and with them what it forwards. */
	if (!S_ISDIR(st.st_mode))
		snprintf(why, len, "not a directory");
	else if (st.st_uid != 0)
		snprintf(why, len, "owned by uid %u, not root", st.st_uid);
	else if ((st.st_mode & 07777) != 0700)
		snprintf(why, len, "mode %04o, not 0700", st.st_mode & 07777);
	else
		return 0;
	return -EPERM;
}

/* The pid holding a flock() on dev:ino, from /proc/locks; 0 if unknown. */
static int flock_holder(dev_t dev, ino_t ino)
{
	unsigned int maj, min;
	unsigned long long i;
	char line[256], kind[16];
	int pid, found = 0;
	FILE *f = fopen("/proc/locks", "re");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		/* "1: FLOCK  ADVISORY  WRITE 1234 00:1f:5678 0 EOF"; waiting
		 * lockers have "->" before the kind and do not match. */
		if (sscanf(line, "%*d: %15s %*s %*s %d %x:%x:%llu", kind, &pid,
			   &maj, &min, &i) == 5 &&
		    !strcmp(kind, "FLOCK") && makedev(maj, min) == dev && i == ino)
			found = pid;
	fclose(f);
	return found;
}

int xfib_pin_lock(const char *dir, int *holder)
{
	struct stat st;
	int fd, err;

	*holder = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	err = -errno;
	if (err == -EWOULDBLOCK && !fstat(fd, &st))
		*holder = flock_holder(st.st_dev, st.st_ino);
	close(fd);
	return err;
}

int xfib_pin_dir_create(const char *dir)
{
	char why[64];
	int err;

	err = xfib_check_bpffs(dir);
	if (err)
		return err;
	if (mkdir(dir, 0700) == 0) {
		/* Whatever the umask took away: exactly 0700. */
		if (chmod(dir, 0700))
			return -errno;
	} else if (errno != EEXIST) {
		return -errno;
	}
	return xfib_pin_dir_safe(dir, why, sizeof(why));
}
