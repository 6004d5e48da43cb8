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

void log_init(const char *prog, int use_syslog);
void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Routes libbpf's messages through log_msg (debug ones only with -vv). */
void log_setup_libbpf(void);

#define pr_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif /* XFIB_LOG_H */
