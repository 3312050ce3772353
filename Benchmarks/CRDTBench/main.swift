// crdt-bench: figures for BENCHMARKS.md ("BoardCRDT"). A benchmark, never a
// timed test: it reports, it does not assert.
//
//   swift build -c release --product crdt-bench && .build/release/crdt-bench
//
// 1. local apply: one replica (automatic compaction on, the hub's settings)
//    performs a mix of selects, deselects, moves and resets; ops/s, next to
//    the same intents applied to a plain array (no replication) as baseline.
// 2. merge: two replicas each record 10,000 operations concurrently (same
//    Lamport times, so the two histories interleave completely); time for
//    one to `receive` the other's 10,000.
// 3. memory: resident set size after 1,000 and after 1,000,000 operations on
//    one board.
// 4. board kinds (Kinds.swift): the Set table next to the letter board,
//    local apply and merges of 10,000 operations, client and hub settings.
//    `crdt-bench kinds` runs only this part.
// 5. shared reminders (Todo.swift): the todo list next to letters;
//    `crdt-bench todo` runs only that.
import BoardCRDT
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// SplitMix64, so every run performs the same intents.
struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// A realistic mix against what is shown: mostly selects while there is
/// room, deselects and moves of selected letters, a reset now and then.
func nextIntent(_ order: [Letter], _ generator: inout Generator) -> LetterBoard.Intent {
    let roll = generator.below(100)
    if roll < 2 || (order.count == 6 && roll < 10) { return .reset }
    if order.count < 6 && roll < 55 { return .select(Letter.all[generator.below(26)]) }
    guard !order.isEmpty else { return .select(Letter.all[generator.below(26)]) }
    let letter = order[generator.below(order.count)]
    if roll < 75 { return .deselect(letter) }
    return .move(letter, to: 1 + generator.below(order.count))
}

func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

/// VmRSS from /proc/self/status, in kB (0 where there is no /proc).
func residentKilobytes() -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix("VmRSS:") {
            return Int(text.dropFirst(6).filter(\.isNumber)) ?? 0
        }
    }
    return 0
}

/// Keeps results alive so the optimiser cannot drop the work; the benchmark
/// runs on one thread, so unsynchronised access is safe.
nonisolated(unsafe) var sink = 0

/// Performs `count` intents; returns the operations recorded.
@discardableResult
func drive(_ replica: inout Replica<LetterBoard>, intents count: Int, seed: UInt64) -> Int {
    var generator = Generator(state: seed)
    var recorded = 0
    for _ in 0..<count {
        let intent = nextIntent(replica.state.order, &generator)
        if (try? replica.perform(intent)) != nil { recorded += 1 }
    }
    return recorded
}

// MARK: 1. local apply

func localApply(intents: Int) -> (opsPerSecond: Double, recorded: Int) {
    var replica = Replica<LetterBoard>(id: ReplicaID(1))
    let start = now()
    let recorded = drive(&replica, intents: intents, seed: 42)
    let elapsed = now() - start
    sink &+= replica.state.order.count &+ replica.log.count
    return (Double(recorded) / elapsed, recorded)
}

/// The same intents on a bare array: what the rules cost without replication.
func arrayBaseline(intents: Int) -> Double {
    var order: [Letter] = []
    var generator = Generator(state: 42)
    var changed = 0
    let start = now()
    for _ in 0..<intents {
        switch nextIntent(order, &generator) {
        case let .select(letter):
            if !order.contains(letter) && order.count < 6 { order.append(letter); changed += 1 }
        case let .deselect(letter):
            if let index = order.firstIndex(of: letter) { order.remove(at: index); changed += 1 }
        case let .move(letter, place):
            if let index = order.firstIndex(of: letter), index != place - 1 {
                order.remove(at: index)
                order.insert(letter, at: place - 1)
                changed += 1
            }
        case .reset:
            if !order.isEmpty { order.removeAll(keepingCapacity: true); changed += 1 }
        }
    }
    let elapsed = now() - start
    sink &+= order.count
    return Double(changed) / elapsed
}

// MARK: 2. merge

func concurrentPair(operations: Int) -> (Replica<LetterBoard>, [Operation<LetterBoard.Change>]) {
    // Clients leave compaction to the hub; 10,000 each stay in the log.
    let limits = ReplicaLimits(compacts: false)
    var a = Replica<LetterBoard>(id: ReplicaID(1), limits: limits)
    var b = Replica<LetterBoard>(id: ReplicaID(2), limits: limits)
    var seed: UInt64 = 7
    while a.log.count < operations { drive(&a, intents: operations - a.log.count, seed: seed); seed += 1 }
    while b.log.count < operations { drive(&b, intents: operations - b.log.count, seed: seed); seed += 1 }
    return (b, Array(a.log.prefix(operations)))
}

