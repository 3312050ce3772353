import ArgumentParser

struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "watch", abstract: "Mirror a board live, full screen, and play it; q quits.")
    @OptionGroup var board: BoardOptions
    func run() throws { throw ValidationError("watch is not built yet") }
}
