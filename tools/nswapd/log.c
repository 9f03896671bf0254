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
static struct ratelimit peer_limit = {
	.burst = LOG_PEER_BURST, .interval_ms = LOG_PEER_INTERVAL_MS,
};
static uint64_t peer_suppressed;
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

static void log_peer_suppressed(void)
{
	log_msg(LOG_LEVEL_WARN, "%llu log lines about peers suppressed",
		(unsigned long long)peer_suppressed);
	peer_suppressed = 0;
}

void log_peer_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(level))
		return;
	if (!ratelimit_take(&peer_limit, clock_ms())) {
		peer_suppressed++;
		return;
	}
	if (peer_suppressed)
		log_peer_suppressed();
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_peer_flush(void)
{
	if (peer_suppressed && ratelimit_take(&peer_limit, clock_ms()))
		log_peer_suppressed();
}

void log_set_clock(uint64_t (*now_ms)(void))
{
	clock_ms = now_ms;
}
