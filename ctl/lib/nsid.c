// SPDX-License-Identifier: GPL-2.0-only
/* A network namespace found by its nsid: see nsid.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/net_namespace.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "nlreq.h"
#include "nsid.h"

#define SELF_NS "/proc/thread-self/ns/net"
/* Namespaces remembered at most: beyond, only the one asked for. */
#define NSID_CACHE_MAX 1024

static int nsid_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *a;
	int *nsid = data;

	if (nlh->nlmsg_type != RTM_NEWNSID)
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(struct rtgenmsg)) {
		if (mnl_attr_type_valid(a, NETNSA_MAX) < 0)
			continue;
		if (mnl_attr_get_type(a) == NETNSA_NSID &&
		    mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
			*nsid = (int)mnl_attr_get_u32(a);
	}
	return MNL_CB_OK;
}

int nsid_of(struct mnl_socket *nl, __u32 *seq, int fd)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtgenmsg *g;
	int nsid = NETNSA_NSID_NOT_ASSIGNED, err;

	nlh->nlmsg_type = RTM_GETNSID;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->rtgen_family = AF_UNSPEC;
	mnl_attr_put_u32(nlh, NETNSA_FD, fd);
	err = nlreq_run(nl, nlh, ++*seq, nsid_cb, &nsid);
	if (err)
		return err;
	return nsid < 0 ? -1 : nsid;
}

int nsid_of_self(struct mnl_socket *nl, __u32 *seq)
{
	int fd = open(SELF_NS, O_RDONLY | O_CLOEXEC), nsid;

	if (fd < 0)
		return -errno;
	nsid = nsid_of(nl, seq, fd);
	close(fd);
	return nsid;
}

/* ---- where namespaces are ------------------------------------------------ */

static void cache_put(struct nsid_cache *c, int nsid, const char *path)
{
	struct nsid_path *v;
	char *p;
	size_t i;

	for (i = 0; i < c->n && c->v[i].nsid != nsid; i++)
		;
	if (i == c->n && c->n >= NSID_CACHE_MAX)
		return;
	p = strdup(path);
	if (!p)
		return;
	if (i == c->n) {
		v = realloc(c->v, (c->n + 1) * sizeof(*v));
		if (!v) {
			free(p);
			return;
		}
		c->v = v;
		c->v[c->n++].nsid = nsid;
	} else {
		free(c->v[i].path);
	}
	c->v[i].path = p;
}

static void cache_drop(struct nsid_cache *c, int nsid)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (c->v[i].nsid != nsid)
			continue;
		free(c->v[i].path);
		c->v[i] = c->v[--c->n];
		return;
	}
}

void nsid_cache_free(struct nsid_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	c->v = NULL;
	c->n = 0;
}

/* One search: the namespaces already tried (a namespace has many
 * processes, and may be named too). */
struct scan {
	struct mnl_socket *nl;
	__u32 *seq;
	struct nsid_cache *c;
	int want;
	struct stat *seen;
	size_t nseen, cap;
};

static bool seen_before(struct scan *s, const struct stat *st)
{
	struct stat *v;
	size_t i;

	for (i = 0; i < s->nseen; i++)
		if (s->seen[i].st_dev == st->st_dev &&
		    s->seen[i].st_ino == st->st_ino)
			return true;
	if (s->nseen == s->cap) {
		v = realloc(s->seen, (s->cap ? 2 * s->cap : 64) * sizeof(*v));
		if (!v)
			return false; /* tried again, which costs time only */
		s->seen = v;
		s->cap = s->cap ? 2 * s->cap : 64;
	}
	s->seen[s->nseen++] = *st;
	return false;
}

/* The namespace file at path, open, if its nsid is the one wanted; else
 * -1. Remembers where every namespace with an nsid was seen. */
static int try_path(struct scan *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), nsid;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || seen_before(s, &st)) {
		close(fd);
		return -1;
	}
	nsid = nsid_of(s->nl, s->seq, fd);
	if (nsid >= 0)
		cache_put(s->c, nsid, path);
	if (nsid >= 0 && nsid == s->want)
		return fd;
	close(fd);
	return -1;
}

/* Tries every entry of dir (all, or only processes' numbers) as
 * dir/NAME/suffix: the open namespace wanted, or -1. */
static int try_dir(struct scan *s, const char *dir, const char *suffix,
		   bool pids)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int fd = -1;

	if (!d)
		return -1;
	while (fd < 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.' ||
		    (pids && strspn(e->d_name, "0123456789") != strlen(e->d_name)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s%s", dir, e->d_name,
			     suffix) >= (int)sizeof(path))
			continue;
		fd = try_path(s, path);
	}
	closedir(d);
	return fd;
}

/* The namespace of nsid, open: where it was last found if it is still
 * there, else searched for. The fd, or -ENOENT. */
static int nsid_open(struct mnl_socket *nl, __u32 *seq, struct nsid_cache *c,
		     int nsid)
{
	struct scan s = { .nl = nl, .seq = seq, .c = c, .want = nsid };
	int fd = -1;
	size_t i;

	for (i = 0; i < c->n && c->v[i].nsid != nsid; i++)
		;
	if (i < c->n) {
		fd = open(c->v[i].path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && nsid_of(nl, seq, fd) == nsid)
			return fd;
		if (fd >= 0)
			close(fd);
		cache_drop(c, nsid);
	}
	fd = try_dir(&s, "/run/netns", "", false);
	if (fd < 0)
		fd = try_dir(&s, "/proc", "/ns/net", true);
	free(s.seen);
	return fd < 0 ? -ENOENT : fd;
}

/* Back in our own namespace, or nothing this process does after is
 * right: its sockets, devices and routes would be another namespace's. */
static void return_home(int self)
{
	if (!setns(self, CLONE_NEWNET))
		return;
	pr_warn("cannot return to our own network namespace after entering another (setns: %s): stopping",
		strerror(errno));
	abort();
}

int nsid_socket(struct mnl_socket *nl, __u32 *seq, struct nsid_cache *c,
		int nsid, int domain, int type, const char **step)
{
	int self, ns, sock = -1, err = 0;

	self = open(SELF_NS, O_RDONLY | O_CLOEXEC);
	if (self < 0) {
		*step = "opening " SELF_NS;
		return -errno;
	}
	ns = nsid_open(nl, seq, c, nsid);
	if (ns < 0) {
		*step = "finding the namespace in /run/netns and /proc";
		close(self);
		return ns;
	}
	if (setns(ns, CLONE_NEWNET)) {
		err = -errno;
		*step = "entering the namespace";
	} else {
		sock = socket(domain, type | SOCK_CLOEXEC, 0);
		if (sock < 0) {
			err = -errno;
			*step = "creating a socket in the namespace";
		}
		return_home(self);
	}
	close(ns);
	close(self);
	return err ? err : sock;
}
