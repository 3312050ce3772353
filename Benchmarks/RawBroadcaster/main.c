/*
 * raw-broadcaster: the "ceiling" baseline for SyncHub's fan-out benchmarks.
 *
 * A minimal libwebsockets broadcaster in the style of the lws
 * minimal-ws-server-ring example: one lws context, one service thread,
 * ws://HOST:PORT/boards/NAME, and every message a client sends is relayed to
 * every client of the same NAME, the sender included (text as text, binary as
 * binary). Nothing else: no parsing, no state, no limits beyond backpressure.
 *
 *   raw-broadcaster --port P [--host H] [--validate-utf8]
 *
 * Prints "listening on ws://H:P" once listening; exits 0 on SIGINT/SIGTERM.
 *
 * Fan-out: each room keeps a ring of messages. A message is encoded once
 * (payload after LWS_PRE bytes of headroom, shared by every client: server
 * frames are not masked, so lws_write leaves the payload alone) and carries the
 * count of clients that still have to send it; each client keeps only its next
 * sequence number. One lws_write per WRITEABLE callback. The ring grows when
 * full; past RING_HIGH pending messages the senders of the room are paused with
 * lws_rx_flow_control and resumed below RING_LOW, so a slow reader bounds
 * memory instead of dropping frames.
 */

#include <libwebsockets.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_INITIAL 1024u /* power of two */
#define RING_HIGH 4096u    /* pause the room's senders above this many pending */
#define RING_LOW 1024u     /* resume them at or below this */
#define NAME_MAX_LEN 64

struct msg {
	unsigned char *buf; /* LWS_PRE headroom + payload */
	size_t len;
	unsigned int remaining; /* clients that still have to send it */
	int binary;
};

struct pss;

struct room {
	struct room *next;
	char name[NAME_MAX_LEN + 1];
	struct pss *clients;
	unsigned int nclients;
	unsigned int paused; /* clients whose rx is flow-controlled off */
	struct msg *ring;
	unsigned int mask; /* capacity - 1 */
	unsigned int head; /* sequence of the next message to insert */
	unsigned int tail; /* sequence of the oldest message still held */
};

struct pss {
	struct pss *next; /* in room->clients */
	struct lws *wsi;
	struct room *room;
	unsigned int seq; /* next message this client has to send */
	int paused;
	unsigned char *frag; /* partial message being received */
	size_t frag_len, frag_cap;
};

static struct room *rooms;
static volatile sig_atomic_t interrupted;
static struct lws_context *context;

static int
valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > NAME_MAX_LEN || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
			return 0;
	}
	return 1;
}

/* Copies the board name from the request URI; 0 if the path is not a board. */
static int
board_name(struct lws *wsi, char *name)
{
	char uri[256];
	if (lws_hdr_copy(wsi, uri, sizeof(uri), WSI_TOKEN_GET_URI) <= 0)
		return 0;
	if (strncmp(uri, "/boards/", 8))
		return 0;
	if (strlen(uri + 8) > NAME_MAX_LEN)
		return 0;
	strcpy(name, uri + 8);
	return valid_name(name);
}

static struct room *
room_join(const char *name, struct pss *pss)
{
	struct room *r;
	for (r = rooms; r; r = r->next)
		if (!strcmp(r->name, name))
			break;
	if (!r) {
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		r->ring = calloc(RING_INITIAL, sizeof(struct msg));
		if (!r->ring) {
			free(r);
			return NULL;
		}
		r->mask = RING_INITIAL - 1;
		strcpy(r->name, name);
		r->next = rooms;
		rooms = r;
	}
	pss->room = r;
	pss->seq = r->head; /* a newcomer gets only what is sent after it joins */
	pss->next = r->clients;
	r->clients = pss;
	r->nclients++;
	return r;
}

/* Frees the messages every client has sent; resumes paused senders. */
static void
room_reap(struct room *r)
{
	while (r->tail != r->head && !r->ring[r->tail & r->mask].remaining) {
		struct msg *m = &r->ring[r->tail & r->mask];
		free(m->buf);
		m->buf = NULL;
		r->tail++;
	}
	if (r->paused && r->head - r->tail <= RING_LOW) {
		for (struct pss *p = r->clients; p; p = p->next)
			if (p->paused) {
				p->paused = 0;
				lws_rx_flow_control(p->wsi, 1);
			}
		r->paused = 0;
	}
}

static void
room_leave(struct pss *pss)
{
	struct room *r = pss->room;
	if (!r)
		return;
	pss->room = NULL;
	for (struct pss **pp = &r->clients; *pp; pp = &(*pp)->next)
		if (*pp == pss) {
			*pp = pss->next;
			break;
		}
	r->nclients--;
	if (pss->paused)
		r->paused--;
	for (unsigned int s = pss->seq; s != r->head; s++)
		r->ring[s & r->mask].remaining--;
	room_reap(r);
	if (r->nclients)
		return;
	for (struct room **rp = &rooms; *rp; rp = &(*rp)->next)
		if (*rp == r) {
			*rp = r->next;
			break;
		}
	free(r->ring);
	free(r);
}

static int
room_grow(struct room *r)
{
	unsigned int cap = (r->mask + 1) * 2;
	struct msg *ring = calloc(cap, sizeof(struct msg));
	if (!ring)
		return -1;
	for (unsigned int s = r->tail; s != r->head; s++)
		ring[s & (cap - 1)] = r->ring[s & r->mask];
	free(r->ring);
	r->ring = ring;
	r->mask = cap - 1;
	return 0;
}

