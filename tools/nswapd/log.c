// SPDX-License-Identifier: GPL-2.0
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#include "log.h"

static const char *const level_names[] = { "error", "warn", "info", "debug" };
static const int syslog_priorities[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

static enum log_level log_max_level = LOG_LEVEL_INFO;
static bool log_to_syslog;

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

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!log_enabled(level))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_to_syslog)
		syslog(syslog_priorities[level], "%s", line);
	else
		fprintf(stderr, "%s: %s\n", level_names[level], line);
}
