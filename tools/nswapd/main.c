// SPDX-License-Identifier: GPL-2.0
/*
 * nswapd: the Network RAM server of dm-nswap2l.  Holds clients' pages in its
 * own (locked) memory and gives memory back to its machine when the machine
 * needs it, by asking clients to move pages elsewhere (Nswap's adaptive
 * memory).  Protocol: include/uapi/linux/nswap2l_proto.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conn.h"
#include "log.h"
#include "net.h"
#include "peer.h"
#include "server.h"
#include "status.h"
#include "util.h"

#define STATUS_DIR "/run/nswapd"
#define DEFAULT_RESERVE (64ull << 20)
#define MAX_RESERVE_PERCENT 90	/* more would leave clients next to nothing */
#define DEFAULT_GRACE_S 60
#define MAX_QUOTAS 1024
#define MAX_COUNT 1000000
/*
 * Limits under attack.  256 connections is far more than the clients of
 * one server and fits the usual 1024 descriptors; one client gets a
 * quarter of them (64: a connection per device and server), but at least
 * 4, so that no client can shut the others out; 256 namespaces a client
 * is a namespace per device and server with room for devices made again
 * within the grace period; 8 handshakes in flight per address lets a host
 * reconnect all its devices at once; a kernel client idle for 300 s has
 * missed many heartbeats; 30 s to finish a message is ages on a LAN;
 * 64 MiB of buffers is 256 clients at 256 KiB.
 */
#define DEFAULT_MAX_CONNECTIONS 256
#define CONNECTIONS_PER_CLIENT_DIVISOR 4
#define MIN_DEFAULT_CONNECTIONS_PER_CLIENT 4
#define DEFAULT_MAX_NAMESPACES_PER_CLIENT 256
#define DEFAULT_MAX_UNAUTH_PER_ADDRESS 8
#define DEFAULT_IDLE_TIMEOUT_S 300
#define DEFAULT_MESSAGE_TIMEOUT_S 30
#define DEFAULT_BUFFER_BUDGET (64ull << 20)
/* Descriptors besides connections: stdio, listeners, epoll, signals, status and metrics clients. */
#define SPARE_FDS 24

