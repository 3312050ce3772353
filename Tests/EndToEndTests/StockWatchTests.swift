import Foundation
import Testing

/// `syncclient watch` on a juice bar (`/stock/NAME`, docs/rules/stock.md
/// JV1-JV5, JC1, JC2) run for real: two people, each in a tmux pane,
/// against the real hub. Everything is waited for, nothing is timed.
@Suite(.serialized) struct StockWatchTests {
    /// The stock as the hub has it (`syncclient state URL --json`).
    struct HubStock {
        var stock: [String: Int]
        var made: [String: Int]
        var canMake: [String: Int]

        init?(_ url: String) {
            guard let result = try? syncclient(["state", url, "--json"]), result.status == 0,
                  let object = jsonObject(result.output.trimmingCharacters(in: .whitespacesAndNewlines)),
                  let stock = object["stock"] as? [String: Int] else { return nil }
            self.stock = stock
            made = object["made"] as? [String: Int] ?? [:]
            canMake = object["can_make"] as? [String: Int] ?? [:]
        }
    }

    /// The count a screen shows for `fruit`: on the order screen
    /// `strawberry      16`, in the editor `> strawberry  [ - ]   16  [ + ]`.
    static func count(of fruit: String, in screen: TerminalScreen) -> Int? {
        for row in screen.rows.map({ String($0) }) {
            let text = row.drop { $0 == " " || $0 == ">" }
            guard text.hasPrefix(fruit + " ") else { continue }
            let rest = text.dropFirst(fruit.count)
            let digits = rest.drop { !$0.isNumber }.prefix { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    static let ready = "Strawberry juice is ready. Enjoy!"
    static let notEnough = "Not enough fruit. Edit the stock?"

    private func watch(_ url: String, name: String) throws -> TmuxSession {
        try TmuxSession([Build.syncclient.path, "watch", url, "--name", name], width: 80, height: 24)
    }

    @discardableResult
    private func waitForHub(_ url: String, sourceLocation: SourceLocation = #_sourceLocation,
                            _ condition: (HubStock) -> Bool) -> HubStock? {
        var last: HubStock?
        let ok = eventually(timeout: 20) {
            last = HubStock(url)
            return last.map(condition) ?? false
        }
        #expect(ok, "the hub's stock never got there: \(String(describing: last))", sourceLocation: sourceLocation)
        return ok ? last : nil
    }

    @Test func twoPeopleRaceForTheLastStrawberriesThenEditTheStock() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/stock/race"
        // Enough strawberries for exactly one strawberry juice (J2: 16).
        let set = try syncclient(["stock", "set", url, "strawberry", "16", "10"])
        #expect(set.status == 0, "stock set: \(set.errors)")
        let shown = try syncclient(["stock", "show", url])
        #expect(shown.status == 0 && shown.output.contains("strawberry      16"), "stock show:\n\(shown.output)\(shown.errors)")

        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        // JV1: both see the 16 strawberries and that one strawberry juice can be made.
        for screen in [ana, bo] {
            screen.waitFor("16 strawberries, live, both people") { s in
                s.text.contains("· live") && s.text.contains("ana") && s.text.contains("bo")
                    && Self.count(of: "strawberry", in: s) == 16
                    && s.rows.contains { String($0).contains("[ 1 Strawberry juice") && String($0).contains("can make 1 ]") }
            }
        }

        // JC1: both press the Strawberry juice key at nearly the same time.
        ana.type("1")
        bo.type("1")
        // Exactly one juice is made: one screen says it is ready, the other
        // asks to edit the stock (at once, or once the total order took the
        // make back, JC2).
        var winner: TmuxSession?, loser: TmuxSession?
        let settled = eventually(timeout: 20) {
            let a = ana.capture(), b = bo.capture()
            if a.contains(Self.ready) && b.contains(Self.notEnough) && !b.contains(Self.ready) {
                (winner, loser) = (ana, bo)
            } else if b.contains(Self.ready) && a.contains(Self.notEnough) && !a.contains(Self.ready) {
                (winner, loser) = (bo, ana)
            }
            return winner != nil
        }
        guard settled, let winner, let loser else {
            Issue.record("not exactly one juice shown as made; ana:\n\(ana.capture())\nbo:\n\(bo.capture())")
            return
        }
        waitForHub(url) { $0.stock["strawberry"] == 0 && $0.made["strawberry"] == 1 }
        for screen in [winner, loser] {
            screen.waitFor("no strawberry left") { Self.count(of: "strawberry", in: $0) == 0 }
        }
        // Still exactly one of each after the dust settled.
        #expect(winner.capture().contains(Self.ready) && !loser.capture().contains(Self.ready))
        #expect(loser.capture().contains("[ Yes ]") && loser.capture().contains("[ No ]"))

        // JV3 Yes: the editor, "Add stock" with Close.
        loser.type("y")
        loser.waitFor("the stock editor") { $0.text.contains("Add stock") && $0.text.contains("[ Close ]") && $0.text.contains("[ + ]") }
        // JV4: + on the short fruit (strawberry) restocks by 1, and everyone sees it.
        loser.type("+")
        waitForHub(url) { $0.stock["strawberry"] == 1 }
        loser.waitFor("strawberry 1 in the editor") { Self.count(of: "strawberry", in: $0) == 1 }
        winner.waitFor("strawberry 1 on the order screen") { Self.count(of: "strawberry", in: $0) == 1 }
        // - by mouse on banana: 10 -> 9 everywhere.
        guard let bananaRow = loser.screen.rows.firstIndex(where: { String($0).contains("banana") }),
              let minus = loser.screen.column(of: "[ - ]", inRow: bananaRow) else {
            Issue.record("no banana stepper:\n\(loser.capture())")
            return
        }
        loser.click(x: minus + 3, y: bananaRow + 1)
        waitForHub(url) { $0.stock["banana"] == 9 }
        winner.waitFor("banana 9 on the order screen") { Self.count(of: "banana", in: $0) == 9 }

        // JV2: OK closes the winner's message.
        winner.type("\r")
        winner.waitFor("the message closed") { !$0.text.contains(Self.ready) && $0.text.contains("Juices (press 1-7)") }

        // JV4: Close (a click) returns to the order screen.
        guard let titleRow = loser.screen.rows.firstIndex(where: { String($0).contains("[ Close ]") }),
              let close = loser.screen.column(of: "[ Close ]", inRow: titleRow) else {
            Issue.record("no Close button:\n\(loser.capture())")
            return
        }
        loser.click(x: close + 3, y: titleRow + 1)
        loser.waitFor("the order screen again") { s in
            !s.text.contains("[ Close ]") && s.text.contains("Juices (press 1-7)") && Self.count(of: "strawberry", in: s) == 1
                && Self.count(of: "banana", in: s) == 9
        }
        // J7: the make is listed for both, under the winner's name.
        let name = winner === ana ? "ana" : "bo"
        for screen in [winner, loser] {
            screen.waitFor("the recent make") { $0.text.contains("\(name): Strawberry juice") }
        }

        // q quits with status 0.
        for screen in [ana, bo] {
            screen.type("q")
            #expect(eventually(timeout: 20) { screen.exitStatus != nil }, "watch did not quit on q:\n\(screen.capture())")
            #expect(screen.exitStatus == 0)
        }
    }

    /// JC2 for certain: with the hub paused, both makes are applied where
    /// they were made (the counts drop) and both screens say "Making...",
    /// never "ready"; once the hub orders them, one is acknowledged and
    /// only then called ready, the other is taken back on its replica and
    /// its person is told.
    @Test func aMakeTheTotalOrderRefusesIsTakenBackAndTold() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/stock/jc2"
        #expect(try syncclient(["stock", "set", url, "strawberry", "16", "10"]).status == 0)
        let ana = try watch(url, name: "ana")
        let bo = try watch(url, name: "bo")
        for screen in [ana, bo] {
            screen.waitFor("16 strawberries, live") { $0.text.contains("· live · 2 here") && Self.count(of: "strawberry", in: $0) == 16 }
        }
        let pid = hub.process.processIdentifier
        kill(pid, SIGSTOP)
        var paused = true
        defer { if paused { kill(pid, SIGCONT) } }
        ana.type("1")
        bo.type("1")
        // Each replica applied its own make at once (the hub hears nothing
        // yet), and neither calls it ready before the hub's final answer.
        for screen in [ana, bo] {
            screen.waitFor("the make on its way") {
                $0.text.contains("Making strawberry juice...") && !$0.text.contains(Self.ready) && Self.count(of: "strawberry", in: $0) == 0
            }
        }
        kill(pid, SIGCONT)
        paused = false
        let takenBack = "your strawberry juice was refused: not enough fruit: strawberry 0 of 16"
        var told: TmuxSession?
        let settled = eventually(timeout: 20) {
            let a = ana.capture(), b = bo.capture()
            if a.contains(Self.notEnough) && a.contains(takenBack) && b.contains(Self.ready) { told = ana }
            if b.contains(Self.notEnough) && b.contains(takenBack) && a.contains(Self.ready) { told = bo }
            return told != nil
        }
        #expect(settled, "not exactly one make taken back; ana:\n\(ana.capture())\nbo:\n\(bo.capture())")
        waitForHub(url) { $0.stock["strawberry"] == 0 && $0.made["strawberry"] == 1 }
        // The one taken back is not listed as made; the other is.
        if let told {
            let winner = told === ana ? "bo" : "ana", loser = told === ana ? "ana" : "bo"
            told.type("n")
            (told === ana ? bo : ana).type("\r")
            for screen in [ana, bo] {
                screen.waitFor("only the winner's make listed") { s in
                    s.text.contains("Recent makes (1 made in all)") && s.text.contains("\(winner): Strawberry juice")
                        && !s.text.contains("\(loser): Strawberry juice") && Self.count(of: "strawberry", in: s) == 0
                }
            }
        }
    }

    @Test func oneShotsMakeRestockSetResetAndShow() throws {
        let hub = try HubProcess()
        let url = "\(hub.url)/stock/shots"
        let made = try syncclient(["stock", "make", url, "mango_kiwi"])
        #expect(made.status == 0)
        #expect(made.output == "Mango-kiwi juice is ready. Enjoy!\n")
        let short = try syncclient(["stock", "make", url, "strawberry"])
        #expect(short.status == 1)
        #expect(short.errors.contains("not enough fruit: strawberry 10 of 16"))
        #expect(try syncclient(["stock", "restock", url, "kiwi", "-1"]).status == 0)
        let high = try syncclient(["stock", "restock", url, "kiwi", "992"])
        #expect(high.status == 1 && high.errors.contains("outside 0 to 999"))
        let stale = try syncclient(["stock", "set", url, "kiwi", "12", "10"])
        #expect(stale.status == 1 && stale.errors.contains("kiwi is now 8"))
        #expect(try syncclient(["stock", "set", url, "kiwi", "12", "8"]).status == 0)
        let table = try syncclient(["stock", "show", url])
        #expect(table.status == 0)
        #expect(table.output.contains("kiwi            12"))
        #expect(table.output.contains("mango            8"))
        #expect(table.output.contains("Mango-kiwi juice                 4     1"))
        #expect(try syncclient(["stock", "reset", url]).status == 0)
        waitForHub(url) { Set($0.stock.values) == [10] && $0.made["mango_kiwi"] == 1 }
        #expect(try syncclient(["stock", "make", url, "apple"]).status == 2)
        #expect(try syncclient(["stock", "show", "\(hub.url)/set/t1"]).status == 2)
    }
}
