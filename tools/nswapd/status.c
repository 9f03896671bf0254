// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "peer.h"
#include "server.h"
#include "status.h"
#include "util.h"

#define STATUS_HEADER "nswapd-status 1"
#define STATUS_MAX_BYTES (16u << 20)
#define STATUS_TIMEOUT_S 5

static int render_line(struct outq *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int render_line(struct outq *out, const char *fmt, ...)
{
	char line[2048];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) - 1)
		return -1;
	line[n] = '\n';
	return outq_append(out, line, (size_t)n + 1);
}

/* A byte count or "none" for MEM_UNKNOWN / NO_MAX_PAGES. */
static const char *number_or_none(uint64_t v, char *buf, size_t size)
{
	if (v == UINT64_MAX)
		return "none";
	snprintf(buf, size, "%llu", (unsigned long long)v);
	return buf;
}

/* The leave's start and deadline (Unix time), its pages at the start, given back, left. */
static void leave_fields(const struct server *srv, char fields[5][24])
{
	struct timespec now;
	uint64_t started_ms;

	clock_gettime(CLOCK_REALTIME, &now);
	started_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000 -
		     (srv->now_ms - srv->leave.started_ms);
	snprintf(fields[0], 24, "%llu", (unsigned long long)started_ms / 1000);
	snprintf(fields[1], 24, "%llu", (unsigned long long)(started_ms + srv->leave.deadline_ms -
							     srv->leave.started_ms) / 1000);
	snprintf(fields[2], 24, "%llu", (unsigned long long)srv->leave.pages_at_start);
	snprintf(fields[3], 24, "%llu", (unsigned long long)server_leave_given_back(srv));
	snprintf(fields[4], 24, "%llu", (unsigned long long)server_held_pages(srv));
}

static int render_peers(const struct server *srv, struct outq *out)
{
	struct peer_info peers[MAX_PEERS];
	unsigned int i, count = migrate_peers(srv, peers, MAX_PEERS);

	for (i = 0; i < count; i++)
		if (render_line(out, "peer address=%s connected=%d free_pages=%llu", peers[i].desc,
				peers[i].connected, (unsigned long long)peers[i].free_pages))
			return -1;
	return 0;
}