static const char usage_text[] =
"usage: nswapd --listen ADDR:PORT [options]     serve pages\n"
"       nswapd --stats [--status-socket PATH | --listen ADDR:PORT] [--json | --prometheus]\n"
"       nswapd --help | --version\n"
"\n"
"Network RAM server for dm-nswap2l: holds clients' pages in its own memory\n"
"and gives memory back when its machine needs it, by asking clients (EVICT)\n"
"to move pages elsewhere.  It holds at most\n"
"    min(--max, --max-file, held + available - --reserve)\n"
"pages, available being MemAvailable or the headroom of its memory cgroup;\n"
"when those cannot be read it takes no new pages.\n"
"\n"
"  --listen ADDR:PORT      numeric IPv4 address and TCP port (0: any free port)\n"
"  --port-file FILE        write the bound port number to FILE once listening\n"
"  --max SIZE              hold at most SIZE of pages (K, M, G, T suffixes;\n"
"                          none: no bound but memory's)\n"
"  --max-file FILE         FILE holds a SIZE as --max's: hold at most the\n"
"                          smaller of the two; read at start (bad or missing:\n"
"                          nswapd does not start) and again on SIGHUP, which\n"
"                          shrinks the server to a lower one (pages to peers,\n"
"                          then EVICT) and offers the room of a higher one;\n"
"                          a bad file then keeps the SIZE read before\n"
"  --reserve SIZE|P%       memory always left to the machine: a SIZE, or P\n"
"                          percent (1 to 90) of its MemTotal, read at start\n"
"                          (default 64M)\n"
"  --clients DIR           one key per client: each file in DIR (except hidden\n"
"                          ones) is a client, its name the client name, its\n"
"                          bytes the key (16 to 256); a client can reach only\n"
"                          its own pages; SIGHUP reloads DIR and closes the\n"
"                          connections of clients removed or given a new key\n"
"  --key-file FILE         one key for every client name: all holders of the\n"
"                          key are one client and can reach each other's\n"
"                          pages (small trusted clusters)\n"
"  --insecure-no-auth      accept clients without checking their key: for\n"
"                          testing only, anyone who reaches the port can\n"
"                          read and overwrite every client's pages\n"
"  --grace SECONDS         keep a namespace whose last connection closed for\n"
"                          this long, then free its pages (default 60); one\n"
"                          its client released (RELEASE) goes at once\n"
"  --max-connections N     at most N client connections (default 256, and\n"
"                          no more than open files allow); at the cap the\n"
"                          oldest not yet authenticated is closed for a new\n"
"                          one, or with none the new one is refused\n"
"  --max-unauth-per-address N\n"
"                          at most N connections from one address still\n"
"                          authenticating; the oldest goes first (default 8)\n"
"  --max-connections-per-client N\n"
"                          at most N authenticated connections of one client\n"
"                          name (default a quarter of --max-connections, at\n"
"                          least 4); one more is closed after its AUTH, so\n"
"                          that one client cannot shut the others out; the\n"
"                          client may hold the same fraction of\n"
"                          --buffer-budget (at least 581K)\n"
"  --max-namespaces-per-client N\n"
"                          at most N namespaces of one client name, with or\n"
"                          without a connection (default 256); a connection\n"
"                          that would make one more is closed after its AUTH\n"
"  --idle-timeout SECONDS  close an authenticated connection that sends\n"
"                          nothing for this long (default 300; 0: never);\n"
"                          clients send a heartbeat every timeout=/2\n"
"  --message-timeout SECONDS\n"
"                          close a connection that started a message and did\n"
"                          not finish it in this long (default 30)\n"
"  --buffer-budget SIZE    cap on the input buffers and unsent output of all\n"
"                          connections together (default 64M, at least 581K:\n"
"                          the largest request and reply); a connection whose\n"
"                          next request, or its reply, does not fit is not\n"
"                          read until room comes back, nor one whose unsent\n"
"                          replies are over 4M or its share (the budget\n"
"                          divided by the connections)\n"
"  --quota NAME=SIZE       client NAME holds at most SIZE of pages, in all its\n"
"                          namespaces (repeat for more clients); its new\n"
"                          pages past that get NOSPC and the client stores\n"
"                          them elsewhere\n"
"  --default-quota SIZE    the quota of every client without its own\n"
"                          (default: none, a client may take all there is)\n"
"  --status-socket PATH    status socket (default " STATUS_DIR "/nswapd-PORT.sock);\n"
"                          it serves 4 clients at once, 5 s each at most\n"
"  --leave-timeout SECONDS on SIGTERM or SIGINT, give the pages back for at\n"
"                          most this long before exiting (default 30 s plus\n"
"                          1 s per 2000 pages held: 8 MB/s, a tenth of what a\n"
"                          client moves over 1 GbE; 0: exit at once, dropping\n"
"                          the pages)\n"
"  --foreground            do not daemonize; log to stderr\n"
"  --log-level LEVEL       error, warn, info (default) or debug\n"
"  --peer ADDR:PORT        another nswapd of the cluster (repeat, up to 16):\n"
"                          when this one must shrink it moves pages there,\n"
"                          seals and all, and tells their owners (clients\n"
"                          with NSWAP2L_CAP_MOVED) the new place; the rest\n"
"                          goes back through EVICT.  Needs --peer-key\n"
"  --peer-key FILE         the cluster's peer key (16 to 256 bytes, shared by\n"
"                          its servers, never given to clients): proves this\n"
"                          server to its peers, and peers to this one\n"
"  --memavailable-file F   testing: take MemAvailable from F (in /proc/meminfo\n"
"                          format) instead of /proc/meminfo, and ignore cgroups;\n"
"                          missing or garbled, it stops new pages as an\n"
"                          unreadable /proc/meminfo does\n"
"  --metrics ADDR:PORT     also serve the status as Prometheus text over HTTP,\n"
"                          http://ADDR:PORT/metrics (numeric IPv4; nothing\n"
"                          else is served there, to 4 clients at once)\n"
"  --stats                 print the status of a running nswapd and exit\n"
"  --json                  with --stats: print JSON\n"
"  --prometheus            with --stats: print Prometheus text (node_exporter's\n"
"                          textfile collector; amounts of pages in bytes)\n"
"\n"
"Leaving: the first SIGTERM or SIGINT stops taking new pages (free_pages 0,\n"
"PUTs of new keys get NOSPC; GET, FREE and overwrites go on) and asks the\n"
"clients for every page back (EVICT); nswapd exits once it holds none, once\n"
"no connected client can be asked for the rest, at --leave-timeout, or at a\n"
"second SIGTERM or SIGINT, and logs how many pages were left.  --stats shows\n"
"the leave's progress.\n"
"\n"
"Exit status: 0 after SIGTERM or SIGINT, 1 on a run-time failure, 2 on bad\n"
"options.\n";

