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
    /// The board must be held (`.httpNeedsBoard` answered `ready`); one let
    /// go since is answered `unavailable` (the same request again tells).
    mutating func performForHTTP(_ frame: ParsedFrame, board address: BoardAddress, exchange: UInt64, actions: inout [HubAction]) {
        let answerTo = Self.httpAnswerID(exchange)
        guard let room = boards[address.key] else {
            actions.append(.send(connection: answerTo, frame: HubMessage.error(
                ProtocolError("unavailable", "the board was let go meanwhile; try again"), ref: nil)))
            return
        }
        room.receive(frame, from: answerTo, core: &self, actions: &actions)
    }
}

/// What plain HTTP reads of a held board (`.httpBoard` said `ready`): asked
/// of the core, which asks the room.
extension HubCore {
    /// An image the board's durable state names (`WireKind.image(named:in:)`).
    func image(named name: String, on board: BoardAddress) -> (type: String, digest: String)? {
        boards[board.key]?.image(named: name)
    }

    /// A plain HTTP read below the board's path, from what is durable (`WireKind.read`).
    func read(_ path: [Substring], on board: BoardAddress) -> (status: UInt32, json: String)? {
        boards[board.key]?.read(path)
    }
}