int status_render(const struct server *srv, const char *listen_desc, struct outq *out)
{
	char max[24], max_file[24], available[24], headroom[24];
	char leave[5][24] = { "none", "none", "none", "none", "none" };
	const struct namespace *ns;
	unsigned int namespaces = 0;

	for (ns = srv->namespaces; ns; ns = ns->next)
		namespaces++;
	if (srv->leave.leaving)
		leave_fields(srv, leave);
	if (render_line(out, STATUS_HEADER) ||
	    render_line(out, "server listen=%s pid=%d uptime_s=%llu max_pages=%s max_file_pages=%s "
			"max_file_failed=%d limit_pages=%llu limit_source=%s held_pages=%llu "
			"free_pages=%llu mem_available=%s cgroup_headroom=%s "
			"reserve=%llu connections=%u namespaces=%u protocol_errors=%llu "
			"auth_failures=%llu mac_failures=%llu evict_pending=%llu locked=%s "
			"memory_unknown=%d longest_probe=%zu max_connections=%u "
			"connections_refused=%llu connections_replaced=%llu buffer_bytes=%zu "
			"buffer_budget=%zu client_buffer_budget=%zu max_connections_per_client=%u "
			"client_connections_refused=%llu max_namespaces_per_client=%u "
			"client_namespaces_refused=%llu requests_put=%llu requests_get=%llu "
			"requests_free=%llu pages_put=%llu keys_freed=%llu namespaces_released=%llu "
			"leaving=%d leave_started=%s "
			"leave_deadline=%s leave_pages_at_start=%s leave_pages_given_back=%s "
			"leave_pages_left=%s pages_migrated_out=%llu pages_migrated_in=%llu "
			"moves_refused=%llu migrate_pending=%llu pages_copied_out=%llu",
			listen_desc, (int)getpid(),
			(unsigned long long)(srv->now_ms - srv->started_ms) / 1000,
			number_or_none(srv->cfg.max_pages, max, sizeof(max)),
			number_or_none(srv->cfg.max_file ? srv->cfg.max_file_pages : NO_MAX_PAGES,
				       max_file, sizeof(max_file)),
			srv->max_file_failed, (unsigned long long)srv->limit_pages,
			server_limit_source_name(srv->limit_source),
			(unsigned long long)server_held_pages(srv),
			(unsigned long long)server_free_pages(srv),
			number_or_none(srv->mem.mem_available, available, sizeof(available)),
			number_or_none(srv->mem.cgroup_headroom, headroom, sizeof(headroom)),
			(unsigned long long)srv->cfg.reserve_bytes, srv->conn_count, namespaces,
			(unsigned long long)srv->protocol_errors,
			(unsigned long long)srv->auth_failures,
			(unsigned long long)srv->mac_failures,
			(unsigned long long)srv->evict_pending,
			srv->pool.lock_frames ? "yes" : "no", srv->memory_unknown,
			srv->pool.longest_probe, srv->cfg.max_connections,
			(unsigned long long)srv->conns_refused,
			(unsigned long long)srv->conns_replaced, srv->buffer_bytes,
			srv->cfg.buffer_budget, srv->client_buffer_budget,
			srv->cfg.max_conns_per_client,
			(unsigned long long)srv->client_conns_refused,
			srv->cfg.max_namespaces_per_client,
			(unsigned long long)srv->client_namespaces_refused,
			(unsigned long long)srv->requests_put,
			(unsigned long long)srv->requests_get,
			(unsigned long long)srv->requests_free,
			(unsigned long long)srv->pages_put,
			(unsigned long long)srv->keys_freed,
			(unsigned long long)srv->namespaces_released, srv->leave.leaving,
			leave[0], leave[1], leave[2], leave[3], leave[4],
			(unsigned long long)srv->pages_migrated_out,
			(unsigned long long)srv->pages_migrated_in,
			(unsigned long long)srv->moves_refused,
			(unsigned long long)srv->migrate_pending,
			(unsigned long long)srv->pages_copied_out))
		return -1;
	for (ns = srv->namespaces; ns; ns = ns->next) {
		char idle[24], quota[24];
		const char *quota_text = number_or_none(ns->account->quota_pages,
							quota, sizeof(quota));

		if (ns->connections)
			snprintf(idle, sizeof(idle), "none");
		else
			snprintf(idle, sizeof(idle), "%llu",
				 (unsigned long long)(srv->now_ms - ns->unbound_since_ms) / 1000);
		if (render_line(out, "namespace client=%s id=%s pages=%zu connections=%u bytes_in=%llu "
				"bytes_out=%llu requests=%llu errors=%llu evict_asked=%llu "
				"evict_returned=%llu idle_s=%s quota_pages=%s",
				ns->account->client, ns->id_hex, ns->pages.used, ns->connections,
				(unsigned long long)ns->stats.bytes_in,
				(unsigned long long)ns->stats.bytes_out,
				(unsigned long long)ns->stats.requests,
				(unsigned long long)ns->stats.errors,
				(unsigned long long)ns->stats.evict_asked,
				(unsigned long long)ns->stats.evict_returned, idle, quota_text))
			return -1;
	}
	if (render_peers(srv, out))
		return -1;
	return render_line(out, "end");
}

#define RECORD_FIELDS 64

/* One parsed record: its kind and up to RECORD_FIELDS key=value pairs, pointing into the report. */
struct record {
	const char *kind;
	unsigned int count;
	const char *keys[RECORD_FIELDS], *values[RECORD_FIELDS];
};

