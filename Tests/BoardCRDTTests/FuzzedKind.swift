@testable import BoardCRDT

/// How a kind's replicas meet in its schedules (see `ConvergenceFuzz`).
enum FuzzTopology {
    /// Peers that sync with each other in random partial deltas, go offline
    /// across compactions and rebase; sometimes replica 0 is an always-online
    /// compacting hub (without sealing). The letter board's.
    case peers
    /// Clients and a sealing, compacting hub; every message to a client waits
    /// in its inbox and is taken in random order, some twice. `mix` weighs
    /// the steps.
    case inbox(InboxMix)
    /// Clients and a sealing, compacting hub over one FIFO connection each,
    /// as `KindRoom` and `ReplicaSession` talk: acks with `have`, a rate
    /// limiter, disconnects losing what was in flight, `hello` and `sync`.
    case connections
}

/// Percent of inbox steps of each sort (they add up to 100).
struct InboxMix {
    var localIntent = 42, hubIntent = 4, send = 20, deliver = 28, catchUp = 6, compact = 0
}

/// Who a kind's schedules are and how many it runs by default.
struct FuzzSetup {
    /// "Stock": the failure reads "Stock convergence failure".
    var title: String
    var knobs: FuzzKnobs
    /// The `swift test --filter` that runs the suite.
    var filter: String
    var topology: FuzzTopology
    var steps: ClosedRange<Int>
    var players = ["ana", "bo", "cy", "dee"]
    /// Who a thin client's intent on the hub is made by, half of the time.
    var guest = "web"
}

/// A kind the convergence fuzz takes through its protocols: it supplies only
/// what is its own (start state, workload, model and ledger checks,
/// statistics); `ConvergenceFuzz` does the rest. To join, a kind conforms in
/// `Tests/BoardCRDTTests/<Kind>/<Kind>Fuzz.swift`, and its suite calls
/// `ConvergenceFuzz<Kind>.runShard` from its `<Kind>ConvergenceTests` suite.
protocol FuzzedKind: BoardKind {
    /// What the kind books from the hub's outcomes, apart from the engine
    /// (conservation, a reference model).
    associatedtype Ledger

    static var fuzz: FuzzSetup { get }

    /// The state every replica starts from (a checkpoint at the origin);
    /// `late` when it is one well under way (counted in the statistics).
    static func start(_ rng: inout SplitMix64) -> (state: State, late: Bool)

    /// The workload: an intent a person named `name` could make on `state`.
    static func randomIntent(_ rng: inout SplitMix64, in state: State, by name: String) -> Intent

    /// The step at which the hub makes an intent itself (the Set table's
    /// opening deal), nil for none; drawn before the steps are. The intent
    /// is drawn at that step.
    static func openingStep(_ rng: inout SplitMix64, late: Bool) -> Int?
    static func openingIntent(_ rng: inout SplitMix64) -> Intent?

    /// What is wrong with one local intent: `result` is what `perform` on
    /// `before` gave, `after` the replica then. The generic schedule already
    /// checks that a refused intent or a no-op changed nothing.
    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String]

    static func ledger(from start: State) -> Ledger
    /// The hub integrated `op` with `outcome`, turning `before` (its state
    /// replayed so far) into `after`: check it against the kind's model and
    /// book it.
    static func book(_ op: Operation<Change>, outcome: Outcome<Refusal>, before: State, after: State,
                     in ledger: inout Ledger, counts: inout FuzzCounts) -> [String]
    /// What the hub shows against the ledger, after every step.
    static func hubProblems(_ hub: Replica<Self>, ledger: Ledger) -> [String]
    /// Per-replica checks beyond `checkInvariants` (which holds `violations`).
    static func replicaProblems(_ replica: Replica<Self>) -> [String]
    /// An own operation's outcome changed on its author (the hub's order came back).
    static func tookBack(_ change: Change, now outcome: Outcome<Refusal>, counts: inout FuzzCounts)
    /// Statistics of one step (the hub is replica 0 in the hub topologies).
    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts)
    /// Peers only: every replica after the final sync, against a reference
    /// that sees every operation ever made and every checkpoint.
    static func finalProblems(_ replicas: [Replica<Self>], made: [Operation<Change>],
                              checkpoints: [(frontier: Stamp, versions: VersionVector)]) -> [String]
    /// A short picture of a state for traces and failures.
    static func describe(_ state: State) -> String
}

extension FuzzedKind {
    static func openingStep(_ rng: inout SplitMix64, late: Bool) -> Int? { nil }
    static func openingIntent(_ rng: inout SplitMix64) -> Intent? { nil }
    static func localProblems(_ intent: Intent, by name: String, before: Replica<Self>, after: Replica<Self>,
                              result: Result<Operation<Change>?, Refusal>, counts: inout FuzzCounts) -> [String] { [] }
    static func replicaProblems(_ replica: Replica<Self>) -> [String] { [] }
    static func tookBack(_ change: Change, now outcome: Outcome<Refusal>, counts: inout FuzzCounts) {
        counts.bump("own outcomes changed on their author")
    }
    static func countStep(_ replicas: [Replica<Self>], counts: inout FuzzCounts) {}
    static func finalProblems(_ replicas: [Replica<Self>], made: [Operation<Change>],
                              checkpoints: [(frontier: Stamp, versions: VersionVector)]) -> [String] { [] }
    static func describe(_ state: State) -> String { "\(state)" }
}

extension FuzzedKind where Ledger == Void {
    static func ledger(from start: State) {}
    static func book(_ op: Operation<Change>, outcome: Outcome<Refusal>, before: State, after: State,
                     in ledger: inout Void, counts: inout FuzzCounts) -> [String] { [] }
    static func hubProblems(_ hub: Replica<Self>, ledger: Void) -> [String] { [] }
}
