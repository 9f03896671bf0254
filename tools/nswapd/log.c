// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "log.h"
#include "util.h"

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const int syslog_priorities[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

static enum log_level log_max_level = LOG_LEVEL_INFO;
static bool log_to_syslog;

/* The lines of one level that peers cause: their bucket, and how many it dropped. */
struct peer_lines {
	enum log_level level;
	struct ratelimit limit;
	uint64_t suppressed;
};

static struct peer_lines peer_warnings = {
	.level = LOG_LEVEL_WARN,
	.limit = { .burst = LOG_PEER_BURST, .interval_ms = LOG_PEER_INTERVAL_MS },
};
static struct peer_lines peer_info = {
	.level = LOG_LEVEL_INFO,
	.limit = { .burst = LOG_PEER_BURST, .interval_ms = LOG_PEER_INTERVAL_MS },
};
static uint64_t (*clock_ms)(void) = monotonic_ms;

void log_setup(enum log_level max_level, bool use_syslog)
{
	log_max_level = max_level;
	log_to_syslog = use_syslog;
	if (use_syslog)
		openlog("nswapd", LOG_PID, LOG_DAEMON);
}

int log_parse_level(const char *name, enum log_level *level)
{
	unsigned int i;

	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (!strcmp(name, level_names[i])) {
			*level = (enum log_level)i;
			return 0;
		}
	}
	return -1;
}

bool log_enabled(enum log_level level)
{
	return level <= log_max_level;
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (log_to_syslog)
		syslog(syslog_priorities[level], "%s", line);
	else
		fprintf(stderr, "%s: %s\n", level_names[level], line);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

bool ratelimit_take(struct ratelimit *rl, uint64_t now_ms)
{
	uint64_t earned;

	if (!rl->started) {
		rl->tokens = rl->burst;
		rl->refilled_ms = now_ms;
		rl->started = true;
	}
	earned = (now_ms - rl->refilled_ms) / rl->interval_ms;
	if (earned >= rl->burst - rl->tokens) {
		rl->tokens = rl->burst;
		rl->refilled_ms = now_ms;
	} else {
		rl->tokens += (unsigned int)earned;
		rl->refilled_ms += earned * rl->interval_ms;
	}
	if (!rl->tokens)
		return false;
	rl->tokens--;
	return true;
}

static void log_peer_suppressed(struct peer_lines *lines)
{
	log_msg(lines->level, "%llu log lines about peers suppressed",
		(unsigned long long)lines->suppressed);
	lines->suppressed = 0;
}

void log_peer_msg(enum log_level level, const char *fmt, ...)
{
	struct peer_lines *lines = level == LOG_LEVEL_INFO ? &peer_info : &peer_warnings;
	va_list ap;

	if (!log_enabled(level))
		return;
	if (!ratelimit_take(&lines->limit, clock_ms())) {
		lines->suppressed++;
		return;
	}
	if (lines->suppressed)
		log_peer_suppressed(lines);
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

static void flush_suppressed(struct peer_lines *lines)
{
	if (lines->suppressed && ratelimit_take(&lines->limit, clock_ms()))
		log_peer_suppressed(lines);
}

void log_peer_flush(void)
{
	flush_suppressed(&peer_warnings);
	flush_suppressed(&peer_info);
}

void log_set_clock(uint64_t (*now_ms)(void))
{
	clock_ms = now_ms;
}
