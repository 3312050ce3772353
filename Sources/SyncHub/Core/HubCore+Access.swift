import Foundation
import SyncWire

/// Who may do what (docs/SECURITY.md, A1-A11), in the core: a connection
/// with no token yet waits outside its board, hearing nothing, until an
/// `auth` frame brings one; a token's role decides whether its changes are
/// taken; its name is the one others see; at `exp` it is closed unless a
/// newer token came first. The shell verifies header tokens before the
/// upgrade and hands the grant in with `.joined`.
extension HubCore {
    /// A connection that has not presented a valid token yet: the board it
    /// asked for, and, just before its `auth` frame is handled, that board
    /// as the store holds it then (`boardToLoad`, `provide`): never a
    /// snapshot from the upgrade, which an eviction meanwhile would make stale.
    struct Awaiting {
        var board: BoardAddress
        var stored: StoredBoard?
        /// Its token, verified and giving a role on `board`
        /// (`verifyAwaiting`): only then is the board read.
        var grant: Grant?
    }

    /// The board the shell must read from the store before handing over a
    /// frame of `connection`: it waits for its token, the token was
    /// verified (`verifyAwaiting`) and its board is not held. Nothing is
    /// read for a connection before it presents a valid token with a role
    /// on the board.
    func boardToLoad(connection: UInt64) -> BoardAddress? {
        guard let waiting = awaiting[connection], waiting.grant != nil, boards[waiting.board.key] == nil else { return nil }
        return waiting.board
    }

    /// The first frame of a connection waiting for its token, checked
    /// before its board is read: true when it is an `auth` frame whose token
    /// is valid and gives a role on the board (the grant is kept for
    /// `authenticate`). False changes nothing: `authenticate` then closes it.
    mutating func verifyAwaiting(_ connection: UInt64, frame: ParsedFrame) -> Bool {
        guard let waiting = awaiting[connection], frame.error == nil, let token = frame.message as? String, let verifier,
              let grant = try? verifier.verify(token, now: wallClock), grant.role(for: waiting.board) != nil else { return false }
        awaiting[connection]?.grant = grant
        return true
    }

    /// The board a connection waiting for its token is for, once its token
    /// was verified (cluster mode reads it, or catches up on it, then).
    @inline(__always)  // see HubCore.parse
    func awaitingBoard(connection: UInt64) -> BoardAddress? {
        guard let waiting = awaiting[connection], waiting.grant != nil else { return nil }
        return waiting.board
    }

    @inline(__always)  // see HubCore.parse
    func isAwaitingToken(_ connection: UInt64) -> Bool { awaiting[connection] != nil }

    /// The store's copy of the board `boardToLoad` named.
    mutating func provide(_ stored: StoredBoard?, for connection: UInt64) {
        awaiting[connection]?.stored = stored
    }

    /// Refused changes a minute after which a `read` connection is closed (A9).
    static let forbiddenPerMinute = 10

    var authRequired: Bool {
        @inline(__always) get { verifier != nil }  // see HubCore.parse
    }

    /// A completed upgrade: open hub, a header token's grant, or wait for `auth`.
    mutating func arrive(_ connection: UInt64, board: BoardAddress, stored: StoredBoard?, grant: Grant?, actions: inout [HubAction]) {
        guard authRequired else {
            join(connection, board: board, stored: stored, actions: &actions)
            return
        }
        guard let grant else {
            // A6: nothing is sent before a valid token; the board is read
            // when the token arrives (`boardToLoad`).
            awaiting[connection] = Awaiting(board: board, stored: nil)
            return
        }
        admit(connection, to: board, stored: stored, grant: grant, actions: &actions)
    }

    /// The first frame of a connection still waiting for its token.
    mutating func authenticate(_ connection: UInt64, frame: ParsedFrame, actions: inout [HubAction]) {
        guard let waiting = awaiting.removeValue(forKey: connection) else { return }
        guard frame.error == nil, let token = frame.message as? String else {
            counters.authRefused += 1
            let reason = frame.error?.message ?? "send {\"type\":\"auth\",\"token\":\"...\"} first"
            actions.append(.close(connection: connection, code: 4401, reason: String(reason.prefix(120))))
            return
        }
        guard let verifier else { return }
        do {
            var grant: Grant
            if let verified = waiting.grant { grant = verified } else { grant = try verifier.verify(token, now: wallClock) }
            admit(connection, to: waiting.board, stored: waiting.stored, grant: grant, actions: &actions)
        } catch {
            counters.authRefused += 1
            actions.append(.close(connection: connection, code: 4401, reason: error.reason))
        }
    }

