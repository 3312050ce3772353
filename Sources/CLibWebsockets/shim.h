#ifndef SYNCHUB_CLIBWEBSOCKETS_SHIM_H
#define SYNCHUB_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>
#include <string.h>
#include <ev.h>

/// The headroom lws_write needs before every payload (a macro in C).
static inline size_t swlws_pre(void) { return LWS_PRE; }

/// Writes the status line and common headers of an HTTP response whose body
/// follows with LWS_WRITE_HTTP_FINAL, with the caching and validation headers a stored image needs:
/// each of `cache_control`, `etag`, `www_authenticate` and
/// `content_security_policy` is sent when not NULL (`no-store` for a response
/// that must not be kept is a `cache_control`), and always
/// `x-content-type-options: nosniff`.
/// Returns nonzero on failure.
static inline int swlws_write_http_head(struct lws *wsi, unsigned int status, const char *content_type,
                                        size_t body_length, const char *cache_control, const char *etag,
                                        const char *www_authenticate, const char *content_security_policy)
{
    unsigned char buffer[LWS_PRE + 2048];
    unsigned char *start = &buffer[LWS_PRE], *p = start, *end = &buffer[sizeof(buffer) - 1];
    if (lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)body_length, &p, end))
        return 1;
    if (cache_control && lws_add_http_header_by_name(wsi, (const unsigned char *)"cache-control:",
                                                     (const unsigned char *)cache_control, (int)strlen(cache_control), &p, end))
        return 1;
    if (etag && lws_add_http_header_by_name(wsi, (const unsigned char *)"etag:",
                                            (const unsigned char *)etag, (int)strlen(etag), &p, end))
        return 1;
    if (www_authenticate && lws_add_http_header_by_name(wsi, (const unsigned char *)"www-authenticate:",
                                                        (const unsigned char *)www_authenticate, (int)strlen(www_authenticate), &p, end))
        return 1;
    if (content_security_policy && lws_add_http_header_by_name(wsi, (const unsigned char *)"content-security-policy:",
                                                               (const unsigned char *)content_security_policy,
                                                               (int)strlen(content_security_policy), &p, end))
        return 1;
    if (lws_add_http_header_by_name(wsi, (const unsigned char *)"x-content-type-options:", (const unsigned char *)"nosniff", 7, &p, end))
        return 1;
    if (lws_finalize_write_http_header(wsi, start, &p, end))
        return 1;
    return 0;
}

/// Which method a plain HTTP request used: 0 GET, 1 POST, 2 PUT, 3 other.
static inline int swlws_http_method(struct lws *wsi)
{
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) > 0) return 0;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_POST_URI) > 0) return 1;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_PUT_URI) > 0) return 2;
    return 3;
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
    const char *phrase = status == 400 ? "Bad Request" : status == 401 ? "Unauthorized" :
                         status == 403 ? "Forbidden" : status == 404 ? "Not Found" :
                         status == 414 ? "URI Too Long" : status == 429 ? "Too Many Requests" :
                         status == 503 ? "Service Unavailable" : "Refused";
    /* 401/403 also carry the reason as an RFC 6750 challenge: a WebSocket
       client (syncclient on lws) sees the headers of a refused upgrade, not its body. */
    char challenge[260] = "";
    if (status == 401 || status == 403) {
        char reason[160];
        size_t n = 0;
        for (const char *c = body; *c && n < sizeof(reason) - 1; c++)
            reason[n++] = (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) ? '\'' : *c;
        reason[n] = 0;
        lws_snprintf(challenge, sizeof(challenge), "www-authenticate: Bearer realm=\"synchub\", error=\"%s\", "
                     "error_description=\"%s\"\r\n", status == 401 ? "invalid_token" : "insufficient_scope", reason);
    }
    int length = lws_snprintf(text, 1200 - 1,
        "HTTP/1.1 %u %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n%s"
        "connection: close\r\n\r\n%s\n", status, phrase, (int)strlen(body) + 1, challenge, body);
    return lws_write(wsi, buffer + LWS_PRE, (size_t)length, LWS_WRITE_HTTP_HEADERS) != length;
}

/// Server side: a passphrase callback that has none, so an encrypted key
/// fails to load instead of OpenSSL prompting on the terminal.
static inline int swlws_no_passphrase(char *buffer, int size, int rwflag, void *data)
{
    (void)buffer; (void)size; (void)rwflag; (void)data;
    return 0;
}

