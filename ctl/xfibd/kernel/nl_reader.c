// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <linux/netlink.h>
#include <libmnl/libmnl.h>

#include "nl_reader.h"

/* A part is at most 32 KiB for most dumps; a device with many VFs makes
 * the kernel allocate more for the link dump. */
#define NL_PART_SIZE (1 << 16)

struct nl_reader {
	pthread_mutex_t lock;
	pthread_cond_t filled; /* the caller may take a part */
	pthread_cond_t freed;  /* the reader may read again */
	struct nl_part part[NL_RING_PARTS];
	/* Under lock: part[head] and the count - 1 after it (wrapping)
	 * are read and not yet released; the reader fills the one after
	 * those, outside the lock, as nobody else touches it. */
	unsigned int head, count;
	bool caller_waits, reader_waits;
	/* The caller's: the last part was released; no thread (it could
	 * not be started), the caller reads the parts itself. */
	bool done, inline_read;
	pthread_t thread;
	struct mnl_socket *sock;
	unsigned int seq;
	char *bufs;
};

struct nl_reader *nl_reader_new(void)
{
	struct nl_reader *r = calloc(1, sizeof(*r));
	int i;

	if (!r)
		return NULL;
	r->bufs = malloc((size_t)NL_RING_PARTS * NL_PART_SIZE);
	if (!r->bufs) {
		free(r);
		return NULL;
	}
	for (i = 0; i < NL_RING_PARTS; i++)
		r->part[i].buf = r->bufs + (size_t)i * NL_PART_SIZE;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->filled, NULL);
	pthread_cond_init(&r->freed, NULL);
	return r;
}

void nl_reader_free(struct nl_reader *r)
{
	if (!r)
		return;
	pthread_cond_destroy(&r->freed);
	pthread_cond_destroy(&r->filled);
	pthread_mutex_destroy(&r->lock);
	free(r->bufs);
	free(r);
}

/*
 * The kernel flags the parts of a dump NLM_F_DUMP_INTR when what it dumps
 * changed since the dump began (links, addresses, netconf). libmnl's
 * mnl_cb_run() stops at the first flagged message with EINTR, so the
 * dump failed halfway and left its remaining parts on the socket, where
 * the next dump read them as replies with the wrong sequence number
 * (EPROTO), and so on: resyncs failed from then on. The flagged messages
 * are valid, only perhaps not consistent with each other: the flag is
 * noted for nl_dump_all() to dump again, and cleared so the dump is read
 * to its end.
 * The dump ends with NLMSG_DONE, or NLMSG_ERROR if the kernel refused
 * it, of its own sequence number: parts of an older dump left on the
 * socket (which the caller rejects) are read past, so that none of this
 * one is left behind for the next.
 */
static void part_read(struct nl_reader *r, struct nl_part *p)
{
	struct nlmsghdr *nlh = p->buf;
	int len;

	p->intr = false;
	p->last = false;
	p->len = mnl_socket_recvfrom(r->sock, p->buf, NL_PART_SIZE);
	if (p->len < 0) {
		p->len = -errno;
		p->last = true;
		return;
	}
	len = p->len;
	for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
		if (nlh->nlmsg_flags & NLM_F_DUMP_INTR) {
			p->intr = true;
			nlh->nlmsg_flags &= ~NLM_F_DUMP_INTR;
		}
		if ((nlh->nlmsg_type == NLMSG_DONE ||
		     nlh->nlmsg_type == NLMSG_ERROR) && nlh->nlmsg_seq == r->seq)
			p->last = true;
	}
}

static void *reader_main(void *arg)
{
	struct nl_reader *r = arg;
	unsigned int fill = 0;
	bool last;

	do {
		pthread_mutex_lock(&r->lock);
		while (r->count == NL_RING_PARTS) {
			r->reader_waits = true;
			pthread_cond_wait(&r->freed, &r->lock);
		}
		pthread_mutex_unlock(&r->lock);

		part_read(r, &r->part[fill]);
		last = r->part[fill].last;
		fill = (fill + 1) % NL_RING_PARTS;

		pthread_mutex_lock(&r->lock);
		r->count++;
		if (r->caller_waits) {
			r->caller_waits = false;
			pthread_cond_signal(&r->filled);
		}
		pthread_mutex_unlock(&r->lock);
	} while (!last);
	return NULL;
}

void nl_reader_start(struct nl_reader *r, struct mnl_socket *sock,
		     unsigned int seq)
{
	sigset_t all, old;
	int err;

	r->sock = sock;
	r->seq = seq;
	r->head = r->count = 0;
	r->caller_waits = r->reader_waits = false;
	r->done = false;
	/* Signals stay with the caller's thread, which handles them as
	 * before: the reader starts with all of them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, NULL, reader_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Without a thread (out of memory or threads), the caller reads. */
	r->inline_read = err != 0;
}

struct nl_part *nl_reader_next(struct nl_reader *r)
{
	if (r->done)
		return NULL;
	if (r->inline_read) {
		part_read(r, &r->part[0]);
		return &r->part[0];
	}
	pthread_mutex_lock(&r->lock);
	while (!r->count) {
		r->caller_waits = true;
		pthread_cond_wait(&r->filled, &r->lock);
	}
	pthread_mutex_unlock(&r->lock);
	return &r->part[r->head];
}

void nl_reader_release(struct nl_reader *r)
{
	bool last;

	if (r->inline_read) {
		r->done = r->part[0].last;
		return;
	}
	/* Read before the part is given back: the reader refills it. */
	last = r->part[r->head].last;
	pthread_mutex_lock(&r->lock);
	r->head = (r->head + 1) % NL_RING_PARTS;
	r->count--;
	/* A reader that found the ring full waits until half of it is free,
	 * not for each part, to wake up less. */
	if (r->reader_waits && r->count <= NL_RING_PARTS / 2) {
		r->reader_waits = false;
		pthread_cond_signal(&r->freed);
	}
	pthread_mutex_unlock(&r->lock);
	r->done = last;
}

void nl_reader_join(struct nl_reader *r)
{
	if (!r->inline_read)
		pthread_join(r->thread, NULL);
}
