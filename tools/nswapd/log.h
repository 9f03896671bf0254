/* SPDX-License-Identifier: GPL-2.0 */
/* One line per event, to stderr (foreground) or syslog (daemon). */
#ifndef NSWAPD_LOG_H
#define NSWAPD_LOG_H

#include <stdbool.h>

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG,
};

void log_setup(enum log_level max_level, bool use_syslog);
/* Returns 0 and sets *level for "error", "warn", "info" or "debug". */
int log_parse_level(const char *name, enum log_level *level);
bool log_enabled(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
