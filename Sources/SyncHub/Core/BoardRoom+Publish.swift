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
        var stateTo: [UInt64] = [], patchTo: [UInt64] = [], presenceTo: [UInt64] = []
        for (id, member) in members {
            if member.presenceOnly {
                presenceTo.append(id)
            } else if member.format == .patch {
                patchTo.append(id)
            } else {
                stateTo.append(id)
            }
        }
        let base = publishedGeneration
        var patch: String?
        if patchTo.isEmpty {
            published = nil
        } else if let old = published {
            let ops = StatePatch.ops(from: old, to: shape)
            if !StatePatch.isEmpty(ops) {
                generations += 1
                publishedGeneration = generations
                patch = HubMessage.patch(board: address.name, version: durableVersion, ops: ops)
            }
            published = shape
        } else {
            generations += 1
            publishedGeneration = generations
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
        return PublishedState(board: name, shape: shape, stateTo: stateTo, patchTo: patchTo, wholeTo: whole, base: base,
                              generation: publishedGeneration, patch: patch, presence: presence, presenceTo: presence == nil ? [] : presenceTo)
    }

    /// `subscribe`: whole states or patches from now on; the connection
    /// gets the whole state with the next publish, made at once.
    func subscribe(_ connection: UInt64, to format: StateFormat, core: inout HubCore) {
        guard members[connection] != nil else { return }
        members[connection]?.format = format
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
