/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A dump's parts read on a second thread. The kernel does a dump's work
 * (walking its tables, filling the next part) inside the recvmsg() that
 * takes the part before; the daemon's parsing of the parts is about as
 * much work again. The reader thread does the recvfrom() calls into a
 * ring of buffers while the caller parses the parts already read, in
 * order, on its own thread: the two overlap on two CPUs. Nothing the
 * caller keeps (the RIB) is touched by the reader.
 */
#ifndef XFIB_NL_READER_H
#define XFIB_NL_READER_H

#include <stdbool.h>
#include <sys/types.h>

struct mnl_socket;

/*
 * Parts read ahead of the caller. Parsing is the slower side, so the
 * ring is full most of the time: its depth hardly matters beyond a few
 * parts.
 */
#define NL_RING_PARTS 16

struct nl_part {
	void *buf;
	/* Bytes read, or -errno of the recvfrom() that failed. */
	ssize_t len;
	/* Some message was flagged NLM_F_DUMP_INTR (the flag is cleared:
	 * libmnl would stop at it). */
	bool intr;
	/* The dump's last part: NLMSG_DONE or NLMSG_ERROR of its sequence
	 * number, or a failed read. Nothing is read after it. */
	bool last;
};

struct nl_reader;

struct nl_reader *nl_reader_new(void);
void nl_reader_free(struct nl_reader *r);
/* Starts reading the dump of sequence number seq, already requested on
 * sock (if no thread can be started, nl_reader_next() reads each part
 * itself). */
void nl_reader_start(struct nl_reader *r, struct mnl_socket *sock,
		     unsigned int seq);
/* The next part in order, waiting for it; NULL once the last part was
 * handed out and released. */
struct nl_part *nl_reader_next(struct nl_reader *r);
/* Gives the part nl_reader_next() returned back to the reader. */
void nl_reader_release(struct nl_reader *r);
/* After nl_reader_next() returned NULL: waits for the thread to end. */
void nl_reader_join(struct nl_reader *r);

#endif /* XFIB_NL_READER_H */
