/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef XFIB_LOG_H
#define XFIB_LOG_H

#include <stdarg.h>

enum log_level {
	LOG_LEVEL_WARN = 0,
	LOG_LEVEL_INFO = 1,
	LOG_LEVEL_DEBUG = 2,
};

/* Messages above this level are dropped; -v raises it. */
extern int log_level;

enum log_flags {
	XLOG_SYSLOG = 1 << 0, /* to syslog (facility daemon) instead of stderr */
	/* A daemon's stderr: timestamps, or syslog priority prefixes when
	 * stderr is the journal (systemd sets JOURNAL_STREAM); identical
	 * messages in a row are collapsed. Without it (a CLI), plain lines. */
	XLOG_DAEMON = 1 << 1,
};

/* Identical messages within this window are counted, not repeated. */
#define LOG_REPEAT_WINDOW_MS 10000

void log_init(const char *prog, unsigned int flags);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Reports collapsed repeats whose window has passed (call now and then,
 * and before exiting, with force). */
void log_flush_repeats(int force);
/* Routes libbpf's messages through log_msg (debug ones only with -vv). */
void log_setup_libbpf(void);

/*
 * The last lines of the verifier's log of the last program libbpf failed
 * to load (the verifier says why at its end), or NULL if none failed;
 * the whole log is printed at -v.
 */
#define XFIB_VERIFIER_TAIL_LINES 6
const char *log_verifier_tail(void);

#define pr_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* XFIB_LOG_H */
