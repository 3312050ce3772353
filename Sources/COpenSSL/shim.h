#ifndef SYNCHUB_COPENSSL_SHIM_H
#define SYNCHUB_COPENSSL_SHIM_H

// OpenSSL for syncclient's HTTPS requests (`TLSStream.swift`, the one file
// that calls it): the same library libwebsockets checks `wss://` hubs with.
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/// A client context's options (macros in C): a peer that closes without
/// close_notify ends the stream like a clean close (HTTP's own framing says
/// whether the answer is whole), and a write retried after WANT_WRITE may
/// come from a buffer that moved (a Swift array's storage).
static inline void copenssl_prepare_client(SSL_CTX *context)
{
    SSL_CTX_set_options(context, SSL_OP_IGNORE_UNEXPECTED_EOF);
    SSL_CTX_set_mode(context, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

/// Server Name Indication: which host's certificate to ask for (a macro in C).
static inline int copenssl_set_server_name(SSL *ssl, const char *name)
{
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

#endif
