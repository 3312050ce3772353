import ArgumentParser

struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench", abstract: "Load-test a hub (see BENCHMARKS.md).")
    func run() throws { throw ValidationError("bench is not built yet") }
}
