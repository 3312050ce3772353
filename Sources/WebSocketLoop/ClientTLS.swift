import CLibWebsockets

/// How a client loop checks `wss://` hubs. libwebsockets keeps the trusted
/// CAs in the context, so this is one setting for every connection of a loop.
public struct ClientTLS: Sendable, Equatable {
    /// A PEM file of the CA certificates to trust instead of the system's; nil: the system's.
    public var caFile: String?
    /// Accept any certificate: self-signed, unknown CA, another host's, expired.
    /// For tests and first setups only; the connection is encrypted but not authenticated.
    public var insecure: Bool

    public init(caFile: String? = nil, insecure: Bool = false) {
        self.caFile = caFile
        self.insecure = insecure
    }

    /// The `lws_client_connect_info.ssl_connection` flags.
    var connectFlags: Int32 {
        var flags = Int32(LCCSCF_USE_SSL.rawValue)
        if insecure {
            flags |= Int32(LCCSCF_ALLOW_SELFSIGNED.rawValue | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue
                           | LCCSCF_ALLOW_EXPIRED.rawValue | LCCSCF_ALLOW_INSECURE.rawValue)
        }
        return flags
    }
}
