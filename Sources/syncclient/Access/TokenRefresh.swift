import Foundation

/// `watch --token-file FILE` (A10): shortly before the token in use expires,
/// look in FILE for a newer one and send it in-band as an `auth` frame, so
/// the hub does not close the connection at `exp`. Pure: the link reads the
/// file and passes its text and the clock in.
struct TokenRefresh: Equatable, Sendable {
    /// The token in use (sent on every upgrade and in the last `auth` frame).
    private(set) var token: String
    private(set) var expiry: Double?
    /// Seconds before `exp` from which FILE is read.
    var lead: Double = 60
    /// Seconds between two reads of FILE.
    var every: Double = 2
    private var lastLook: Double = -.infinity

    init(token: String) {
        self.token = token
        expiry = Self.expiry(of: token)
    }

    /// Whether it is time to read FILE again (seconds since the epoch).
    mutating func wantsLook(now: Double) -> Bool {
        guard let expiry, now >= expiry - lead, now - lastLook >= every else { return false }
        lastLook = now
        return true
    }

    /// FILE's text as read: the `auth` frame to send when it holds a token
    /// that expires later than the one in use, else nil.
    mutating func offer(_ text: String) -> String? {
        guard let candidate = try? HubAccess.checkedToken(text, from: "--token-file"), candidate != token,
              let newExpiry = Self.expiry(of: candidate), newExpiry > (expiry ?? 0) else { return nil }
        token = candidate
        expiry = newExpiry
        return "{\"type\":\"auth\",\"token\":\"\(candidate)\"}"
    }

    /// A JWT's `exp` claim, read without checking the signature: the hub
    /// checks it; the client only needs to know when to look for a newer one.
    static func expiry(of token: String) -> Double? {
        (claims(of: token)?["exp"] as? NSNumber)?.doubleValue
    }

    /// The name a hub that checks tokens shows and records for this token's
    /// holder (A11): its `name`, else its `sub`. Read unverified, like `exp`.
    static func displayName(of token: String) -> String? {
        guard let claims = claims(of: token) else { return nil }
        return (claims["name"] as? String) ?? (claims["sub"] as? String)
    }

    private static func claims(of token: String) -> [String: Any]? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}
