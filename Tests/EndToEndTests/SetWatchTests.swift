import Foundation
import Testing

/// `syncclient watch` on a Set table (`/set/NAME`, docs/rules/set.md SV1-SV6)
/// run for real: two players, each in a tmux pane, against the real hub.
/// Cards are found on screen by the code each card carries on its bottom
/// edge (`└──2SFR──┘`); everything is waited for, nothing is timed.
@Suite(.serialized) struct SetWatchTests {
    /// The table as the hub has it (`syncclient state URL --json`).
    struct HubTable {
        var game: Int
        var table: [String?]
        var deck: Int
        var scores: [String: Int]

        init?(_ url: String) {
            guard let result = try? syncclient(["state", url, "--json"]), result.status == 0,
                  let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
                  let game = object["game"] as? Int, let table = object["table"] as? [Any],
                  let deck = object["deck"] as? Int else { return nil }
            self.game = game
            self.table = table.map { $0 as? String }
            self.deck = deck
            let players = object["players"] as? [String: [String: Any]] ?? [:]
            scores = players.mapValues { $0["score"] as? Int ?? -1 }
        }

        /// The places of the first set on the table (S2).
        var firstSet: [Int]? {
            let cards = table.map { $0.map(Self.features) }
            for a in cards.indices { for b in cards.indices where b > a { for c in cards.indices where c > b {
                guard let x = cards[a], let y = cards[b], let z = cards[c] else { continue }
                if (0..<4).allSatisfy({ (x[$0] + y[$0] + z[$0]) % 3 == 0 }) { return [a, b, c] }
            } } }
            return nil
        }

        static func features(_ code: String) -> [Int] {
            let letters = ["123", "DSO", "FTO", "RGP"]
            return zip(code, letters).map { character, values in
                values.firstIndex(of: character).map { values.distance(from: values.startIndex, to: $0) } ?? 9
            }
        }
    }

    /// Every card on a Set screen: its code and where the code is drawn.
    private func cards(_ screen: TerminalScreen) -> [(code: String, x: Int, y: Int)] {
        var found: [(String, Int, Int)] = []
        let edges: Set<Character> = ["─", "═", "━", "╌"]
        for (y, row) in screen.rows.enumerated() {
            var x = 1
            while x + 4 <= row.count {
                let code = String(row[x..<x + 4])
                if edges.contains(row[x - 1]), code.wholeMatch(of: /[123][DSO][FTO][RGP]/) != nil {
                    found.append((code, x, y))
                    x += 4
                } else {
                    x += 1
                }
            }
        }
        return found.sorted { ($0.2, $0.1) < ($1.2, $1.1) }
    }

    private func codes(_ screen: TerminalScreen) -> [String] { cards(screen).map(\.code) }

    /// The screen shows exactly the hub's cards, in place order, and `extra`.
    private func showsHub(_ screen: TerminalScreen, _ hub: HubTable?, _ extra: (String) -> Bool = { _ in true }) -> Bool {
        guard let hub else { return false }
        return codes(screen) == hub.table.compactMap { $0 } && !hub.table.contains(nil) && extra(screen.text)
    }

    private func watch(_ url: String, name: String) throws -> TmuxSession {
        try TmuxSession([Build.syncclient.path, "watch", url, "--name", name], width: 100, height: 40)
    }

    private func waitForHub(_ url: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ condition: (HubTable) -> Bool) -> HubTable? {
        var last: HubTable?
        let ok = eventually(timeout: 20) {
            last = HubTable(url)
            return last.map(condition) ?? false
        }
        #expect(ok, "the hub's table never got there: \(String(describing: last))", sourceLocation: sourceLocation)
        return ok ? last : nil
    }

    /// The hub's table once it holds a set: while it holds none, three more
    /// cards are dealt (S6), as a player does on seeing `0 sets on table`
    /// (S9). About one deal of twelve cards in thirty holds no set, so a test
    /// that plays a set must find its way rather than count on one. Nil
    /// (recorded) if the deck runs out first, which a table of 21 cards or
    /// more cannot cause: every 21 cards hold a set.
    private func dealtUntilASet(_ url: String, from start: HubTable,
                                sourceLocation: SourceLocation = #_sourceLocation) throws -> HubTable? {
        var table = start
        while table.firstSet == nil {
            guard table.deck > 0 else {
                Issue.record("no set on the table and no card left to deal: \(table)", sourceLocation: sourceLocation)
                return nil
            }
            let result = try syncclient(["send", url, "{\"type\":\"deal\"}"])
            #expect(result.status == 0, "deal: \(result.errors)", sourceLocation: sourceLocation)
            let deck = table.deck
            guard let dealt = waitForHub(url, sourceLocation: sourceLocation, { $0.deck == deck - 3 }) else { return nil }
            table = dealt
        }
        return table
    }

    @Test func twoPlayersPlayBothScreensFollowSV1toSV6() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/set/duo"
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        guard var table = waitForHub(url, { $0.game >= 1 && $0.table.count == 12 }) else { return }

        // SV1: both screens show the hub's 12 cards, status and scores.
        for screen in [ana, bo] {
            screen.waitFor("the hub's 12 cards") { s in
                showsHub(s, HubTable(url)) { $0.contains("· live") && $0.contains("deck 69") }
            }
        }
        #expect(codes(ana.screen) == codes(bo.screen))