func mergeMilliseconds(operations: Int) -> Double {
    var (replica, incoming) = concurrentPair(operations: operations)
    let start = now()
    let report = replica.receive(incoming)
    let elapsed = now() - start
    precondition(report.integrated.count == operations, "merge integrated \(report.integrated.count)")
    sink &+= replica.state.order.count
    incoming.removeAll()
    return elapsed * 1000
}

// MARK: 3. memory

/// Resident size after 1,000, 10,000 (the log has reached its bound of
/// 2 x 1,024) and 1,000,000 operations.
func memory() -> (after1k: Int, after10k: Int, after1M: Int) {
    var replica = Replica<LetterBoard>(id: ReplicaID(1))
    var recorded = 0
    var seed: UInt64 = 99
    while recorded < 1_000 { recorded += drive(&replica, intents: 1_000 - recorded, seed: seed); seed += 1 }
    let small = residentKilobytes()
    while recorded < 10_000 { recorded += drive(&replica, intents: 10_000 - recorded, seed: seed); seed += 1 }
    let medium = residentKilobytes()
    while recorded < 1_000_000 {
        recorded += drive(&replica, intents: min(100_000, 1_000_000 - recorded), seed: seed)
        seed += 1
    }
    let large = residentKilobytes()
    sink &+= replica.log.count
    return (small, medium, large)
}

// MARK: Report

func format(_ value: Double, _ decimals: Int = 2) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return "\(rounded)"
}
func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }

/// Sections 1-3, as BENCHMARKS.md ("BoardCRDT") shows them.
func runLetterBoard() {
    let repetitions = 5
    let intents = 2_000_000
    var rates: [Double] = []
    var baselines: [Double] = []
    var recordedOps = 0
    _ = localApply(intents: 100_000) // warm-up
    for _ in 0..<repetitions {
        let (rate, recorded) = localApply(intents: intents)
        rates.append(rate)
        recordedOps = recorded
        baselines.append(arrayBaseline(intents: intents))
    }
    var merges: [Double] = []
    _ = mergeMilliseconds(operations: 10_000) // warm-up
    for _ in 0..<(repetitions + 2) { merges.append(mergeMilliseconds(operations: 10_000)) }
    let (after1k, after10k, after1M) = memory()

    let localRate = median(rates)
    let mergeTime = median(merges)
    print("BoardCRDT benchmark (median of \(repetitions) runs; merge median of \(repetitions + 2))")
    print(pad("measure", 44) + pad("result", 22) + pad("target", 16) + "ratio")
    print(pad("local apply (\(recordedOps) ops, compaction on)", 44)
        + pad("\(format(localRate / 1e6)) M ops/s", 22) + pad(">= 1 M ops/s", 16) + "\(format(localRate / 1e6))x")
    print(pad("  baseline: same intents on a plain array", 44)
        + pad("\(format(median(baselines) / 1e6)) M ops/s", 22) + pad("", 16)
        + "engine at \(format(localRate / median(baselines) * 100, 1)) %")
    print(pad("merge 10,000 + 10,000 concurrent ops", 44)
        + pad("\(format(mergeTime)) ms", 22) + pad("<= 10 ms", 16) + "\(format(10 / mergeTime))x under")
    print(pad("resident memory after 1,000 ops", 44) + pad("\(after1k) kB", 22))
    print(pad("resident memory after 10,000 ops", 44) + pad("\(after10k) kB", 22))
    print(pad("resident memory after 1,000,000 ops", 44) + pad("\(after1M) kB", 22) + pad("flat", 16)
        + "\(format(Double(after1M) / Double(max(after1k, 1)), 3))x of 1,000, "
        + "\(format(Double(after1M) / Double(max(after10k, 1)), 3))x of 10,000")
    print("runs: local \(rates.map { format($0 / 1e6) }) M ops/s; merge \(merges.map { format($0) }) ms")
}

let command = CommandLine.arguments.dropFirst().first
if command == "todo" {
    runTodo(repetitions: 7, operations: 10_000, items: 1_000) // Todo.swift
} else {
    if command != "kinds" { runLetterBoard() }
    runKinds(repetitions: 7, operations: 10_000)
}
if sink == 42 { print("") }
