import CLibWebsockets

/// The PEM files of a TLS server: its certificate (chain) and private key.
public struct TLSFiles: Sendable, Equatable {
    public var certificatePath: String
    public var keyPath: String

    public init(certificatePath: String, keyPath: String) {
        self.certificatePath = certificatePath
        self.keyPath = keyPath
    }

    /// Why the key cannot serve the certificate (OpenSSL's own check), or
    /// nil when it can. Run at start-up: libwebsockets accepts some
    /// mismatched pairs (a key of another type) and every handshake would
    /// then fail.
    public func pairProblem() -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        guard swlws_check_certificate_key(certificatePath, keyPath, &buffer, buffer.count) != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
