@testable import BoardCRDT

/// The reminders list in the convergence fuzz (inbox topology; see
/// `TodoConvergenceTests`): clients add (ids of their own, made-up ids, ids
/// another may pick too; after a live item, a deleted one, the top or an
/// unknown id), edit titles and memos (with the base they see, a stale base,
/// or none; emoji and combining marks), tick, move and delete what they show,
/// often from a used list; the hub takes thin intents too. Every local intent
/// does what `TodoModel` says (a made-up id is 8 fresh characters); on every
/// replica `TodoModel.problems` (every id once; the items shown are the
/// checkpoint's plus the applied adds less the applied deletes). On the hub
/// each integrated operation equals `TodoModel` replaying it (outcome by
/// outcome, entry by entry, byte for byte), its notices are the model's, and
/// the ids it shows are exactly the applied adds less the applied deletes (a
/// plain set, kept apart from both).
extension TodoList: FuzzedKind {
    struct Ledger {
        var model: TodoModel
        /// The ids on the hub's list: applied adds less applied deletes.
        var live: Set<String>
    }

    static let fuzzPlayers = ["ana", "bo", "cy", "dee"]

    static var fuzz: FuzzSetup {
        FuzzSetup(title: "Todo", knobs: FuzzKnobs(prefix: "BOARDCRDT_TODO", defaultSeed: 0x70D0_11, defaultSchedules: 60 * 2, shards: 2),
                  filter: "TodoConvergence", topology: .inbox(InboxMix(localIntent: 44, hubIntent: 4, send: 20, deliver: 27, catchUp: 5)),
                  steps: 40...140, players: fuzzPlayers, guest: "guest-1")
    }