/* Splits one line (modified in place) into a record. */
static void parse_record(char *line, struct record *rec)
{
	char *save = NULL, *word;

	rec->kind = strtok_r(line, " ", &save);
	rec->count = 0;
	while ((word = strtok_r(NULL, " ", &save)) && rec->count < RECORD_FIELDS) {
		char *eq = strchr(word, '=');

		if (!eq)
			continue;
		*eq = '\0';
		rec->keys[rec->count] = word;
		rec->values[rec->count++] = eq + 1;
	}
}

static const char *field(const struct record *rec, const char *key)
{
	unsigned int i;

	for (i = 0; i < rec->count; i++)
		if (!strcmp(rec->keys[i], key))
			return rec->values[i];
	return "none";
}

static uint64_t field_number(const struct record *rec, const char *key)
{
	return strtoull(field(rec, key), NULL, 10);
}

/* Fields that are text in JSON; the others are numbers or null ("none"). */
static bool text_field(const char *key)
{
	return !strcmp(key, "listen") || !strcmp(key, "locked") || !strcmp(key, "id") ||
	       !strcmp(key, "client") || !strcmp(key, "address") || !strcmp(key, "limit_source");
}

static void print_json_record(const struct record *rec)
{
	unsigned int i;

	printf("{");
	for (i = 0; i < rec->count; i++) {
		const char *v = rec->values[i];

		printf("%s\"%s\": ", i ? ", " : "", rec->keys[i]);
		if (text_field(rec->keys[i]))
			printf("\"%s\"", v);	/* an address, a hex id, a client name (A-Za-z0-9_.-),
						   yes/no: nothing to escape */
		else if (!strcmp(v, "none"))
			printf("null");
		else
			printf("%llu", (unsigned long long)strtoull(v, NULL, 10));
	}
	printf("}");
}

static const char *pages_text(uint64_t pages, char *buf, size_t size)
{
	char bytes[32];

	snprintf(buf, size, "%llu pages (%s)", (unsigned long long)pages,
		 format_bytes(pages * PROTO_PAGE_SIZE, bytes, sizeof(bytes)));
	return buf;
}

static const char *bytes_or_none(const struct record *rec, const char *key, char *buf, size_t size)
{
	if (!strcmp(field(rec, key), "none"))
		return "none";
	return format_bytes(field_number(rec, key), buf, size);
}

/* A Unix time from the report as local time, and how far from now. */
static const char *when_text(const struct record *rec, const char *key, char *buf, size_t size)
{
	time_t t = (time_t)field_number(rec, key), now = time(NULL);
	struct tm tm;
	char clock[32];

	strftime(clock, sizeof(clock), "%F %T", localtime_r(&t, &tm));
	if (t > now)
		snprintf(buf, size, "%s (in %lld s)", clock, (long long)(t - now));
	else
		snprintf(buf, size, "%s (%lld s ago)", clock, (long long)(now - t));
	return buf;
}

static void print_human_leave(const struct record *rec)
{
	char started[64], deadline[64];

	if (strcmp(field(rec, "leaving"), "1")) {
		printf("  leaving:          no\n");
		return;
	}
	printf("  leaving:          since %s, deadline %s\n",
	       when_text(rec, "leave_started", started, sizeof(started)),
	       when_text(rec, "leave_deadline", deadline, sizeof(deadline)));
	printf("                    %s pages held at the start, %s given back, %s left\n",
	       field(rec, "leave_pages_at_start"), field(rec, "leave_pages_given_back"),
	       field(rec, "leave_pages_left"));
}

/* What limit_source means, for people. */
static const char *limit_source_text(const char *source)
{
	static const char *const names[][2] = {
		{ "none", "nothing (no --max, memory not bounding it)" },
		{ "max", "--max" },
		{ "max-file", "--max-file" },
		{ "memory", "memory (available - reserve)" },
		{ "memory-unknown", "memory that cannot be read (no new pages)" },
		{ "leaving", "the leave (0)" },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(source, names[i][0]))
			return names[i][1];
	return source;
}

