import Foundation
import Testing
@testable import BoardCRDT

/// Changes, states and refusals of the Set table as JSON (the store and the
/// replica protocol carry them): round trips, and decoded input checked.
@Suite struct SetCodableTests {
    func roundTrip<T: Codable & Equatable>(_ value: T) throws -> T {
        try JSONDecoder().decode(T.self, from: try JSONEncoder().encode(value))
    }

    func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func decodes<T: Decodable>(_ type: T.Type, _ text: String) -> Bool {
        (try? JSONDecoder().decode(T.self, from: Data(text.utf8))) != nil
    }

    static let changes: [SetTable.Change] = [
        .newGame(seed: 0), .newGame(seed: 123), .newGame(seed: .max),
        .deal(game: 3),
        .choose(card("2SFR"), game: 3, seen: []),
        .choose(card("2SFR"), game: 3, seen: [card("1DOP")]),
        .choose(card("3OOP"), game: 9, seen: cards("1DFR 2SFR 3OTG")),
    ]

    @Test(arguments: changes)
    func changeRoundTrips(_ change: SetTable.Change) throws {
        #expect(try roundTrip(change) == change)
        let operation = Operation(id: OperationID(replica: ReplicaID(7), seq: 2), lamport: 5, author: "ana", change: change)
        #expect(try roundTrip(operation) == operation)
    }

    @Test func changeJSONIsCompact() throws {
        #expect(try json(SetTable.Change.newGame(seed: 123)) == #"{"op":"new_game","seed":123}"#)
        #expect(try json(SetTable.Change.deal(game: 3)) == #"{"game":3,"op":"deal"}"#)
        #expect(try json(SetTable.Change.choose(card("2SFR"), game: 3,
                                                seen: [card("1DOP")])) == #"{"card":"2SFR","game":3,"op":"choose","seen":["1DOP"]}"#)
        // The largest seed survives a hand-written number (SyncWire's changeJSON).
        let text = #"{"op":"new_game","seed":18446744073709551615}"#
        #expect(try JSONDecoder().decode(SetTable.Change.self, from: Data(text.utf8)) == .newGame(seed: .max))
    }

    @Test(arguments: [
        #"{"op":"choose","card":"4DFR","game":1,"seen":[]}"#,
        #"{"op":"choose","card":"2SFR","game":1,"seen":["1DFR","2DFR","3DFR","1SFR"]}"#,
        #"{"op":"choose","card":"2SFR","game":1,"seen":["1DFR","1DFR"]}"#,
        #"{"op":"choose","card":"2SFR","game":0,"seen":[]}"#,
        #"{"op":"choose","card":"2SFR","seen":[]}"#,
        #"{"op":"choose","card":"2SFR","game":1}"#,
        #"{"op":"deal"}"#,
        #"{"op":"deal","game":-1}"#,
        #"{"op":"new_game"}"#,
        #"{"op":"new_game","seed":-1}"#,
        #"{"op":"shuffle","seed":1}"#,
    ])
    func changeDecoderRefusesWhatNoReplicaPrepares(_ text: String) {
        #expect(!decodes(SetTable.Change.self, text))
    }

    /// States met in play: none dealt, picks and a mismatch, holes, over.
    static func playedStates() throws -> [SetTable.State] {
        var states: [SetTable.State] = [SetTable.initialState]
        var replica = table(1, dealt(twelve))
        try choose(&replica, "1DFR 2DFR 3DFR", by: "ana")
        try choose(&replica, "1SFR 1DFG 2SFG", by: "bo \"the\" builder")
        try choose(&replica, "1OFR", by: "")
        states.append(replica.state)
        var long = table(2)
        try play(&long, .newGame(seed: 3), by: "")
        try playOut(&long, by: "ana", toTheEnd: true)
        states.append(long.state)
        return states
    }

    @Test func stateRoundTrips() throws {
        for state in try Self.playedStates() {
            #expect(try roundTrip(state) == state)
            let checkpoint = Checkpoint<SetTable>(state: state, frontier: Stamp(lamport: 4, replica: ReplicaID(2)),
                                                  versions: VersionVector())
            #expect(try roundTrip(checkpoint) == checkpoint)
        }
        #expect(try json(SetTable.initialState) == #"{"deck":[],"game":0,"last":null,"matches":[],"players":[],"table":[]}"#)
    }

    @Test func stateEncodesTheSameWhateverOrderPlayersJoined() throws {
        var a = dealt(twelve), b = dealt(twelve)
        for name in ["cy", "ana", "bo", "dee", "eve"] { a.players[name] = SetTable.Player() }
        for name in ["eve", "bo", "dee", "ana", "cy"] { b.players[name] = SetTable.Player() }
        // Players are a list sorted by name (keys within an object are only
        // ordered with .sortedKeys, as the store's encoder sets them).
        #expect(try json(a) == json(b))
        #expect(try json(a).contains(#"[{"mismatch":false,"misses":0,"name":"ana""#))
    }

    @Test func stateDecoderRefusesBrokenTables() throws {
        let valid = try Self.playedStates()[1]
        var broken: [SetTable.State] = []
        var twice = valid
        twice.deck.append(twice.deck[0])
        broken.append(twice)
        var missing = valid
        missing.deck.removeLast()
        broken.append(missing)
        var offTable = valid
        offTable.players["cy"] = SetTable.Player(picked: [valid.deck[0]])
        broken.append(offTable)
        var unscored = valid
        unscored.players["ana"]?.score = 5
        broken.append(unscored)
        var lastLies = valid
        lastLies.last?.result = .set
        broken.append(lastLies)
        var noGame = valid
        noGame.game = 0
        broken.append(noGame)
        for state in broken {
            #expect(!SetTable.violations(of: state).isEmpty)
            let data = try JSONEncoder().encode(state)
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(SetTable.State.self, from: data) }
        }
        let twoAnas = #"{"game":0,"table":[],"deck":[],"matches":[],"last":null,"players":[{"name":"ana","score":0,"misses":0,"# +
                      #""picked":[],"mismatch":false},{"name":"ana","score":0,"misses":0,"picked":[],"mismatch":false}]}"#
        #expect(!decodes(SetTable.State.self, twoAnas))
        #expect(!decodes(SetTable.State.self, #"{"game":1,"table":["2SFX"],"deck":[],"matches":[],"players":[],"last":null}"#))
    }

    @Test func refusalsRoundTrip() throws {
        let refusals: [SetRefusal] = [.noGame, .newGame, .gameOver, .taken(card("2SFR"), by: "ana"), .notOnTable(card("1DFR")), .deckEmpty,
                                      .tableFull]
        for refusal in refusals { #expect(try roundTrip(refusal) == refusal) }
        #expect(Set(refusals.map(\.code)).count == refusals.count)
    }
}