/* Takes ownership of buf (LWS_PRE + len bytes). */
static int
room_publish(struct room *r, struct pss *sender, unsigned char *buf, size_t len, int binary)
{
	if (r->head - r->tail > r->mask && room_grow(r)) {
		free(buf);
		return -1;
	}
	unsigned int seq = r->head++;
	struct msg *m = &r->ring[seq & r->mask];
	m->buf = buf;
	m->len = len;
	m->binary = binary;
	m->remaining = r->nclients;
	/* A client with older messages pending already asked for WRITEABLE. */
	for (struct pss *p = r->clients; p; p = p->next)
		if (p->seq == seq)
			lws_callback_on_writable(p->wsi);
	if (r->head - r->tail > RING_HIGH && !sender->paused) {
		sender->paused = 1;
		r->paused++;
		lws_rx_flow_control(sender->wsi, 0);
	}
	return 0;
}

static int
callback_broadcast(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		   void *in, size_t len)
{
	struct pss *pss = user;
	char name[NAME_MAX_LEN + 1];

	switch (reason) {
	case LWS_CALLBACK_HTTP: /* not an upgrade: nothing served over plain HTTP */
		lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
		return -1;

	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
		if (!board_name(wsi, name)) {
			lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL);
			return -1;
		}
		return 0;

	case LWS_CALLBACK_ESTABLISHED:
		memset(pss, 0, sizeof(*pss));
		pss->wsi = wsi;
		if (!board_name(wsi, name) || !room_join(name, pss))
			return -1;
		return 0;

	case LWS_CALLBACK_CLOSED:
		room_leave(pss);
		free(pss->frag);
		pss->frag = NULL;
		return 0;

	case LWS_CALLBACK_SERVER_WRITEABLE: {
		struct room *r = pss->room;
		if (!r || pss->seq == r->head)
			return 0; /* spurious: nothing to send */
		struct msg *m = &r->ring[pss->seq & r->mask];
		int n = lws_write(wsi, m->buf + LWS_PRE, m->len,
				  m->binary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT);
		if (n < (int)m->len)
			return -1;
		pss->seq++;
		if (!--m->remaining)
			room_reap(r);
		if (pss->seq != r->head)
			lws_callback_on_writable(wsi);
		return 0;
	}

	case LWS_CALLBACK_RECEIVE: {
		if (!pss->room)
			return -1;
		int first = lws_is_first_fragment(wsi);
		int final = lws_is_final_fragment(wsi) && !lws_remaining_packet_payload(wsi);
		int binary = lws_frame_is_binary(wsi);
		if (first && final && !pss->frag_len) { /* whole message: the fast path */
			unsigned char *buf = malloc(LWS_PRE + len + 1);
			if (!buf)
				return -1;
			memcpy(buf + LWS_PRE, in, len);
			return room_publish(pss->room, pss, buf, len, binary);
		}
		if (!pss->frag_cap) {
			pss->frag_cap = LWS_PRE + len + 4096;
			pss->frag = malloc(pss->frag_cap);
			pss->frag_len = 0;
		} else if (LWS_PRE + pss->frag_len + len > pss->frag_cap) {
			pss->frag_cap = (LWS_PRE + pss->frag_len + len) * 2;
			pss->frag = realloc(pss->frag, pss->frag_cap);
		}
		if (!pss->frag)
			return -1;
		memcpy(pss->frag + LWS_PRE + pss->frag_len, in, len);
		pss->frag_len += len;
		if (!final)
			return 0;
		unsigned char *buf = pss->frag;
		size_t total = pss->frag_len;
		pss->frag = NULL;
		pss->frag_len = pss->frag_cap = 0;
		return room_publish(pss->room, pss, buf, total, binary);
	}

	default:
		break;
	}
	return lws_callback_http_dummy(wsi, reason, user, in, len);
}

static const struct lws_protocols protocols[] = {
	/* first: clients that ask for no subprotocol are bound to protocols[0] */
	{ "raw-broadcast", callback_broadcast, sizeof(struct pss), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void
on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
	if (context)
		lws_cancel_service(context); /* wake the service thread */
}

static void
usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s --port P [--host H] [--validate-utf8]\n"
		"Relays every message on ws://H:P/boards/NAME to all clients of NAME\n"
		"(sender included). Default host 127.0.0.1. Stops on SIGINT/SIGTERM.\n",
		argv0);
}

int
main(int argc, char **argv)
{
	struct lws_context_creation_info info;
	const char *host = "127.0.0.1";
	int port = -1, utf8 = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--host") && i + 1 < argc)
			host = argv[++i];
		else if (!strcmp(argv[i], "--validate-utf8"))
			utf8 = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(argv[0]);
			return 0;
		} else {
			usage(argv[0]);
			return 2;
		}
	}
	if (port < 0 || port > 65535) {
		usage(argv[0]);
		return 2;
	}

	lws_set_log_level(LLL_ERR | LLL_WARN, NULL);
	signal(SIGPIPE, SIG_IGN);

	memset(&info, 0, sizeof(info));
	info.port = port;
	info.iface = host;
	info.protocols = protocols;
	info.options = utf8 ? LWS_SERVER_OPTION_VALIDATE_UTF8 : 0;
	info.fd_limit_per_thread = 1 + 65536; /* enough for big fan-outs, independent of ulimit */

	context = lws_create_context(&info);
	if (!context) {
		fprintf(stderr, "raw-broadcaster: could not listen on %s:%d\n", host, port);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("listening on ws://%s:%d\n", host, port);
	fflush(stdout);

	int n = 0;
	while (n >= 0 && !interrupted)
		n = lws_service(context, 0);

	lws_context_destroy(context);
	context = NULL;
	return 0;
}