static void print_human_server(const struct record *rec)
{
	char a[64], b[64], c[64];

	printf("nswapd on %s, pid %s, up %s s\n", field(rec, "listen"), field(rec, "pid"),
	       field(rec, "uptime_s"));
	printf("  limit:            %s, set by %s; --max %s, --max-file %s\n",
	       pages_text(field_number(rec, "limit_pages"), a, sizeof(a)),
	       limit_source_text(field(rec, "limit_source")),
	       strcmp(field(rec, "max_pages"), "none") ?
	       pages_text(field_number(rec, "max_pages"), b, sizeof(b)) : "none",
	       strcmp(field(rec, "max_file_pages"), "none") ?
	       pages_text(field_number(rec, "max_file_pages"), c, sizeof(c)) : "none");
	if (!strcmp(field(rec, "max_file_failed"), "1"))
		printf("  MAX FILE BAD:     its last reading failed, the size read before holds "
		       "(see the log)\n");
	printf("  held:             %s\n", pages_text(field_number(rec, "held_pages"), a, sizeof(a)));
	printf("  free:             %s\n", pages_text(field_number(rec, "free_pages"), a, sizeof(a)));
	printf("  MemAvailable:     %s, cgroup headroom %s, reserve %s\n",
	       bytes_or_none(rec, "mem_available", a, sizeof(a)),
	       bytes_or_none(rec, "cgroup_headroom", b, sizeof(b)),
	       bytes_or_none(rec, "reserve", c, sizeof(c)));
	if (!strcmp(field(rec, "memory_unknown"), "1"))
		printf("  MEMORY UNKNOWN:   cannot read it, taking no new pages (see the log)\n");
	printf("  pages locked:     %s\n", field(rec, "locked"));
	printf("  longest probe:    %s slots (page table hash)\n", field(rec, "longest_probe"));
	printf("  connections:      %s of %s; refused %s, unauthenticated closed for newer %s\n",
	       field(rec, "connections"), field(rec, "max_connections"),
	       field(rec, "connections_refused"), field(rec, "connections_replaced"));
	printf("  per client:       %s connections (refused %s), %s namespaces (refused %s)\n",
	       field(rec, "max_connections_per_client"), field(rec, "client_connections_refused"),
	       field(rec, "max_namespaces_per_client"), field(rec, "client_namespaces_refused"));
	printf("  buffers:          %s of %s, %s a client\n",
	       bytes_or_none(rec, "buffer_bytes", a, sizeof(a)),
	       bytes_or_none(rec, "buffer_budget", b, sizeof(b)),
	       bytes_or_none(rec, "client_buffer_budget", c, sizeof(c)));
	printf("  requests:         %s PUT (%s pages stored), %s GET, %s FREE; %s keys freed\n",
	       field(rec, "requests_put"), field(rec, "pages_put"), field(rec, "requests_get"),
	       field(rec, "requests_free"), field(rec, "keys_freed"));
	printf("  released:         %s namespaces (RELEASE: freed at once, no grace period)\n",
	       field(rec, "namespaces_released"));
	printf("  protocol errors:  %s\n", field(rec, "protocol_errors"));
	printf("  auth failures:    %s\n", field(rec, "auth_failures"));
	printf("  MAC failures:     %s\n", field(rec, "mac_failures"));
	printf("  eviction pending: %s pages asked, not yet answered\n", field(rec, "evict_pending"));
	printf("  migration:        %s pages moved to peers (%s moving, %s refused by their "
	       "owners), %s taken from peers\n", field(rec, "pages_migrated_out"),
	       field(rec, "migrate_pending"), field(rec, "moves_refused"),
	       field(rec, "pages_migrated_in"));
	printf("  copies:           %s pages copied to peers (COPY)\n",
	       field(rec, "pages_copied_out"));
	print_human_leave(rec);
	printf("namespaces: %s\n", field(rec, "namespaces"));
	if (strcmp(field(rec, "namespaces"), "0"))
		printf("  %-16s %-32s %10s %5s %10s %10s %9s %6s %9s %9s %6s\n", "CLIENT",
		       "NAMESPACE", "PAGES",
		       "CONNS", "BYTES IN", "BYTES OUT", "REQUESTS", "ERRORS", "EVICT ASK", "RETURNED",
		       "IDLE S");
}

