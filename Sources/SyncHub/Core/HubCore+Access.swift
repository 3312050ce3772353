import Foundation
import SyncWire

/// Who may do what (docs/SECURITY.md, A1-A11), in the core: a connection
/// with no token yet waits outside its board, hearing nothing, until an
/// `auth` frame brings one; a token's role decides whether its changes are
/// taken; its name is the one others see; at `exp` it is closed unless a
/// newer token came first. The shell verifies header tokens before the
/// upgrade and hands the grant in with `.joined`.
extension HubCore {
    /// A connection that has not presented a valid token yet, and the
    /// board it asked for: nothing of the board is read before its token
    /// is (A6).
    struct Awaiting {
        var board: BoardAddress
    }

    /// Refused changes a minute after which a `read` connection is closed (A9).
    static let forbiddenPerMinute = 10

    var authRequired: Bool {
        @inline(__always) get { verifier != nil }  // see HubCore.parse
    }

    /// A completed upgrade: open hub, a header token's grant, or wait for `auth`.
    mutating func arrive(_ connection: UInt64, board: BoardAddress, grant: Grant?, actions: inout [HubAction]) {
        guard authRequired else {
            enter(connection, board: board, grant: nil, actions: &actions)
            return
        }
        guard let grant else {
            // A6: nothing is sent before a valid token; the board is read
            // when the token arrives.
            awaiting[connection] = Awaiting(board: board)
            return
        }
        guard grant.role(for: board) != nil else {
            counters.authForbidden += 1
            actions.append(.close(connection: connection, code: 4403, reason: "your token gives no role on this board"))
            return
        }
        enter(connection, board: board, grant: grant, actions: &actions)
    }

    /// The first frame of a connection still waiting for its token: an
    /// `auth` frame whose token is valid and gives a role on the board
    /// brings it in (its board read first when it must be), anything else
    /// closes it.
    mutating func authenticate(_ connection: UInt64, bytes: UnsafeRawBufferPointer, actions: inout [HubAction]) {
        guard let waiting = awaiting.removeValue(forKey: connection), let verifier else { return }
        let token: String
        switch AuthFields.token(in: bytes) {
        case let .success((found, _)):
            token = found
        case let .failure(error):
            counters.authRefused += 1
            actions.append(.close(connection: connection, code: 4401, reason: String(error.message.prefix(120))))
            return
        }
        let grant: Grant
        do {
            grant = try verify(token, with: verifier)
        } catch {
            counters.authRefused += 1
            actions.append(.close(connection: connection, code: 4401, reason: error.reason))
            return
        }
        guard grant.role(for: waiting.board) != nil else {
            counters.authForbidden += 1
            actions.append(.close(connection: connection, code: 4403, reason: "your token gives no role on this board"))
            return
        }
        if needsLoad(waiting.board, joining: true) { counters.boardReads += 1 }
        enter(connection, board: waiting.board, grant: grant, actions: &actions)
    }

    /// Puts a connection on its board, once the board is held: joined on an
    /// open hub, admitted with its token's role otherwise.
    mutating func seat(_ connection: UInt64, on board: BoardAddress, grant: Grant?, actions: inout [HubAction]) {
        if let refusal = admits(board: board) {
            // Limits checked again: it waited while others came (1013: try again later).
            actions.append(.close(connection: connection, code: 1013, reason: String(refusal.message.prefix(120))))
            return
        }
        if let grant, revocations.revokes(grant) {
            // O6: revoked while the board was read.
            counters.authRefused += 1
            actions.append(.close(connection: connection, code: 4401, reason: "token revoked"))
            return
        }
        if let grant, wallClock >= grant.expiry {
            // A10: it ran out while the board was read.
            counters.authExpired += 1
            actions.append(.close(connection: connection, code: 4401, reason: "token expired"))
            return
        }
        if let grant {
            admit(connection, to: board, grant: grant, actions: &actions)
        } else {
            join(connection, board: board, actions: &actions)
        }
    }

    /// Puts a connection with a valid token on its board, or closes it when
    /// the token gives no role there (A8).
    private mutating func admit(_ connection: UInt64, to board: BoardAddress, grant: Grant, actions: inout [HubAction]) {
        guard let role = grant.role(for: board) else {
            counters.authForbidden += 1
            actions.append(.close(connection: connection, code: 4403, reason: "your token gives no role on this board"))
            return
        }
        actions.append(.authenticated(connection: connection))
        join(connection, board: board, opens: role >= .write, actions: &actions)
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
            grant = try verify(token, with: verifier)
        } catch {
            counters.authRefused += 1
            actions.append(.send(connection: connection, frame: HubMessage.rejected(ref: ref, code: "bad_token", message: error.reason)))
            return
        }
        guard grant.sub == current.sub else {
            actions.append(.send(connection: connection, frame: HubMessage.rejected(
                ref: ref, code: "other_subject",
                message: "a refresh must be for the same sub (\(current.sub)); reconnect to change who you are")))
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
            actions.append(.close(connection: connection, code: 4403,
                                  reason: "\(Self.forbiddenPerMinute) refused changes a minute with \(token)"))
            return
        }
        let message = adminOnly ? room.adminOnlyMessage : "your token lets you read this board, not change it"
        if frame.isOperations {
            let have = room.members[connection]?.replica.map { room.durableSeq(of: $0) }
            actions.append(.send(connection: connection,
                                 frame: HubMessage.error(ProtocolError("forbidden", message), ref: frame.ref, have: have)))
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

extension HubCore {
    /// A token checked by `verifier` at the core's wall clock, and against
    /// the operators' revocations (O6).
    func verify(_ token: String, with verifier: TokenVerifier) throws(TokenRefusal) -> Grant {
        let grant = try verifier.verify(token, now: wallClock)
        if revocations.revokes(grant) { throw .revoked }
        return grant
    }

    /// O6: tokens revoked (by the console here, or learnt from the store):
    /// every connection holding one is closed 4401, from now on refused.
    mutating func revoke(_ entries: [Revocations.Entry], actions: inout [HubAction]) {
        var fresh = false
        for entry in entries where revocations.add(entry) { fresh = true }
        guard fresh else { return }
        for room in boards.values {
            for (connection, member) in room.members where member.grant.map(revocations.revokes) == true {
                counters.authRefused += 1
                room.members[connection]?.role = nil
                expiries[connection] = nil
                actions.append(.close(connection: connection, code: 4401, reason: "token revoked"))
            }
        }
    }
}