    /// Often a used list: items, some done, and tombstones.
    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool) {
        var start = initialState
        guard rng.percent(60) else { return (start, false) }
        for index in 0..<rng.inRange(1...12) {
            let top = rng.percent(30)
            let after = start.entries.isEmpty || top ? nil : start.entries[rng.below(start.entries.count)].id
            _ = apply(.add(id: "s\(index)", after: after, title: text(&rng, title: true),
                           memo: rng.percent(30) ? text(&rng, title: false) : ""),
                      by: fuzzPlayers[rng.below(4)], to: &start)
            if rng.percent(25) { _ = apply(.done(id: "s\(index)", done: true), by: "ana", to: &start) }
        }
        for entry in start.entries where rng.percent(25) { _ = apply(.delete(id: entry.id), by: fuzzPlayers[rng.below(4)], to: &start) }
        return (start, true)
    }

    static func randomIntent(_ rng: inout SplitMix64, in state: State, by name: String) -> Intent { randomIntent(&rng, in: state) }

    /// Short texts from a small alphabet (so edits collide), with emoji,
    /// combining marks and, rarely, what T1 refuses.
    static func text(_ rng: inout SplitMix64, title: Bool) -> String {
        let pieces = ["Buy", " ", "milk", "oat", "!", "é", "e\u{301}", "🍵", "👍🏽", "🇫🇷", "x", "2"]
        let roll = rng.below(100)
        if roll < 2 { return String(repeating: "y", count: 1001) }
        if roll < 4 { return "two\nlines" }
        if roll < 8 { return "" }
        return (0..<rng.inRange(1...5)).map { _ in pieces[rng.below(pieces.count)] }.joined()
    }

    /// `text` changed in one place (insert, delete or replace a piece), or
    /// sometimes replaced outright.
    static func edited(_ text: String, _ rng: inout SplitMix64, title: Bool) -> String {
        var characters = Array(text)
        if characters.isEmpty || rng.percent(10) { return Self.text(&rng, title: title) }
        let at = rng.below(characters.count + 1)
        let insert = Array(Self.text(&rng, title: title).prefix(3))
        switch rng.below(3) {
        case 0: characters.insert(contentsOf: insert, at: at)
        case 1: characters.removeSubrange(at..<min(characters.count, at + rng.inRange(1...3)))
        default: characters.replaceSubrange(at..<min(characters.count, at + 1), with: insert)
        }
        return String(characters)
    }

    /// An id a person might name: a shown item, a tombstone, a stranger, or none.
    static func someID(_ rng: inout SplitMix64, in state: State, allowNil: Bool) -> String? {
        let roll = rng.below(100)
        if allowNil, roll < 12 { return nil }
        if roll < 18 { return ["zz", "q9", "s0", "n1", "bad id"][rng.below(5)] }
        let entries = state.entries
        guard !entries.isEmpty else { return allowNil ? nil : "zz" }
        let shown = entries.filter { !$0.isDeleted }
        if roll < 26 || shown.isEmpty { return entries[rng.below(entries.count)].id } // tombstones included
        return shown[rng.below(shown.count)].id
    }

    static func randomIntent(_ rng: inout SplitMix64, in state: State) -> Intent {
        let roll = rng.below(100)
        if roll < 28 || state.items.isEmpty {
            // Ids from a small shared pool collide (duplicate_id); nil is made up.
            let id: String? = rng.percent(30) ? nil : rng.percent(50) ? "n\(rng.below(12))" : "k\(rng.below(1_000_000))"
            return .add(id: id, after: someID(&rng, in: state, allowNil: true), title: text(&rng, title: true),
                        memo: rng.percent(25) ? text(&rng, title: false) : "")
        }
        let id = someID(&rng, in: state, allowNil: false) ?? "zz"
        let item = state.item(id)
        if roll < 55 {
            func edit(_ current: String?, title: Bool) -> TextEdit {
                let current = current ?? ""
                let base: String? = rng.percent(15) ? nil : rng.percent(90) ? current : edited(current, &rng, title: title)
                return TextEdit(edited(current, &rng, title: title), base: base)
            }
            switch rng.below(10) {
            case 0..<6: return .edit(id: id, title: edit(item?.title, title: true), memo: nil)
            case 6..<9: return .edit(id: id, title: nil, memo: edit(item?.memo, title: false))
            default: return .edit(id: id, title: edit(item?.title, title: true), memo: edit(item?.memo, title: false))
            }
        }
        if roll < 68 { return .done(id: id, done: rng.percent(80) ? !(item?.done ?? false) : item?.done ?? true) }
        if roll < 84 { return .move(id: id, after: rng.percent(5) ? id : someID(&rng, in: state, allowNil: true)) }
        return .delete(id: id)
    }

    /// A change as a peer could send it (made-up ids settled).
    static func randomChange(_ rng: inout SplitMix64, in state: State) -> Change {
        switch randomIntent(&rng, in: state) {
        case let .add(id, after, title, memo): .add(id: id ?? "m\(rng.below(50))", after: after, title: title, memo: memo)
        case let .edit(id, title, memo): .edit(id: id, title: title, memo: memo)
        case let .done(id, done): .done(id: id, done: done)
        case let .move(id, after): .move(id: id, after: after)
        case let .delete(id): .delete(id: id)
        }
    }

    /// Each local intent against `TodoModel` (a made-up id settled as the replica did).
    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String] {
        let change: Change
        switch (intent, result) {
        case let (.add(nil, after, title, memo), .success(op?)):
            guard case let .add(id, _, _, _) = op.change, TodoModel.validID(id), id.count == 8, before.state.index(of: id) == nil else {
                return ["a made-up id is not 8 fresh characters of A-Z a-z 0-9: \(op.change)"]
            }
            change = .add(id: id, after: after, title: title, memo: memo)
        case let (.add(id, after, title, memo), _): change = .add(id: id ?? "m", after: after, title: title, memo: memo)
        case let (.edit(id, title, memo), _): change = .edit(id: id, title: title, memo: memo)
        case let (.done(id, done), _): change = .done(id: id, done: done)
        case let (.move(id, after), _): change = .move(id: id, after: after)
        case let (.delete(id), _): change = .delete(id: id)
        }
        var expected = TodoModel(before.state)
        let outcome = expected.apply(change, by: name)
        switch result {
        case let .success(op?):
            let recorded = after.outcome(of: op.id)
            if outcome != .applied || (recorded != nil && recorded != .applied) || op.change != change {
                return ["\(intent) by \(name) on [\(idsText(before.state))] recorded \(op.change) \(recorded as Any), " +
                        "the model says \(outcome)"]
            }
            if !expected.matches(after.state) {
                return ["\(intent) on [\(idsText(before.state))] gave [\(idsText(after.state))], the model [\(expected.visibleIDs)]"]
            }
        case .success(nil):
            if outcome != .unchanged { return ["\(intent) by \(name) recorded nothing, the model says \(outcome)"] }
        case let .failure(refusal):
            if outcome != .refused(refusal) {
                return ["\(intent) on [\(idsText(before.state))] refused \(refusal), the model says \(outcome)"]
            }
        }
        return []
    }

    static func replicaProblems(_ replica: Replica<Self>) -> [String] { TodoModel.problems(of: replica) }

    static func ledger(from start: State) -> Ledger { Ledger(model: TodoModel(start), live: Set(start.items.map(\.id))) }

    /// Replays what the hub integrated on the model, compares outcomes,
    /// notices and the list, and books adds and deletes in the plain set of ids.
    static func book(_ op: Operation<Change>, outcome: Outcome<Refusal>, before: State, after: State,
                     in ledger: inout Ledger, counts: inout FuzzCounts) -> [String] {
        var problems: [String] = []
        let notices = TodoList.notices(of: op, in: before)
        let expectedNotices = ledger.model.notices(of: op.change, by: op.author)
        if notices.map({ "\($0.to) \($0.field ?? "-") \($0.text ?? "-") \($0.item ?? "-")" })
            != expectedNotices.map({ "\($0.to) \($0.field.rawValue) \($0.text) \(op.change.itemID)" }) {
            problems.append("\(op.id) \(op.change) by \(op.author): notices \(notices), the model says \(expectedNotices)")
        }
        if notices.contains(where: { $0.code != "overwritten" || $0.to == op.author }) { problems.append("odd notices \(notices)") }
        counts.bump("TC2 notices", by: notices.count)
        if case let .edit(id, title, memo) = op.change, let entry = before.item(id) {
            for (edit, current) in [(title, entry.title), (memo, entry.memo)] {
                if let edit, let base = edit.base, base != current, edit.text != base, edit.text != current,
                   case (_, false) = TodoModel.merge(edit, over: current) { counts.bump("TC2 merges") }
            }
        }
        switch op.change {
        case let .add(_, after?, _, _), let .move(_, after?):
            if before.deleter(of: after) != nil { counts.bump("adds/moves after a tombstone (TC5)") }
        default: break
        }
        let modelled = ledger.model.apply(op.change, by: op.author)
        if modelled != outcome { problems.append("\(op.id) \(op.change) by \(op.author) was \(outcome), the model says \(modelled)") }
        if !ledger.model.matches(after) {
            problems.append("after \(op.id) \(op.change): the list is [\(idsText(after))], the model's " +
                            "[\(ledger.model.visibleIDs.joined(separator: " "))]")
        }
        switch (op.change, outcome) {
        case let (.add(id, _, _, _), .applied):
            if !ledger.live.insert(id).inserted { problems.append("\(id) was added while on the list") }
        case let (.delete(id), .applied):
            if ledger.live.remove(id) == nil { problems.append("\(id) was deleted while not on the list") }
        default: break
        }
        if outcome == .applied {
            let name: String = switch op.change {
            case .add: "add"
            case .edit: "edit"
            case .done: "done"
            case .move: "move"
            case .delete: "delete"
            }
            counts.bump("applied by the hub: \(name)")
        }
        return problems
    }

    /// Nothing lost that was not deleted; nothing twice.
    static func hubProblems(_ hub: Replica<Self>, ledger: Ledger) -> [String] {
        let shown = hub.state.items.map(\.id)
        if Set(shown) != ledger.live || shown.count != ledger.live.count {
            return ["the hub shows \(shown.sorted()), the applied adds less the applied deletes are \(ledger.live.sorted())"]
        }
        return []
    }

    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts) {
        counts.atLeast("largest list", replicas[0].state.entries.count)
    }

    static func describe(_ state: State) -> String { "[\(idsText(state))]" }
}