        // Ana finds a set by keyboard: arrows to each card, Space to choose.
        // With no set among the first 12, three more are dealt until one
        // shows, and ana's screen is waited for to show them.
        guard let withASet = try dealtUntilASet(url, from: table) else { return }
        table = withASet
        ana.waitFor("the hub's cards on ana's screen") { s in showsHub(s, HubTable(url)) }
        let set = try #require(table.firstSet)
        var cursor = 0
        for place in set {
            let step = place > cursor ? "\u{1B}[C" : "\u{1B}[D"
            ana.type(String(repeating: step, count: abs(place - cursor)) + " ")
            cursor = place
        }
        guard let afterAna = waitForHub(url, { $0.scores["ana"] == 1 }) else {
            Issue.record("ana's set did not score; screen:\n\(ana.capture())")
            return
        }
        #expect(afterAna.deck == table.deck - 3)
        #expect(afterAna.table.count == table.table.count, "S5: a match refills its places")
        table = afterAna
        ana.waitFor("ana's score and the new cards on ana's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("ana (you) 1 set") && !$0.contains("found a set") }
        }
        bo.waitFor("ana's score and the new cards on bo's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("ana [A] 1 set") && !$0.contains("found a set") }
        }

        // Bo finds a set by mouse: a click on each card. Again three more
        // are dealt while the table holds no set.
        guard let boTable = try dealtUntilASet(url, from: table) else { return }
        table = boTable
        bo.waitFor("the hub's cards on bo's screen") { s in
            showsHub(s, HubTable(url)) { !$0.contains("found a set") }
        }
        let boSet = try #require(table.firstSet)
        let onScreen = cards(bo.screen)
        for place in boSet {
            guard let card = onScreen.first(where: { $0.code == table.table[place] }) else {
                Issue.record("card \(table.table[place] ?? "-") not on bo's screen:\n\(bo.capture())")
                return
            }
            // SGR is 1-based; one row above the code is inside the card.
            bo.click(x: card.x + 2, y: card.y)
        }
        guard let afterBo = waitForHub(url, { $0.scores["bo"] == 1 }) else {
            Issue.record("bo's set did not score; screen:\n\(bo.capture())")
            return
        }
        bo.waitFor("bo's score on bo's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("bo (you) 1 set") && $0.contains("ana [A] 1 set") && !$0.contains("found a set") }
        }
        ana.waitFor("bo's score on ana's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("bo [B] 1 set") && !$0.contains("found a set") }
        }

        // S6: d deals three more: three more places on both screens (15
        // when no extra deal was needed above).
        ana.type("d")
        let places = afterBo.table.count + 3
        guard let dealt = waitForHub(url, { $0.table.count == places }) else { return }
        #expect(dealt.deck == afterBo.deck - 3)
        for screen in [ana, bo] {
            screen.waitFor("\(places) cards") { s in
                showsHub(s, HubTable(url)) { $0.contains("deck \(dealt.deck) ·") } && codes(s).count == places
            }
        }

        // SV5: a refusal shows to whoever caused it. Empty the deck, then d.
        for _ in 0..<(dealt.deck / 3) {
            let result = try syncclient(["send", url, "{\"type\":\"deal\"}"])
            #expect(result.status == 0, "deal: \(result.errors)")
        }
        guard waitForHub(url, { $0.deck == 0 }) != nil else { return }
        ana.waitFor("the deck empty on ana's screen") { $0.text.contains("deck 0") && $0.text.contains("[ Deck empty ]") }
        bo.waitFor("the deck empty on bo's screen") { $0.text.contains("deck 0") }
        ana.type("d")
        ana.waitFor("deck_empty on ana's screen") { $0.text.contains("deck empty: the deck is empty") }
        #expect(!bo.screen.text.contains("deck empty: the deck is empty"), "only the person refused sees it:\n\(bo.capture())")

        // SV6: n asks first; n at the question keeps the game, y starts a new one.
        ana.type("n")
        ana.waitFor("the new game question") { $0.text.contains("Start a new game?") }
        ana.type("n")
        ana.waitFor("the question gone") { !$0.text.contains("Start a new game?") }
        #expect(HubTable(url)?.game == 1)
        ana.type("n")
        ana.waitFor("the new game question again") { $0.text.contains("Start a new game?") }
        ana.type("y")
        guard waitForHub(url, { $0.game == 2 && $0.table.count == 12 }) != nil else { return }
        ana.waitFor("game 2 on ana's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("game 2") && $0.contains("deck 69") && !$0.contains("ana (you) 1 set") }
        }
        bo.waitFor("game 2 on bo's screen") { s in
            showsHub(s, HubTable(url)) { $0.contains("game 2") && $0.contains("deck 69") }
        }

        // q quits with status 0.
        ana.type("q")
        #expect(eventually(timeout: 20) { ana.exitStatus != nil }, "watch did not quit on q:\n\(ana.capture())")
        #expect(ana.exitStatus == 0)
    }

    @Test func resizeRedrawsTheCardsBigger() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/set/resize"
        let viewer = try TmuxSession([Build.syncclient.path, "watch", url, "--name", "cy"], width: 80, height: 24)
        viewer.waitFor("12 cards at 80x24") { s in showsHub(s, HubTable(url)) }
        let small = cards(viewer.screen)
        _ = try viewer.tmux(["resize-window", "-t", "main", "-x", "160", "-y", "60"])
        viewer.waitFor("12 bigger cards at 160x60") { s in
            let big = cards(s)
            // Codes sit on the cards' bottom edges: further apart on bigger cards.
            return showsHub(s, HubTable(url)) && big.count == 12 && small.count == 12
                && big[1].x - big[0].x > small[1].x - small[0].x
        }
    }
}