    /// Puts a connection with a valid token on its board, or closes it when
    /// the token gives no role there (A8).
    private mutating func admit(_ connection: UInt64, to board: BoardAddress, stored: StoredBoard?, grant: Grant,
                                actions: inout [HubAction]) {
        guard let role = grant.role(for: board) else {
            counters.authForbidden += 1
            actions.append(.close(connection: connection, code: 4403, reason: "your token gives no role on this board"))
            return
        }
        if let refusal = admits(board: board) {
            // Limits checked again: it waited outside while others came (1013: try again later).
            actions.append(.close(connection: connection, code: 1013, reason: String(refusal.message.prefix(120))))
            return
        }
        actions.append(.authenticated(connection: connection))
        join(connection, board: board, stored: stored, opens: role >= .write, actions: &actions)
        guard let room = boardOf[connection].flatMap({ boards[$0] }) else { return }
        room.members[connection]?.grant = grant
        room.members[connection]?.role = role
        // A11: the token's name is the one shown and the one acting.
        room.members[connection]?.name = grant.displayName
        room.setName(grant.displayName, for: connection)
        expiries[connection] = grant.expiry
        counters.authAccepted += 1
    }

    /// A10: a newer token for the same `sub`, sent before the current one
    /// expires; its roles apply from now on, also when narrower.
    mutating func refresh(_ connection: UInt64, token: String, ref: String?, actions: inout [HubAction]) {
        guard let board = boardOf[connection], let room = boards[board] else { return }
        guard let verifier, let current = room.members[connection]?.grant else {
            // An open hub takes no tokens: nothing to do, nothing refused.
            actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: room.durableVersion)))
            return
        }
        let grant: Grant
        do {
            grant = try verifier.verify(token, now: wallClock)
        } catch {
            counters.authRefused += 1
            actions.append(.send(connection: connection, frame: HubMessage.rejected(ref: ref, code: "bad_token", message: error.reason)))
            return
        }
        guard grant.sub == current.sub else {
            actions.append(.send(connection: connection, frame: HubMessage.rejected(
                ref: ref, code: "other_subject", message: "a refresh must be for the same sub (\(current.sub)); reconnect to change who you are")))
            return
        }
        guard let role = grant.role(for: room.address) else {
            counters.authForbidden += 1
            // Nothing more is taken from it while the close goes out.
            room.members[connection]?.role = nil
            expiries[connection] = nil
            actions.append(.close(connection: connection, code: 4403, reason: "your new token gives no role on this board"))
            return
        }
        room.members[connection]?.grant = grant
        room.members[connection]?.role = role
        expiries[connection] = grant.expiry
        if role == .read, room.setEditing(nil, for: connection) { markForPublish(room) }
        if grant.displayName != current.displayName, room.members[connection]?.replica == nil {
            // A thin connection follows its token's new name; a replica's
            // operations carry its hello's name until it reconnects.
            room.members[connection]?.name = grant.displayName
            room.setName(grant.displayName, for: connection)
            markForPublish(room)
        }
        actions.append(.send(connection: connection, frame: HubMessage.ack(ref: ref, version: room.durableVersion)))
    }

    /// A9: a change from a `read` connection, refused; the tenth in a minute closes it.
    /// A13: `adminOnly`, a change only an admin may make, from a `write` connection.
    mutating func forbid(_ frame: ParsedFrame, from connection: UInt64, in room: BoardRoom, adminOnly: Bool = false,
                         actions: inout [HubAction]) {
        counters.authForbidden += 1
        let minute: UInt64 = 60_000_000_000
        var recent = room.members[connection]?.forbidden.filter { now < $0 + minute } ?? []
        recent.append(now)
        room.members[connection]?.forbidden = recent
        if recent.count >= Self.forbiddenPerMinute {
            let token = adminOnly ? "a token that is not admin" : "a read-only token"
            actions.append(.close(connection: connection, code: 4403, reason: "\(Self.forbiddenPerMinute) refused changes a minute with \(token)"))
            return
        }
        let message = adminOnly ? "only the shop's staff (an admin token) may change the catalog"
            : "your token lets you read this board, not change it"
        if frame.isOperations {
            let have = room.members[connection]?.replica.map { room.durableSeq(of: $0) }
            actions.append(.send(connection: connection, frame: HubMessage.error(ProtocolError("forbidden", message), ref: frame.ref, have: have)))
        } else {
            actions.append(.send(connection: connection, frame: HubMessage.rejected(ref: frame.ref, code: "forbidden", message: message)))
        }
    }

    /// A10: connections whose token ran out without a newer one: closed 4401.
    mutating func closeExpired(actions: inout [HubAction]) {
        guard !expiries.isEmpty else { return }
        let now = wallClock
        for (connection, expiry) in expiries where now >= expiry {
            expiries[connection] = nil
            counters.authExpired += 1
            actions.append(.close(connection: connection, code: 4401, reason: "token expired"))
        }
    }
}

extension TokenRefusal {
    /// The close reason or refusal message: what was wrong, never the token.
    var reason: String { String(message.prefix(120)) }
}