static void print_human_namespace(const struct record *rec)
{
	char in[32], out[32];

	printf("  %-16s %-32s %10s %5s %10s %10s %9s %6s %9s %9s %6s\n", field(rec, "client"),
	       field(rec, "id"),
	       field(rec, "pages"), field(rec, "connections"),
	       format_bytes(field_number(rec, "bytes_in"), in, sizeof(in)),
	       format_bytes(field_number(rec, "bytes_out"), out, sizeof(out)),
	       field(rec, "requests"), field(rec, "errors"), field(rec, "evict_asked"),
	       field(rec, "evict_returned"), strcmp(field(rec, "idle_s"), "none") ?
	       field(rec, "idle_s") : "-");
}

/* Reads the whole report from the status socket; returns it or NULL. */
static char *read_report(const char *socket_path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct timeval timeout = { .tv_sec = STATUS_TIMEOUT_S };
	size_t len = 0, cap = 65536;
	char *report = NULL;
	ssize_t n;
	int fd;

	if (strlen(socket_path) >= sizeof(addr.sun_path)) {
		fprintf(stderr, "nswapd: status socket path too long: %s\n", socket_path);
		return NULL;
	}
	strcpy(addr.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		fprintf(stderr, "nswapd: cannot connect to %s: %s\n", socket_path, strerror(errno));
		goto fail;
	}
	report = malloc(cap);
	while (report) {
		n = read(fd, report + len, cap - len - 1);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "nswapd: reading %s: %s\n", socket_path, strerror(errno));
			goto fail;
		}
		len += (size_t)n;
		if (len + 1 == cap) {
			char *grown = cap < STATUS_MAX_BYTES ? realloc(report, cap * 2) : NULL;

			if (!grown) {
				fprintf(stderr, "nswapd: status report too large\n");
				goto fail;
			}
			report = grown;
			cap *= 2;
		}
	}
	if (!report) {
		fprintf(stderr, "nswapd: out of memory\n");
		goto fail;
	}
	close(fd);
	report[len] = '\0';
	return report;
