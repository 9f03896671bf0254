/* SPDX-License-Identifier: GPL-2.0 */
/* One line per event, to stderr (foreground) or syslog (daemon). */
#ifndef NSWAPD_LOG_H
#define NSWAPD_LOG_H

#include <stdbool.h>
#include <stdint.h>

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

/*
 * A token bucket: burst tokens at first, one more every interval_ms, never
 * more than burst.
 */
struct ratelimit {
	unsigned int burst;
	uint64_t interval_ms;
	unsigned int tokens;
	uint64_t refilled_ms;		/* tokens are counted up to this time */
	bool started;
};

/* Takes a token at now_ms if there is one. */
bool ratelimit_take(struct ratelimit *rl, uint64_t now_ms);

/*
 * Lines a peer can cause at will share one bucket per level, as
 * printk_ratelimited() does in the kernel: a burst of LOG_PEER_BURST
 * lines, then one every LOG_PEER_INTERVAL_MS.  Warnings (a bad handshake
 * or message, a limit reached, a timeout) have one bucket, info lines (a
 * client authenticated, a namespace made or freed) another, so that a key
 * holder connecting in a loop cannot hide the warnings.  The lines dropped
 * are counted and said in one line of their level, before the next line
 * let through or by log_peer_flush().
 */
#define LOG_PEER_BURST 10
#define LOG_PEER_INTERVAL_MS 200

/* level: LOG_LEVEL_WARN or LOG_LEVEL_INFO */
void log_peer_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Says how many peer lines were dropped, if some were and a line may go out. */
void log_peer_flush(void);
/* For tests: the clock of the peer bucket (default monotonic_ms()). */
void log_set_clock(uint64_t (*now_ms)(void));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)
#define log_warn_peer(...) log_peer_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info_peer(...) log_peer_msg(LOG_LEVEL_INFO, __VA_ARGS__)

#endif