/// Server side: whether the PEM private key in `key_path` belongs to the
/// first certificate in `cert_path`, the check a TLS server's handshake
/// depends on (lws does not make it when the key's type differs from the
/// certificate's). Returns 0 when it does; otherwise 1 and why in `buffer`.
static inline int swlws_check_certificate_key(const char *cert_path, const char *key_path, char *buffer, size_t length)
{
    buffer[0] = 0;
    FILE *file = fopen(cert_path, "r");
    if (!file) { lws_snprintf(buffer, length, "cannot open the certificate file"); return 1; }
    X509 *certificate = PEM_read_X509(file, NULL, swlws_no_passphrase, NULL);
    fclose(file);
    if (!certificate) { ERR_clear_error(); lws_snprintf(buffer, length, "no PEM certificate in the certificate file"); return 1; }
    file = fopen(key_path, "r");
    if (!file) { X509_free(certificate); lws_snprintf(buffer, length, "cannot open the key file"); return 1; }
    EVP_PKEY *key = PEM_read_PrivateKey(file, NULL, swlws_no_passphrase, NULL);
    fclose(file);
    if (!key) {
        X509_free(certificate);
        ERR_clear_error();
        lws_snprintf(buffer, length, "no unencrypted PEM private key in the key file");
        return 1;
    }
    int belongs = X509_check_private_key(certificate, key);
    EVP_PKEY_free(key);
    X509_free(certificate);
    ERR_clear_error();
    if (!belongs) { lws_snprintf(buffer, length, "the private key is not the certificate's"); return 1; }
    return 0;
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

/// Client side: the certificate problem OpenSSL found while checking a
/// hub's chain (`x509_ctx` is the `user` of
/// LWS_CALLBACK_OPENSSL_PERFORM_SERVER_CERT_VERIFICATION), as text, e.g.
/// "self-signed certificate"; "" when the chain is fine.
static inline void swlws_certificate_problem(void *x509_ctx, char *buffer, size_t length)
{
    buffer[0] = 0;
    if (!x509_ctx || !length) return;
    int error = X509_STORE_CTX_get_error((X509_STORE_CTX *)x509_ctx);
    if (error == X509_V_OK) return;
    lws_snprintf(buffer, length, "%s", X509_verify_cert_error_string(error));
}

/// Client side: appends `Authorization: VALUE` to an upgrade request from
/// LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER (`in` is `unsigned char **`,
/// `len` the room left). Returns nonzero when it does not fit.
static inline int swlws_append_authorization(struct lws *wsi, void *in, size_t room, const char *value)
{
    unsigned char **p = (unsigned char **)in;
    unsigned char *end = *p + room;
    return lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_AUTHORIZATION, (const unsigned char *)value,
                                        (int)strlen(value), p, end);
}

/// Client side: the `WWW-Authenticate` header of a refused upgrade into
/// `buffer` ("" when absent), readable in LWS_CALLBACK_CLIENT_CONNECTION_ERROR.
static inline void swlws_www_authenticate(struct lws *wsi, char *buffer, int length)
{
    buffer[0] = 0;
    if (lws_hdr_copy(wsi, buffer, length, WSI_TOKEN_HTTP_WWW_AUTHENTICATE) < 0) buffer[0] = 0;
}

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <unistd.h>
#include <errno.h>

/// --reuse-port: lws 4.1 never sets SO_REUSEPORT on its own listener, so
/// the hub opens the listening socket itself (SO_REUSEADDR + SO_REUSEPORT,
/// non-blocking) and lws adopts it as a raw descriptor. Returns the fd or
/// -errno; `bound_port` gets the port (for port 0).
static inline int swlws_open_shared_listener(const char *host, int port, int *bound_port)
{
    struct sockaddr_in address;
    memset(&address, 0, sizeof(address));
    address.sin_family = AF_INET;
    address.sin_port = htons((unsigned short)port);
    if (host == NULL || host[0] == 0) address.sin_addr.s_addr = htonl(INADDR_ANY);
    else if (inet_pton(AF_INET, host, &address.sin_addr) != 1) return -EINVAL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    int on = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0 ||
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) < 0 ||
        bind(fd, (struct sockaddr *)&address, sizeof(address)) < 0 ||
        listen(fd, 4096) < 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    socklen_t length = sizeof(address);
    if (getsockname(fd, (struct sockaddr *)&address, &length) == 0) *bound_port = ntohs(address.sin_port);
    return fd;
}

/// Hands the shared listener to lws as a raw descriptor of `protocol`:
/// its callback gets LWS_CALLBACK_RAW_RX_FILE when connections wait.
static inline struct lws *swlws_adopt_listener(struct lws_vhost *vhost, int fd, const char *protocol)
{
    lws_sock_file_fd_type descriptor;
    descriptor.filefd = fd;
    return lws_adopt_descriptor_vhost(vhost, LWS_ADOPT_RAW_FILE_DESC, descriptor, protocol, NULL);
}

/// Accepts every waiting connection on the shared listener and hands each
/// to lws as an HTTP (and WebSocket) server connection of `vhost`.
static inline int swlws_accept_waiting(struct lws_vhost *vhost, int fd)
{
    int accepted = 0;
    for (;;) {
        int client = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (client < 0) break;
        if (lws_adopt_socket_vhost(vhost, client) == NULL) close(client);
        else accepted++;
    }
    return accepted;
}
#endif