fail:
	free(report);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * Prometheus text (node_exporter's textfile collector) of the report's
 * records: the metrics below, each with its HELP and TYPE once and the
 * samples of every record of its kind under them; pages given in bytes.
 */
struct metric {
	const char *kind, *key;		/* the record and its field */
	const char *name, *type, *help;
	uint64_t scale;			/* PROTO_PAGE_SIZE for a count of pages */
};

static const struct metric metrics[] = {
	{ "server", "uptime_s", "nswapd_uptime_seconds", "gauge", "Time since nswapd started", 1 },
	{ "server", "held_pages", "nswapd_held_bytes", "gauge", "Clients' pages held", PROTO_PAGE_SIZE },
	{ "server", "free_pages", "nswapd_free_bytes", "gauge", "Room left for new pages", PROTO_PAGE_SIZE },
	{ "server", "limit_pages", "nswapd_capacity_bytes", "gauge",
	  "What nswapd may hold now: min(--max, --max-file, held + available - reserve)", PROTO_PAGE_SIZE },
	{ "server", "max_pages", "nswapd_max_bytes", "gauge", "--max (absent: none)", PROTO_PAGE_SIZE },
	{ "server", "reserve", "nswapd_reserve_bytes", "gauge", "Memory always left to the machine", 1 },
	{ "server", "mem_available", "nswapd_memory_available_bytes", "gauge", "The machine's MemAvailable", 1 },
	{ "server", "connections", "nswapd_connections", "gauge", "Client connections", 1 },
	{ "server", "namespaces", "nswapd_namespaces", "gauge", "Devices' namespaces held", 1 },
	{ "server", "evict_pending", "nswapd_evict_pending_bytes", "gauge",
	  "Pages asked back from clients (EVICT) and not yet freed", PROTO_PAGE_SIZE },
	{ "server", "protocol_errors", "nswapd_protocol_errors_total", "counter",
	  "Connections closed for a malformed or hostile message", 1 },
	{ "server", "auth_failures", "nswapd_auth_failures_total", "counter", "Handshakes that failed", 1 },
	{ "server", "mac_failures", "nswapd_mac_failures_total", "counter", "Messages with a wrong MAC", 1 },
	{ "server", "connections_refused", "nswapd_connections_refused_total", "counter",
	  "Connections refused at --max-connections", 1 },
	{ "server", "pages_put", "nswapd_put_bytes_total", "counter", "Pages stored", PROTO_PAGE_SIZE },
	{ "server", "keys_freed", "nswapd_freed_bytes_total", "counter", "Pages freed", PROTO_PAGE_SIZE },
	{ "server", "leaving", "nswapd_leaving", "gauge", "1 while nswapd gives its pages back to leave", 1 },
	{ "server", "leave_pages_left", "nswapd_leave_left_bytes", "gauge",
	  "Pages still to give back (while leaving)", PROTO_PAGE_SIZE },
	{ "server", "leave_pages_given_back", "nswapd_leave_given_back_bytes", "gauge",
	  "Pages given back since the leave started (while leaving)", PROTO_PAGE_SIZE },
	{ "server", "pages_migrated_out", "nswapd_migrated_out_bytes_total", "counter",
	  "Pages moved to peers", PROTO_PAGE_SIZE },
	{ "server", "pages_migrated_in", "nswapd_migrated_in_bytes_total", "counter",
	  "Pages moved here by peers", PROTO_PAGE_SIZE },
	{ "namespace", "pages", "nswapd_client_held_bytes", "gauge", "A namespace's pages held",
	  PROTO_PAGE_SIZE },
	{ "namespace", "connections", "nswapd_client_connections", "gauge", "A namespace's connections", 1 },
	{ "namespace", "bytes_in", "nswapd_client_received_bytes_total", "counter",
	  "Bytes received from a namespace's connections", 1 },
	{ "namespace", "bytes_out", "nswapd_client_sent_bytes_total", "counter",
	  "Bytes sent on a namespace's connections", 1 },
	{ "namespace", "requests", "nswapd_client_requests_total", "counter", "A namespace's requests", 1 },
	{ "namespace", "errors", "nswapd_client_errors_total", "counter", "A namespace's refused requests", 1 },
	{ "namespace", "evict_asked", "nswapd_client_evict_asked_bytes_total", "counter",
	  "Pages asked back from a namespace", PROTO_PAGE_SIZE },
	{ "namespace", "evict_returned", "nswapd_client_evict_returned_bytes_total", "counter",
	  "Pages a namespace gave back when asked", PROTO_PAGE_SIZE },
	{ "peer", "connected", "nswapd_peer_connected", "gauge", "1 while a --peer is connected", 1 },
};

/* The labels of a record's samples: its client and namespace, or peer. */
static void record_labels(const struct record *rec, char *buf, size_t size)
{
	if (!strcmp(rec->kind, "namespace"))
		snprintf(buf, size, "{client=\"%s\",namespace=\"%s\"}", field(rec, "client"), field(rec, "id"));
	else if (!strcmp(rec->kind, "peer"))
		snprintf(buf, size, "{peer=\"%s\"}", field(rec, "address"));
	else
		buf[0] = '\0';
}

static int render_prometheus(const struct record *recs, unsigned int count, struct outq *out)
{
	size_t m;

	for (m = 0; m < sizeof(metrics) / sizeof(metrics[0]); m++) {
		bool header = false;
		unsigned int i;

		for (i = 0; i < count; i++) {
			const char *v = field(&recs[i], metrics[m].key);
			char labels[160];

			/* "none": no value (no --max, not leaving) */
			if (strcmp(recs[i].kind, metrics[m].kind) || !strcmp(v, "none"))
				continue;
			if (!header && render_line(out, "# HELP %s %s.\n# TYPE %s %s", metrics[m].name,
						   metrics[m].help, metrics[m].name, metrics[m].type))
				return -1;
			header = true;
			record_labels(&recs[i], labels, sizeof(labels));
			if (render_line(out, "%s%s %llu", metrics[m].name, labels,
					(unsigned long long)strtoull(v, NULL, 10) * metrics[m].scale))
				return -1;
		}
	}
	return 0;
}

int status_prometheus(char *report, struct outq *out)
{
	char *line, *save = NULL;
	struct record *recs = NULL;
	unsigned int count = 0;
	int ret = -1;

	line = strtok_r(report, "\n", &save);
	if (!line || strcmp(line, STATUS_HEADER))
		return -1;
	/* every record first: a metric's samples come together */
	while ((line = strtok_r(NULL, "\n", &save))) {
		struct record *grown;

		if (!strcmp(line, "end")) {
			ret = render_prometheus(recs, count, out);
			break;
		}
		grown = realloc(recs, (count + 1) * sizeof(*recs));
		if (!grown)
			break;
		recs = grown;
		parse_record(line, &recs[count]);
		if (recs[count].kind)
			count++;
	}
	free(recs);
	return ret;
}

static int write_stdout(void *arg, const void *data, size_t len)
{
	(void)arg;
	return fwrite(data, 1, len, stdout) == len ? 0 : -1;
}

int status_query(const char *socket_path, enum status_format format)
{
	char *report = read_report(socket_path), *line, *save = NULL;
	bool json = format == STATUS_JSON, first_namespace = true, first_peer = true, complete = false;
	struct record rec;

	if (!report)
		return 1;
	if (format == STATUS_PROMETHEUS) {
		struct outq out = { 0 };
		int ret = status_prometheus(report, &out) || outq_drain(&out, write_stdout, NULL);

		if (ret)
			fprintf(stderr, "nswapd: the status report from %s is not whole, or out of memory\n",
				socket_path);
		outq_clear(&out);
		free(report);
		return ret;
	}
	line = strtok_r(report, "\n", &save);
	if (!line || strcmp(line, STATUS_HEADER)) {
		fprintf(stderr, "nswapd: %s does not speak the status format\n", socket_path);
		free(report);
		return 1;
	}
	while ((line = strtok_r(NULL, "\n", &save))) {
		parse_record(line, &rec);
		if (!rec.kind)
			continue;
		if (!strcmp(rec.kind, "end")) {
			complete = true;
			break;
		}
		if (!strcmp(rec.kind, "server")) {
			if (json) {
				printf("{\"server\": ");
				print_json_record(&rec);
				printf(", \"namespaces\": [");
			} else {
				print_human_server(&rec);
			}
		} else if (!strcmp(rec.kind, "namespace")) {
			if (json) {
				printf("%s", first_namespace ? "" : ", ");
				print_json_record(&rec);
			} else {
				print_human_namespace(&rec);
			}
			first_namespace = false;
		} else if (!strcmp(rec.kind, "peer")) {
			if (json) {
				printf("%s", first_peer ? "], \"peers\": [" : ", ");
				print_json_record(&rec);
			} else {
				printf("%speer %s: %s, %s pages free\n", first_peer ? "peers:\n" : "",
				       field(&rec, "address"),
				       strcmp(field(&rec, "connected"), "1") ? "not connected" :
				       "connected", field(&rec, "free_pages"));
			}
			first_peer = false;
		}
	}
	if (json)
		printf("%s]}\n", first_peer ? "], \"peers\": [" : "");
	free(report);
	if (!complete) {
		fprintf(stderr, "nswapd: status report from %s is cut short\n", socket_path);
		return 1;
	}
	return 0;
}
