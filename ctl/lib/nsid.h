/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A network namespace found by its nsid, the number another namespace has
 * in ours (a veth's IFLA_LINK_NETNSID when its peer is there; the origin
 * of a notification read with NETLINK_LISTEN_ALL_NSID). The kernel opens
 * no namespace by its nsid; it only tells the nsid of one that is open
 * (RTM_GETNSID with NETNSA_FD). So the candidates are tried: the named
 * namespaces (/run/netns/NAME) and every process's (/proc/PID/ns/net).
 *
 * No namespace file stays open after a call: an open one would keep its
 * namespace, and the devices in it, alive after everything else let it
 * go. Where each nsid was last found is remembered, and checked again
 * before it is used.
 */
#ifndef XFIB_NSID_H
#define XFIB_NSID_H

#include <stddef.h>
#include <linux/types.h>

struct mnl_socket;

/* Where namespaces were last found, by nsid. */
struct nsid_cache {
	struct nsid_path {
		int nsid;
		char *path;
	} *v;
	size_t n;
};

/* The nsid our namespace gives the namespace open at fd: >= 0, -1 if it
 * gives it none (NETNSA_NSID_NOT_ASSIGNED), or -errno. nl: an rtnetlink
 * request socket; seq: its sequence counter. */
int nsid_of(struct mnl_socket *nl, __u32 *seq, int fd);

/* The nsid our namespace gives itself (usually none: -1), or -errno. */
int nsid_of_self(struct mnl_socket *nl, __u32 *seq);

/*
 * A socket(domain, type) created inside the namespace of the given nsid,
 * which then acts there (its ioctls name that namespace's devices); the
 * calling thread enters it for that moment only. The fd, or -errno, with
 * the step that failed in *step: -ENOENT when no such namespace was found,
 * -EPERM when it may not be entered (setns needs CAP_SYS_ADMIN). Aborts
 * the process if the thread cannot return to its own namespace.
 */
int nsid_socket(struct mnl_socket *nl, __u32 *seq, struct nsid_cache *c,
		int nsid, int domain, int type, const char **step);

void nsid_cache_free(struct nsid_cache *c);

#endif /* XFIB_NSID_H */
