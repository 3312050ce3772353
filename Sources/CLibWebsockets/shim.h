#ifndef SYNCHUB_CLIBWEBSOCKETS_SHIM_H
#define SYNCHUB_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <ev.h>

/// The headroom lws_write needs before every payload (a macro in C).
static inline size_t swlws_pre(void) { return LWS_PRE; }

/// Writes the status line and common headers of an HTTP response whose body
/// follows with LWS_WRITE_HTTP_FINAL. Returns nonzero on failure.
static inline int swlws_write_http_headers(struct lws *wsi, unsigned int status,
                                           const char *content_type, size_t body_length,
                                           int no_store)
{
    unsigned char buffer[LWS_PRE + 1024];
    unsigned char *start = &buffer[LWS_PRE], *p = start, *end = &buffer[sizeof(buffer) - 1];
    if (lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)body_length, &p, end))
        return 1;
    if (no_store && lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                                (const unsigned char *)"no-store", 8, &p, end))
        return 1;
    if (lws_finalize_write_http_header(wsi, start, &p, end))
        return 1;
    return 0;
}

/// Copies the request URI into `buffer`; returns its length or -1.
static inline int swlws_request_path(struct lws *wsi, char *buffer, int length)
{
    return lws_hdr_copy(wsi, buffer, length, WSI_TOKEN_GET_URI);
}

/// The peer's address as text, or "" (used in logs only).
static inline void swlws_peer_address(struct lws *wsi, char *buffer, size_t length)
{
    buffer[0] = 0;
    lws_get_peer_simple(wsi, buffer, length);
}

/// Answers a refused WebSocket upgrade with a complete HTTP/1.1 response
/// (lws_return_http_status says HTTP/1.0 at this point of the handshake,
/// which strict clients reject). The caller then returns nonzero.
static inline int swlws_refuse_upgrade(struct lws *wsi, unsigned int status, const char *body)
{
    unsigned char buffer[LWS_PRE + 1200];
    char *text = (char *)&buffer[LWS_PRE];
    const char *phrase = status == 400 ? "Bad Request" : status == 404 ? "Not Found" :
                         status == 414 ? "URI Too Long" : status == 503 ? "Service Unavailable" : "Refused";
    int length = lws_snprintf(text, 1200 - 1,
        "HTTP/1.1 %u %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
        "connection: close\r\n\r\n%s\n", status, phrase, (int)strlen(body) + 1, body);
    return lws_write(wsi, buffer + LWS_PRE, (size_t)length, LWS_WRITE_HTTP_HEADERS) != length;
}

/// An epoll-backed libev loop for lws to join as a foreign loop (lws's own
/// loop polls every socket on every turn, which does not scale).
static inline struct ev_loop *swlws_ev_loop_new(void) { return ev_loop_new(EVFLAG_AUTO); }
static inline void swlws_ev_loop_destroy(struct ev_loop *loop) { ev_loop_destroy(loop); }
static inline void swlws_ev_run(struct ev_loop *loop) { ev_run(loop, 0); }
static inline void swlws_ev_break(struct ev_loop *loop) { ev_break(loop, EVBREAK_ALL); }

/// A prepare watcher: `callback(data)` runs each time the loop has handled
/// its events and is about to wait again (the end of a "turn").
typedef void (*swlws_turn_callback)(void *data);
struct swlws_turn_watcher { ev_prepare prepare; swlws_turn_callback callback; void *data; };
static inline void swlws_turn_fire(struct ev_loop *loop, ev_prepare *w, int revents)
{
    (void)loop; (void)revents;
    struct swlws_turn_watcher *watcher = (struct swlws_turn_watcher *)w;
    watcher->callback(watcher->data);
}
static inline struct swlws_turn_watcher *swlws_turn_watcher_start(struct ev_loop *loop, swlws_turn_callback callback, void *data)
{
    struct swlws_turn_watcher *watcher = (struct swlws_turn_watcher *)calloc(1, sizeof(*watcher));
    if (!watcher) return NULL;
    watcher->callback = callback;
    watcher->data = data;
    ev_prepare_init(&watcher->prepare, swlws_turn_fire);
    ev_prepare_start(loop, &watcher->prepare);
    return watcher;
}
static inline void swlws_turn_watcher_stop(struct ev_loop *loop, struct swlws_turn_watcher *watcher)
{
    ev_prepare_stop(loop, &watcher->prepare);
    free(watcher);
}

#endif
