import COpenSSL
import Foundation
import WebSocketLoop

/// TLS over a connected socket, for `https://` hubs, checked as the
/// `wss://` commands check them (`ClientTLS`; docs/SECURITY.md, "Clients"):
/// the system's CAs, or exactly those of `--ca FILE`, and the host name or
/// address in the certificate; `--insecure` checks nothing. The one file
/// that calls OpenSSL; the handles are freed with this object.
final class TLSStream: ByteStream {
    /// Why a TLS connection could not be made, for a person.
    enum Failure: Error, Equatable, CustomStringConvertible {
        case certificate(String)
        case handshake(String)
        /// Anything else, in its own words (a --ca file OpenSSL cannot load, the deadline).
        case setup(String)

        var description: String {
            switch self {
            case let .certificate(words):
                "the hub's TLS certificate was refused: \(words) (--ca FILE trusts the hub's CA; --insecure skips the check)"
            case let .handshake(words): "the TLS handshake failed (does the hub serve https:// on this port?): \(words)"
            case let .setup(words): words
            }
        }
    }

    private let socket: PlainStream
    private let context: OpaquePointer
    private let ssl: OpaquePointer

    /// Shakes hands over `socket` with the hub at `host` (as the URL names it) before `deadline`.
    init(over socket: PlainStream, host: String, tls: ClientTLS, deadline: Date) throws(Failure) {
        self.socket = socket
        // OpenSSL writes with write(2), not send(2) with MSG_NOSIGNAL: a hub
        // that closed first must end the exchange, not the process (as
        // libwebsockets ignores SIGPIPE for the wss:// commands).
        signal(SIGPIPE, SIG_IGN)
        ERR_clear_error()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .setup("OpenSSL: \(Self.errorWords())") }
        // Before SSL_new, which copies the context's options and modes.
        copenssl_prepare_client(context)
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw .setup("OpenSSL: \(Self.errorWords())")
        }
        self.context = context
        self.ssl = ssl
        try trust(tls, host: PlainStream.bareHost(host))
        guard SSL_set_fd(ssl, socket.socket) == 1 else { throw .setup("OpenSSL: \(Self.errorWords())") }
        try shakeHands(until: deadline)
    }

    deinit {
        // The exchange is over and the hub may have gone already: the
        // close_notify is a courtesy, and whether it went out changes nothing.
        if SSL_is_init_finished(ssl) == 1 { _ = SSL_shutdown(ssl) }
        ERR_clear_error()
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    private func trust(_ tls: ClientTLS, host: String) throws(Failure) {
        var address = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &address) == 1 || inet_pton(AF_INET6, host, &address) == 1
        // Server Name Indication names a host, never an address (RFC 6066, 3).
        if !isAddress, copenssl_set_server_name(ssl, host) != 1 { throw .setup("OpenSSL: \(Self.errorWords())") }
        if tls.insecure {
            SSL_set_verify(ssl, SSL_VERIFY_NONE, nil)
            return
        }
        if let caFile = tls.caFile {
            // Exactly the named CAs, as `wss://` does with --ca.
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw .setup("--ca \(caFile) cannot be loaded: \(Self.errorWords())")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw .setup("the system's CA certificates cannot be loaded: \(Self.errorWords())")
        }
        let named = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) : SSL_set1_host(ssl, host)
        guard named == 1 else { throw .setup("OpenSSL cannot check the name \(host): \(Self.errorWords())") }
        SSL_set_verify(ssl, SSL_VERIFY_PEER, nil)
    }

    private func shakeHands(until deadline: Date) throws(Failure) {
        while true {
            ERR_clear_error()
            let result = SSL_connect(ssl)
            if result == 1 { return }
            let error = SSL_get_error(ssl, result)
            if error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE {
                let events = Int16(error == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT)
                guard PlainStream.wait(socket.socket, for: events, until: deadline) else {
                    throw .setup("no answer in time")
                }
                continue
            }
            let verdict = SSL_get_verify_result(ssl)
            if verdict != Int(X509_V_OK) { throw .certificate(String(cString: X509_verify_cert_error_string(verdict))) }
            throw .handshake(Self.errorWords())
        }
    }

    func write(_ bytes: [UInt8], until deadline: Date) -> Bool {
        var sent = 0
        while sent < bytes.count {
            ERR_clear_error()
            let count = bytes[sent...].withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
            if count > 0 {
                sent += Int(count)
                continue
            }
            guard wait(after: count, until: deadline) else { return false }
        }
        return true
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, until deadline: Date) -> StreamRead {
        while true {
            ERR_clear_error()
            let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            if count > 0 { return .bytes(Int(count)) }
            if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN { return .end }
            guard wait(after: count, until: deadline) else {
                return .failed(deadline.timeIntervalSinceNow <= 0 ? "no answer in time" : "the connection broke")
            }
        }
    }

    /// After a read or write that returned `result` (not a success): waits
    /// for what OpenSSL wants; false when it wants nothing (an error) or the
    /// deadline passed.
    private func wait(after result: Int32, until deadline: Date) -> Bool {
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: PlainStream.wait(socket.socket, for: Int16(POLLIN), until: deadline)
        case SSL_ERROR_WANT_WRITE: PlainStream.wait(socket.socket, for: Int16(POLLOUT), until: deadline)
        default: false
        }
    }

    /// OpenSSL's words for the errors it queued, oldest first.
    private static func errorWords() -> String {
        var words: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var text = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &text, text.count)
            words.append(String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return words.isEmpty ? "no reason given" : words.joined(separator: "; ")
    }
}