enum option_id {
	OPT_LISTEN = 256, OPT_PORT_FILE, OPT_MAX, OPT_RESERVE, OPT_CLIENTS, OPT_KEY_FILE, OPT_INSECURE,
	OPT_GRACE, OPT_STATUS_SOCKET, OPT_FOREGROUND, OPT_LOG_LEVEL, OPT_PEER,
	OPT_MEMAVAILABLE_FILE, OPT_STATS, OPT_JSON, OPT_PROMETHEUS, OPT_METRICS, OPT_HELP, OPT_VERSION, OPT_MAX_CONNECTIONS,
	OPT_MAX_UNAUTH_PER_ADDRESS, OPT_IDLE_TIMEOUT, OPT_MESSAGE_TIMEOUT, OPT_BUFFER_BUDGET,
	OPT_QUOTA, OPT_DEFAULT_QUOTA, OPT_MAX_CONNECTIONS_PER_CLIENT, OPT_MAX_NAMESPACES_PER_CLIENT,
	OPT_LEAVE_TIMEOUT,
	OPT_PEER_KEY, OPT_MAX_FILE,
};

static const struct option long_options[] = {
	{ "listen", required_argument, NULL, OPT_LISTEN },
	{ "port-file", required_argument, NULL, OPT_PORT_FILE },
	{ "max", required_argument, NULL, OPT_MAX },
	{ "max-file", required_argument, NULL, OPT_MAX_FILE },
	{ "reserve", required_argument, NULL, OPT_RESERVE },
	{ "clients", required_argument, NULL, OPT_CLIENTS },
	{ "key-file", required_argument, NULL, OPT_KEY_FILE },
	{ "insecure-no-auth", no_argument, NULL, OPT_INSECURE },
	{ "grace", required_argument, NULL, OPT_GRACE },
	{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
	{ "max-unauth-per-address", required_argument, NULL, OPT_MAX_UNAUTH_PER_ADDRESS },
	{ "max-connections-per-client", required_argument, NULL, OPT_MAX_CONNECTIONS_PER_CLIENT },
	{ "max-namespaces-per-client", required_argument, NULL, OPT_MAX_NAMESPACES_PER_CLIENT },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "message-timeout", required_argument, NULL, OPT_MESSAGE_TIMEOUT },
	{ "buffer-budget", required_argument, NULL, OPT_BUFFER_BUDGET },
	{ "quota", required_argument, NULL, OPT_QUOTA },
	{ "default-quota", required_argument, NULL, OPT_DEFAULT_QUOTA },
	{ "status-socket", required_argument, NULL, OPT_STATUS_SOCKET },
	{ "leave-timeout", required_argument, NULL, OPT_LEAVE_TIMEOUT },
	{ "foreground", no_argument, NULL, OPT_FOREGROUND },
	{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "peer-key", required_argument, NULL, OPT_PEER_KEY },
	{ "memavailable-file", required_argument, NULL, OPT_MEMAVAILABLE_FILE },
	{ "stats", no_argument, NULL, OPT_STATS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
	{ "metrics", required_argument, NULL, OPT_METRICS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

struct options {
	const char *listen, *port_file, *clients_dir, *key_file, *status_socket, *memavailable_file;
	const char *peer_key_file, *max_file, *metrics;
	uint64_t max_pages, reserve_bytes, grace_s;
	uint64_t reserve_percent;	/* --reserve P%: of MemTotal; 0: reserve_bytes */
	uint64_t max_connections, max_unauth_per_address, idle_timeout_s, message_timeout_s;
	uint64_t max_conns_per_client;		/* 0: the default, from the connections that fit */
	uint64_t max_namespaces_per_client;
	uint64_t buffer_budget;
	uint64_t leave_timeout_ms;	/* LEAVE_TIMEOUT_AUTO: from the pages held */
	struct client_quota quotas[MAX_QUOTAS];
	size_t nr_quotas;
	uint64_t default_quota_pages;
	bool have_default_quota, insecure, foreground, stats;
	enum status_format stats_format;
	enum log_level log_level;
	unsigned int peer_count;
	struct peer_addr peers[MAX_PEERS];
};

static void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...);

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nswapd: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'nswapd --help'.\n");
	exit(2);
}

static uint64_t size_option(const char *name, const char *value)
{
	uint64_t bytes;

	if (parse_size(value, &bytes))
		usage_error("--%s: not a size: '%s' (bytes, or with K, M, G, T)", name, value);
	return bytes;
}

/* A limit on things counted (connections, namespaces): 1 to MAX_COUNT. */
static uint64_t count_option(const char *name, const char *value)
{
	uint64_t count;

	if (parse_uint(value, MAX_COUNT, &count) || !count)
		usage_error("--%s: not a number from 1: '%s'", name, value);
	return count;
}

/* --quota NAME=SIZE */
static void add_quota(struct options *opts, char *arg)
{
	char *eq = strchr(arg, '=');
	struct client_quota *q = &opts->quotas[opts->nr_quotas];
	size_t i;

	if (!eq || (size_t)(eq - arg) >= sizeof(q->client))
		usage_error("--quota: need NAME=SIZE, NAME a client name: '%s'", arg);
	if (opts->nr_quotas == MAX_QUOTAS)
		usage_error("--quota: at most %d clients", MAX_QUOTAS);
	memset(q->client, 0, sizeof(q->client));
	memcpy(q->client, arg, (size_t)(eq - arg));
	if (!proto_client_name_valid(q->client))
		usage_error("--quota: '%.*s' is not a client name (1 to %d of A-Z a-z 0-9 _ . -)",
			    (int)(eq - arg), arg, NSWAP2L_PROTO_CLIENT_NAME_SIZE - 1);
	for (i = 0; i < opts->nr_quotas; i++)
		if (!memcmp(opts->quotas[i].client, q->client, sizeof(q->client)))
			usage_error("--quota: client %s given twice", q->client);
	q->pages = size_option("quota", eq + 1) / PROTO_PAGE_SIZE;
	opts->nr_quotas++;
}

static void parse_options(int argc, char **argv, struct options *opts)
{
	struct sockaddr_in peer;
	int c;

	memset(opts, 0, sizeof(*opts));
	opts->max_pages = NO_MAX_PAGES;
	opts->reserve_bytes = DEFAULT_RESERVE;
	opts->grace_s = DEFAULT_GRACE_S;
	opts->max_connections = DEFAULT_MAX_CONNECTIONS;
	opts->max_unauth_per_address = DEFAULT_MAX_UNAUTH_PER_ADDRESS;
	opts->max_namespaces_per_client = DEFAULT_MAX_NAMESPACES_PER_CLIENT;
	opts->idle_timeout_s = DEFAULT_IDLE_TIMEOUT_S;
	opts->message_timeout_s = DEFAULT_MESSAGE_TIMEOUT_S;
	opts->buffer_budget = DEFAULT_BUFFER_BUDGET;
	opts->leave_timeout_ms = LEAVE_TIMEOUT_AUTO;
	opts->log_level = LOG_LEVEL_INFO;
	while ((c = getopt_long(argc, argv, "", long_options, NULL)) != -1) {
		switch (c) {
		case OPT_LISTEN:
			opts->listen = optarg;
			break;
		case OPT_METRICS:
			opts->metrics = optarg;
			break;
		case OPT_PORT_FILE:
			opts->port_file = optarg;
			break;
		case OPT_MAX: {
			char err[256];

			if (server_parse_max(optarg, &opts->max_pages, err, sizeof(err)))
				usage_error("--max: %s", err);
			break;
		}
		case OPT_MAX_FILE:
			opts->max_file = optarg;
			break;
		case OPT_RESERVE:
			opts->reserve_percent = 0;
			if (optarg[0] && optarg[strlen(optarg) - 1] == '%') {
				char number[16];

				snprintf(number, sizeof(number), "%.*s", (int)strlen(optarg) - 1, optarg);
				if (parse_uint(number, MAX_RESERVE_PERCENT, &opts->reserve_percent) ||
				    !opts->reserve_percent)
					usage_error("--reserve: not a percentage from 1 to %d: '%s'",
						    MAX_RESERVE_PERCENT, optarg);
			} else {
				opts->reserve_bytes = size_option("reserve", optarg);
			}
			break;
		case OPT_CLIENTS:
			opts->clients_dir = optarg;
			break;
		case OPT_KEY_FILE:
			opts->key_file = optarg;
			break;
		case OPT_INSECURE:
			opts->insecure = true;
			break;
		case OPT_GRACE:
			if (parse_uint(optarg, 365 * 24 * 3600, &opts->grace_s))
				usage_error("--grace: not a number of seconds: '%s'", optarg);
			break;
		case OPT_MAX_CONNECTIONS:
			opts->max_connections = count_option("max-connections", optarg);
			break;
		case OPT_MAX_UNAUTH_PER_ADDRESS:
			opts->max_unauth_per_address = count_option("max-unauth-per-address", optarg);
			break;
		case OPT_MAX_CONNECTIONS_PER_CLIENT:
			opts->max_conns_per_client = count_option("max-connections-per-client", optarg);
			break;
		case OPT_MAX_NAMESPACES_PER_CLIENT:
			opts->max_namespaces_per_client = count_option("max-namespaces-per-client",
								       optarg);
			break;
		case OPT_IDLE_TIMEOUT:
			if (parse_uint(optarg, 365 * 24 * 3600, &opts->idle_timeout_s))
				usage_error("--idle-timeout: not a number of seconds: '%s'", optarg);
			break;
		case OPT_MESSAGE_TIMEOUT:
			if (parse_uint(optarg, 3600, &opts->message_timeout_s) || !opts->message_timeout_s)
				usage_error("--message-timeout: not a number of seconds from 1: '%s'",
					    optarg);
			break;
		case OPT_BUFFER_BUDGET:
			opts->buffer_budget = size_option("buffer-budget", optarg);
			if (opts->buffer_budget < CONN_BUDGET_MIN)
				usage_error("--buffer-budget: %s is less than %uK, the largest request "
					    "and reply at once", optarg, (CONN_BUDGET_MIN + 1023) / 1024);
			break;
		case OPT_QUOTA:
			add_quota(opts, optarg);
			break;
		case OPT_DEFAULT_QUOTA:
			opts->default_quota_pages = size_option("default-quota", optarg) /
						    PROTO_PAGE_SIZE;
			opts->have_default_quota = true;
			break;
		case OPT_LEAVE_TIMEOUT: {
			uint64_t seconds;

			if (parse_uint(optarg, 365 * 24 * 3600, &seconds))
				usage_error("--leave-timeout: not a number of seconds: '%s'", optarg);
			opts->leave_timeout_ms = seconds * 1000;
			break;
		}
		case OPT_STATUS_SOCKET:
			opts->status_socket = optarg;
			break;
		case OPT_FOREGROUND:
			opts->foreground = true;
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(optarg, &opts->log_level))
				usage_error("--log-level: '%s' is not error, warn, info or debug", optarg);
			break;
		case OPT_PEER:
			if (parse_ipv4_endpoint(optarg, &peer))
				usage_error("--peer: '%s' is not ADDR:PORT (numeric IPv4)", optarg);
			if (opts->peer_count == MAX_PEERS)
				usage_error("--peer: at most %d peers", MAX_PEERS);
			opts->peers[opts->peer_count].addr = peer.sin_addr.s_addr;
			opts->peers[opts->peer_count++].port = ntohs(peer.sin_port);
			break;
		case OPT_PEER_KEY:
			opts->peer_key_file = optarg;
			break;
		case OPT_MEMAVAILABLE_FILE:
			opts->memavailable_file = optarg;
			break;
		case OPT_STATS:
			opts->stats = true;
			break;
		case OPT_JSON:
		case OPT_PROMETHEUS: {
			enum status_format format = c == OPT_JSON ? STATUS_JSON : STATUS_PROMETHEUS;

			if (opts->stats_format != STATUS_TEXT && opts->stats_format != format)
				usage_error("--json and --prometheus exclude each other");
			opts->stats_format = format;
			break;
		}
		case OPT_HELP:
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			printf("nswapd %s (protocol version %d)\n", NSWAPD_VERSION, NSWAP2L_PROTO_VERSION);
			exit(0);
		default:
			/* getopt_long has said what is wrong */
			fprintf(stderr, "Try 'nswapd --help'.\n");
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (opts->stats_format != STATUS_TEXT && !opts->stats)
		usage_error("--json and --prometheus go with --stats");
	if (opts->stats)
		return;
	if (!opts->listen)
		usage_error("--listen ADDR:PORT is required");
	/* nswapd.service passes NSWAPD_LISTEN, empty until the admin sets it */
	if (!opts->listen[0])
		usage_error("--listen: no address given (nswapd.service: set NSWAPD_LISTEN=ADDR:PORT, "
			    "this donor's address on the cluster's network, in /etc/default/nswapd)");
	if (!!opts->clients_dir + !!opts->key_file + opts->insecure > 1)
		usage_error("--clients, --key-file and --insecure-no-auth exclude each other");
	if (!opts->clients_dir && !opts->key_file && !opts->insecure)
		usage_error("--clients or --key-file is required (or --insecure-no-auth, for testing only)");
	if (opts->peer_count && !opts->peer_key_file)
		usage_error("--peer needs --peer-key");
}

static void status_socket_for_port(char *path, size_t size, unsigned int port)
{
	snprintf(path, size, STATUS_DIR "/nswapd-%u.sock", port);
}

/* --stats without --status-socket: the server on --listen's port, or the only one running. */
static int stats_main(const struct options *opts)
{
	struct sockaddr_in addr;
	char path[256];
	glob_t found;
	int status;

	if (opts->status_socket)
		return status_query(opts->status_socket, opts->stats_format);
	if (opts->listen) {
		if (parse_ipv4_endpoint(opts->listen, &addr))
			usage_error("--listen: '%s' is not ADDR:PORT (numeric IPv4)", opts->listen);
		status_socket_for_port(path, sizeof(path), ntohs(addr.sin_port));
		return status_query(path, opts->stats_format);
	}
	if (glob(STATUS_DIR "/nswapd-*.sock", 0, NULL, &found) || found.gl_pathc != 1) {
		fprintf(stderr, "nswapd: %s nswapd status socket in " STATUS_DIR
			": name one with --status-socket\n",
			found.gl_pathc > 1 ? "more than one" : "no");
		globfree(&found);
		return 1;
	}
	status = status_query(found.gl_pathv[0], opts->stats_format);
	globfree(&found);
	return status;
}

/* path made absolute against the working directory, links and all kept; NULL: errno. */
static char *absolute_path(const char *path)
{
	char *cwd, *abs;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	if (asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	free(cwd);
	return abs;
}

/* A failure aborts: a predictable nonce would let a recorded handshake be replayed. */
static void random_bytes(void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom((uint8_t *)buf + got, len - got, 0);

		if (n > 0) {
			got += (size_t)n;
		} else if (errno != EINTR) {
			log_error("getrandom: %s", strerror(errno));
			abort();
		}
	}
}

static void random_nonce(uint8_t nonce[NSWAP2L_PROTO_NONCE_SIZE])
{
	random_bytes(nonce, NSWAP2L_PROTO_NONCE_SIZE);
}

/*
 * Raises the soft limit on open files as far as the connections need and
 * the hard limit allows; returns how many connections fit.
 */
static unsigned int connections_that_fit(unsigned int wanted)
{
	struct rlimit files;

	if (getrlimit(RLIMIT_NOFILE, &files))
		return wanted;
	if (files.rlim_cur < (rlim_t)wanted + SPARE_FDS && files.rlim_cur < files.rlim_max) {
		files.rlim_cur = (rlim_t)wanted + SPARE_FDS < files.rlim_max ?
				 (rlim_t)wanted + SPARE_FDS : files.rlim_max;
		setrlimit(RLIMIT_NOFILE, &files);
		getrlimit(RLIMIT_NOFILE, &files);
	}
	if (files.rlim_cur >= (rlim_t)wanted + SPARE_FDS)
		return wanted;
	return files.rlim_cur > SPARE_FDS ? (unsigned int)(files.rlim_cur - SPARE_FDS) : 1;
}

/* A quarter of the connections, at least a few, at most all. */
static unsigned int default_conns_per_client(unsigned int max_connections)
{
	unsigned int n = max_connections / CONNECTIONS_PER_CLIENT_DIVISOR;

	if (n < MIN_DEFAULT_CONNECTIONS_PER_CLIENT)
		n = MIN_DEFAULT_CONNECTIONS_PER_CLIENT;
	return n < max_connections ? n : max_connections;
}

/* Written to a temporary name and renamed, so a reader never sees half of it. */
static int write_port_file(const char *path, unsigned int port)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) || rename(tmp, path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Double fork and setsid: no controlling terminal, not a session leader. */
static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0)
		return -1;
	if (pid)
		_exit(0);
	if (setsid() < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid)
		_exit(0);
	if (chdir("/"))
		return -1;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	dup2(fd, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	if (fd > STDERR_FILENO)
		close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct server_config cfg = { .lock_pages = true, .make_nonce = random_nonce };
	char err[512], status_path[256], listen_desc[64], max_text[32], reserve_text[32];
	char budget_text[32];
	struct sockaddr_in addr, metrics_addr;
	struct options opts;
	struct server srv;
	char *clients_dir = NULL, *max_file = NULL;
	int listen_fd, status_fd, metrics_fd = -1, status;

	parse_options(argc, argv, &opts);
	if (opts.stats)
		return stats_main(&opts);
	if (parse_ipv4_endpoint(opts.listen, &addr))
		usage_error("--listen: '%s' is not ADDR:PORT (numeric IPv4)", opts.listen);
	if (opts.metrics && parse_ipv4_endpoint(opts.metrics, &metrics_addr))
		usage_error("--metrics: '%s' is not ADDR:PORT (numeric IPv4)", opts.metrics);
	if (opts.key_file && auth_load_key(opts.key_file, &cfg.keys.shared_key, err, sizeof(err))) {
		fprintf(stderr, "nswapd: %s\n", err);
		return 2;
	}
	cfg.keys.shared = opts.key_file != NULL;
	if (opts.peer_key_file &&
	    auth_load_key(opts.peer_key_file, &cfg.peer_key, err, sizeof(err))) {
		fprintf(stderr, "nswapd: --peer-key: %s\n", err);
		return 2;
	}
	cfg.have_peer_key = opts.peer_key_file != NULL;
	if (opts.clients_dir && auth_load_clients(opts.clients_dir, &cfg.keys, err, sizeof(err))) {
		fprintf(stderr, "nswapd: %s\n", err);
		return 2;
	}
	/* absolute, for the reloads after daemonize() changed directory */
	if (opts.clients_dir) {
		clients_dir = realpath(opts.clients_dir, NULL);
		if (!clients_dir) {
			fprintf(stderr, "nswapd: %s: %s\n", opts.clients_dir, strerror(errno));
			return 2;
		}
	}
	cfg.clients_dir = clients_dir;
	cfg.insecure = opts.insecure;
	cfg.max_pages = opts.max_pages;
	/* absolute, for SIGHUP after daemonize(); not resolved: a link may be pointed elsewhere */
	if (opts.max_file) {
		max_file = absolute_path(opts.max_file);
		if (!max_file) {
			fprintf(stderr, "nswapd: --max-file %s: %s\n", opts.max_file, strerror(errno));
			return 2;
		}
		if (server_read_max_file(max_file, &cfg.max_file_pages, err, sizeof(err))) {
			fprintf(stderr, "nswapd: %s\n", err);
			free(max_file);
			return 2;
		}
	}
	cfg.max_file = max_file;
	cfg.reserve_bytes = opts.reserve_bytes;
	cfg.grace_ms = opts.grace_s * 1000;
	random_bytes(&cfg.hash_key, sizeof(cfg.hash_key));
	/* a restarted server is another server: its pages are gone */
	random_bytes(cfg.server_id, sizeof(cfg.server_id));
	cfg.max_unauth_per_address = (unsigned int)opts.max_unauth_per_address;
	cfg.max_namespaces_per_client = (unsigned int)opts.max_namespaces_per_client;
	cfg.idle_timeout_ms = opts.idle_timeout_s * 1000;
	cfg.message_timeout_ms = opts.message_timeout_s * 1000;
	cfg.buffer_budget = opts.buffer_budget;
	cfg.quotas = opts.quotas;
	cfg.nr_quotas = opts.nr_quotas;
	cfg.have_default_quota = opts.have_default_quota;
	cfg.default_quota_pages = opts.default_quota_pages;
	cfg.leave_timeout_ms = opts.leave_timeout_ms;
	log_setup(opts.log_level, false);
	memwatch_setup(opts.memavailable_file);
	if (opts.reserve_percent) {
		uint64_t total;
		int ret = memwatch_total(&total);

		if (ret) {
			log_error("--reserve %llu%%: cannot read MemTotal: %s",
				  (unsigned long long)opts.reserve_percent,
				  ret == -EINVAL ? "not in the file" : strerror(-ret));
			return 1;
		}
		cfg.reserve_bytes = total / 100 * opts.reserve_percent;
	}

	listen_fd = net_listen_tcp(&addr, err, sizeof(err));
	if (listen_fd < 0) {
		log_error("%s", err);
		return 1;
	}
	snprintf(listen_desc, sizeof(listen_desc), "%s:%u", inet_ntoa(addr.sin_addr),
		 ntohs(addr.sin_port));
	if (opts.status_socket)
		snprintf(status_path, sizeof(status_path), "%s", opts.status_socket);
	else
		status_socket_for_port(status_path, sizeof(status_path), ntohs(addr.sin_port));
	status_fd = net_listen_unix(status_path, err, sizeof(err));
	if (status_fd < 0) {
		log_error("%s", err);
		return 1;
	}
	if (opts.metrics) {
		metrics_fd = net_listen_tcp(&metrics_addr, err, sizeof(err));
		if (metrics_fd < 0) {
			log_error("--metrics: %s", err);
			unlink(status_path);
			return 1;
		}
	}
	if (opts.port_file && write_port_file(opts.port_file, ntohs(addr.sin_port))) {
		log_error("cannot write %s: %s", opts.port_file, strerror(errno));
		unlink(status_path);
		return 1;
	}
	if (!opts.foreground) {
		if (daemonize()) {
			log_error("cannot daemonize: %s", strerror(errno));
			return 1;
		}
		log_setup(opts.log_level, true);
	}

	log_info("listening on %s, status on %s, max %s, reserve %s, grace %llu s%s",
		 listen_desc, status_path,
		 opts.max_pages != NO_MAX_PAGES ?
		 format_bytes(opts.max_pages * PROTO_PAGE_SIZE, max_text, sizeof(max_text)) : "none",
		 format_bytes(cfg.reserve_bytes, reserve_text, sizeof(reserve_text)),
		 (unsigned long long)opts.grace_s,
		 cfg.insecure ? ", NO AUTHENTICATION (--insecure-no-auth)" : "");
	if (max_file)
		log_info("max from %s: %s (SIGHUP reads it again)", max_file,
			 cfg.max_file_pages != NO_MAX_PAGES ?
			 format_bytes(cfg.max_file_pages * PROTO_PAGE_SIZE, max_text, sizeof(max_text)) :
			 "none");
	if (clients_dir)
		log_info("%zu clients, one key each, from %s (SIGHUP reloads)", cfg.keys.count,
			 clients_dir);
	else if (cfg.keys.shared)
		log_info("one key for every client name, from %s", opts.key_file);
	cfg.max_connections = connections_that_fit((unsigned int)opts.max_connections);
	if (cfg.max_connections < opts.max_connections)
		log_warn("open files limited: at most %u connections, not %llu", cfg.max_connections,
			 (unsigned long long)opts.max_connections);
	cfg.max_conns_per_client = opts.max_conns_per_client ?
				   (unsigned int)opts.max_conns_per_client :
				   default_conns_per_client(cfg.max_connections);
	log_info("limits: %u connections (%u a client), %u authenticating per address, "
		 "%u namespaces a client, idle timeout %llu s, message timeout %llu s, buffers %s",
		 cfg.max_connections, cfg.max_conns_per_client, cfg.max_unauth_per_address,
		 cfg.max_namespaces_per_client, (unsigned long long)opts.idle_timeout_s,
		 (unsigned long long)opts.message_timeout_s,
		 format_bytes(cfg.buffer_budget, budget_text, sizeof(budget_text)));
	if (opts.peer_count)
		log_info("%u peers to move pages to, peer key from %s", opts.peer_count,
			 opts.peer_key_file);
	else if (opts.peer_key_file)
		log_info("peers may store pages here (peer key from %s)", opts.peer_key_file);
	if (opts.memavailable_file)
		log_warn("taking MemAvailable from %s (testing)", opts.memavailable_file);
	if (metrics_fd >= 0)
		log_info("metrics on http://%s:%u/metrics", inet_ntoa(metrics_addr.sin_addr),
			 ntohs(metrics_addr.sin_port));

	server_init(&srv, &cfg, monotonic_ms());
	if (migrate_init(&srv, opts.peers, opts.peer_count)) {
		log_error("cannot set up the peers: %s", strerror(errno));
		server_destroy(&srv);
		return 1;
	}
	status = net_run(&srv, listen_fd, status_fd, metrics_fd, listen_desc);
	server_destroy(&srv);
	migrate_destroy(&srv);
	close(listen_fd);
	close(status_fd);
	if (metrics_fd >= 0)
		close(metrics_fd);
	unlink(status_path);
	free(clients_dir);
	free(max_file);
	log_info("stopped");
	return status;
}
