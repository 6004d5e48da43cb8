// SPDX-License-Identifier: GPL-2.0-only
/*
 * Logging for xfibd and xfibctl: stderr or syslog, by level.
 *
 * A daemon's stderr is either a terminal or file (each line gets a local
 * timestamp) or, under systemd, the journal, which timestamps lines itself
 * and reads a "<N>" syslog priority prefix. A message repeated identically
 * (a flapping link, a failing map write retried every batch) is printed
 * once per LOG_REPEAT_WINDOW_MS, then summed up as "last message repeated
 * N times", as syslogd does, so a storm cannot flood the log.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "log.h"
#include "monoclock.h"

int log_level = LOG_LEVEL_WARN;
static const char *log_prog = "xfib";
static unsigned int log_flags;
static int log_journal;

/* The last message printed, for collapsing repeats. xfibd logs from two
 * threads while it builds both families' tables (fib.c): the lock keeps
 * this and the lines whole. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *text; /* malloc()ed, or NULL */
	enum log_level level;
	unsigned long long since_ms; /* when it was last printed */
	unsigned int repeats;        /* suppressed since then */
} last;

static const int log_prio[] = { LOG_WARNING, LOG_INFO, LOG_DEBUG };

/* True if stderr is the stream systemd named in JOURNAL_STREAM ("dev:ino"). */
static int stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(2, &st))
		return 0;
	return st.st_dev == dev && st.st_ino == ino;
}

void log_init(const char *prog, unsigned int flags)
{
	log_prog = prog;
	log_flags = flags;
	log_journal = (flags & XLOG_DAEMON) && stderr_is_journal();
	if (flags & XLOG_SYSLOG)
		openlog(prog, LOG_PID, LOG_DAEMON);
}

static void log_emit_line(enum log_level level, const char *line, int len)
{
	struct timespec ts;
	char when[32];
	struct tm tm;

	if (log_flags & XLOG_SYSLOG) {
		syslog(log_prio[level], "%.*s", len, line);
		return;
	}
	if (log_journal) {
		fprintf(stderr, "<%d>%.*s\n", log_prio[level], len, line);
		return;
	}
	if (log_flags & XLOG_DAEMON) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03ld ", when, ts.tv_nsec / 1000000);
	}
	fprintf(stderr, "%s: %.*s\n", log_prog, len, line);
}

/* A message of several lines (a verifier log) is as many log lines. */
static void log_emit(enum log_level level, const char *text)
{
	const char *nl;

	while ((nl = strchr(text, '\n'))) {
		log_emit_line(level, text, (int)(nl - text));
		text = nl + 1;
	}
	log_emit_line(level, text, (int)strlen(text));
}

static void flush_repeats(int force)
{
	char msg[64];

	if (!last.repeats ||
	    (!force && mono_ms() - last.since_ms < LOG_REPEAT_WINDOW_MS))
		return;
	snprintf(msg, sizeof(msg), "last message repeated %u time%s",
		 last.repeats, last.repeats == 1 ? "" : "s");
	log_emit(last.level, msg);
	last.repeats = 0;
	/* The next identical message is printed again, opening a window. */
	free(last.text);
	last.text = NULL;
}

void log_flush_repeats(int force)
{
	pthread_mutex_lock(&log_lock);
	flush_repeats(force);
	pthread_mutex_unlock(&log_lock);
}

/* The message, whole, in memory of its own (NULL if there is none). */
static char *format(const char *fmt, va_list ap)
{
	char *text;
	size_t n;

	if (vasprintf(&text, fmt, ap) < 0)
		return NULL;
	n = strlen(text);
	if (n && text[n - 1] == '\n') /* libbpf's messages end in one */
		text[n - 1] = 0;
	return text;
}

static void log_text(enum log_level level, char *text)
{
	unsigned long long now;

	pthread_mutex_lock(&log_lock);
	if (!(log_flags & XLOG_DAEMON)) {
		log_emit(level, text);
		free(text);
		goto out;
	}
	now = mono_ms();
	if (last.text && level == last.level && !strcmp(text, last.text) &&
	    now - last.since_ms < LOG_REPEAT_WINDOW_MS) {
		last.repeats++;
		free(text);
		goto out;
	}
	flush_repeats(1);
	log_emit(level, text);
	free(last.text);
	last.text = text;
	last.level = level;
	last.since_ms = now;
out:
	pthread_mutex_unlock(&log_lock);
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char *text;

	if ((int)level > log_level)
		return;
	text = format(fmt, ap);
	if (text)
		log_text(level, text);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

/* The end of the last verifier log libbpf printed. */
static char verifier_tail[1024];

#define LOG_BEGIN "-- BEGIN PROG LOAD LOG --\n"
#define LOG_END "-- END PROG LOAD LOG --"

/* Keeps the last lines of a verifier log libbpf prints (on a failed load,
 * as one message between the markers): the verifier's reason is there. */
static void keep_verifier_tail(const char *text)
{
	const char *begin = strstr(text, LOG_BEGIN), *end, *p;
	int lines = 0;

	if (!begin)
		return;
	begin += strlen(LOG_BEGIN);
	end = strstr(begin, LOG_END);
	if (!end)
		end = begin + strlen(begin);
	while (end > begin && end[-1] == '\n')
		end--;
	for (p = end; p > begin && lines < XFIB_VERIFIER_TAIL_LINES; p--)
		if (p[-1] == '\n' && ++lines == XFIB_VERIFIER_TAIL_LINES)
			break;
	if (end - p >= (long)sizeof(verifier_tail))
		p = end - (sizeof(verifier_tail) - 1);
	snprintf(verifier_tail, sizeof(verifier_tail), "%.*s", (int)(end - p), p);
}

const char *log_verifier_tail(void)
{
	return verifier_tail[0] ? verifier_tail : NULL;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	char *text;

	/* libbpf warns about things we handle (e.g. a missing pin we then
	 * create); show them only when asked. A verifier log is read
	 * whatever the level, for the error that follows. */
	if (level == LIBBPF_DEBUG && log_level < LOG_LEVEL_DEBUG + 1)
		return 0;
	text = format(fmt, ap);
	if (!text)
		return 0;
	if (level == LIBBPF_WARN)
		keep_verifier_tail(text);
	if (log_level < LOG_LEVEL_DEBUG)
		free(text);
	else
		log_text(LOG_LEVEL_DEBUG, text);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	if (log_level < LOG_LEVEL_DEBUG)
		return 0;
	log_vmsg(LOG_LEVEL_DEBUG, fmt, ap);
	return 0;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}
