import SyncWire

/// One board's publish: its new state, and how each connection gets it.
/// Computed once per board per publish, never per connection; the shell
/// picks, per connection, the patch or the whole state by what that
/// connection holds (`HubServer.deliver`).
/// A class so the whole frame is written only when some connection needs
/// it (every connection on patches, holding the base, needs none).
final class PublishedState {
    let board: String
    let shape: StateShape
    /// Connections that take whole `state` frames (the default).
    let stateTo: [UInt64]
    /// The memo of the audience `stateTo` is, nil when it is only some of it.
    let stateMemo: AudienceMemo?
    /// Connections subscribed to patches.
    let patchTo: [UInt64]
    /// Connections that must get the whole state whatever they hold (they
    /// just subscribed).
    let wholeTo: Set<UInt64>
    /// The publish generation a connection must hold for `patch` to apply,
    /// and the one this publish makes. Equal when nothing changed for
    /// patch connections.
    let base: UInt64
    let generation: UInt64
    /// The `patch` frame from `base` to `generation`, nil when there is none.
    let patch: String?
    /// The `presence` frame for replica clients that asked for it, when
    /// presence changed, and who gets it.
    let presence: String?
    let presenceTo: [UInt64]
    /// The board's previous shape, kept so that freeing it (a tree as large
    /// as the state) waits until this publish is delivered.
    private let replaced: StateShape?

    init(board: String, shape: StateShape, stateTo: [UInt64], stateMemo: AudienceMemo? = nil, patchTo: [UInt64], wholeTo: Set<UInt64>,
         base: UInt64, generation: UInt64, patch: String?, presence: String?, presenceTo: [UInt64], replaced: StateShape? = nil) {
        self.board = board
        self.shape = shape
        self.stateTo = stateTo
        self.stateMemo = stateMemo
        self.patchTo = patchTo
        self.wholeTo = wholeTo
        self.base = base
        self.generation = generation
        self.patch = patch
        self.presence = presence
        self.presenceTo = presenceTo
        self.replaced = replaced
    }

    /// The whole `state` frame, written once, on first use, as the bytes
    /// the outgoing frame carries.
    lazy var frameBytes: [UInt8] = shape.jsonBytes.bytes
    /// The same as text (tests, logs).
    var frame: String { String(decoding: frameBytes, as: UTF8.self) }

    /// What a connection on patches gets from this publish.
    enum Delivery: Equatable {
        /// Nothing: it holds (or has queued) this state already.
        case nothing
        case patch
        /// The whole state: it holds another state than the patch's base,
        /// or one waits unwritten (a slow client: latest wins, and a patch
        /// cannot follow a frame that may be replaced), or it just subscribed.
        case whole
    }

    /// The choice for connection `id` that holds publish `held` (0: none)
    /// and has a state unwritten or not; it then holds `generation`.
    func delivery(to id: UInt64, holding held: UInt64, stateWaiting: Bool) -> Delivery {
        if wholeTo.contains(id) { return .whole }
        if held == generation { return .nothing }
        if patch != nil, held == base, !stateWaiting { return .patch }
        return .whole
    }
}

extension PublishedState: Equatable {
    static func == (a: PublishedState, b: PublishedState) -> Bool { a === b }
}
