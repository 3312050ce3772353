import SyncWire

/// Publishing a board's state: whole states for most connections, patches
/// for those that subscribed to them, presence for replica clients that
/// asked for it (docs/PROTOCOL.md "Patches").
extension BoardRoom {
    /// The board's new state for every connection on it. `generations`
    /// numbers publishes hub-wide, so a connection never holds a number of
    /// another board's or an earlier room's.
    func publish(generations: inout UInt64) -> PublishedState {
        let shape = stateShape()
        let audience = currentAudience()
        var stateTo = audience.state
        let patchTo = audience.patch, presenceTo = audience.presence
        // Every new shape gets a new number; one equal to the last keeps it.
        let base = publishedGeneration
        var patch: String?
        var unchanged = false
        // The shape this publish replaces, freed with the publish, after
        // its fan-out, not before its first send.
        var replaced: StateShape?
        if let old = published {
            if patchTo.isEmpty {
                unchanged = old == shape
            } else {
                let ops = StatePatch.ops(from: old, to: shape)
                unchanged = StatePatch.isEmpty(ops)
                if !unchanged { patch = HubMessage.patch(board: address.name, version: durableVersion, ops: ops) }
            }
        }
        if !unchanged {
            generations += 1
            publishedGeneration = generations
            replaced = published
            published = shape
        }
        var presence: String?
        if !presenceTo.isEmpty {
            let now = presenceMembers()
            if now != lastPresence {
                lastPresence = now
                presence = HubMessage.presence(board: address.name, version: durableVersion, presence: now)
            }
        } else {
            lastPresence = nil
        }
        let whole = wholeStateDue
        wholeStateDue = []
        // Nothing changed (a `subscribe`, a presence-only change): whole-state
        // connections get nothing new, only those that asked for it.
        if unchanged { stateTo = stateTo.filter { whole.contains($0) } }
        return PublishedState(board: name, shape: shape, stateTo: stateTo, stateMemo: unchanged ? nil : audience.memo, patchTo: patchTo,
                              wholeTo: whole, base: base, generation: publishedGeneration, patch: patch, presence: presence,
                              presenceTo: presence == nil ? [] : presenceTo, replaced: replaced)
    }

    /// Who takes whole states, patches and presence: kept between
    /// publishes (a fan-out does not walk the members), made again after
    /// `audienceChanged()`. Debug builds check it against the members.
    private func currentAudience() -> Audience {
        if let audience {
            assert(audience.matches(Audience(members)), "a member came, left or changed format without audienceChanged()")
            return audience
        }
        let made = Audience(members)
        audience = made
        return made
    }

    /// `subscribe`: whole states or patches from now on; the connection
    /// gets the whole state with the next publish, made at once.
    func subscribe(_ connection: UInt64, to format: StateFormat, core: inout HubCore) {
        guard members[connection] != nil else { return }
        members[connection]?.format = format
        audienceChanged()
        wholeStateDue.insert(connection)
        core.markForPublish(self)
    }

    /// `"clients":N,"names":[...]` and, on kinds that track it, `"editing":{...}`.
    func presenceMembers() -> String {
        var out = ""
        ShapeMember.write(Array(stateHead().suffix(2)), to: &out)
        if let editing = editingShape() {
            out += ",\"editing\":"
            editing.write(to: &out)
        }
        return out
    }
}

/// The connections of a board by what a publish gives them.
struct Audience {
    var state: [UInt64] = [], patch: [UInt64] = [], presence: [UInt64] = []
    /// What the shell keeps about `state` while it stays as it is; made new
    /// with the audience.
    let memo = AudienceMemo()

    init(_ members: [UInt64: Member]) {
        for (id, member) in members {
            if member.presenceOnly {
                presence.append(id)
            } else if member.format == .patch {
                patch.append(id)
            } else {
                state.append(id)
            }
        }
    }

    /// The same connections in each list, in any order (the memo aside).
    func matches(_ other: Audience) -> Bool {
        Set(state) == Set(other.state) && Set(patch) == Set(other.patch) && Set(presence) == Set(other.presence)
    }
}

/// A slot the shell fills for an audience's `state` list (the connections
/// it reaches, found once instead of once per publish and client) and the
/// core never reads. It lives and dies with its `Audience`: whoever comes,
/// leaves or changes format makes a new audience, so it never outlives the
/// list it was filled for.
final class AudienceMemo {
    var shell: AnyObject?
}
