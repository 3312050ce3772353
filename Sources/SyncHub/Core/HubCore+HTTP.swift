import SyncWire

/// Changes the hub makes for a plain HTTP request (a shop image's name, P4):
/// taken by the board's room as an intent of no member, answered to the
/// request instead of a connection. The answer comes back as a `.send` to
/// `httpAnswerID(exchange)`, when the change is durable (or refused), as any
/// member's would; the shell turns it into the HTTP response.
extension HubCore {
    /// Connection ids at and above this stand for HTTP requests waiting for an answer.
    static let httpAnswerBase: UInt64 = 1 << 62

    static func httpAnswerID(_ exchange: UInt64) -> UInt64 { httpAnswerBase + exchange }

    static func exchange(ofAnswerID id: UInt64) -> UInt64? { id >= httpAnswerBase ? id - httpAnswerBase : nil }

    /// `frame`: the intent, parsed by the board's kind (`BoardRoom.parse` or
    /// built by the shell). The caller checked who may make it (A13).
    mutating func performForHTTP(_ frame: ParsedFrame, board address: BoardAddress, stored: StoredBoard?, exchange: UInt64) -> [HubAction] {
        var actions: [HubAction] = []
        let answerTo = Self.httpAnswerID(exchange)
        let held = boards[address.key] != nil
        if let failure = hold(address, stored: stored, actions: &actions) {
            actions.append(.send(connection: answerTo, frame: HubMessage.error(ProtocolError("unavailable", failure.reason), ref: nil)))
            return actions
        }
        guard let room = boards[address.key] else { return actions }
        // A board loaded only for this request is let go like one whose last member left.
        if !held, room.members.isEmpty { room.emptySince = now }
        room.receive(frame, from: answerTo, core: &self, actions: &actions)
        return actions
    }
}
