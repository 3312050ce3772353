import Foundation
import Synchronization
import Logging
import WebSocketLoop

/// The embedded store as a `BoardLog`: one SQLite file (`BoardStore`) and
/// three threads, each with its own connection: the group-commit writer
/// (records), the reader (loads, key lookups, images) and the WAL
/// checkpointer. Only this hub orders its boards' changes (`Sequencing.local`),
/// so proposals, folds and follows are never asked of it.
final class EmbeddedBoardLog: BoardLog, @unchecked Sendable {
    // Sendable: every stored property is a `let`; `delivery` is a Mutex;
    // the writer, reader and checkpointer confine their connections to
    // their own threads (each checks a ThreadOwner).
    private let writer: GroupCommitWriter
    private let reader: StoreWorker<BoardStore>
    private let checkpointer: WALCheckpointer
    private let logger: Logger
    let path: String
    let revocationsAtStart: [Revocations.Entry]
    let auditAtStart: [AuditEntry]

    /// Opens (creating if needed) `directory/boards.sqlite`; `fsyncEachCommit`
    /// as `BoardStore`'s.
    init(directory: String, fsyncEachCommit: Bool, logger: Logger) throws {
        let store = try BoardStore(directory: directory, fsyncEachCommit: fsyncEachCommit, checkpointsItself: false)
        // Image bytes are written on the reader before their name is
        // recorded (P4), with the hub's own fsync setting.
        let readerStore = try BoardStore(directory: directory, fsyncEachCommit: fsyncEachCommit, checkpointsItself: false)
        path = store.path
        revocationsAtStart = try readerStore.revocations()
        auditAtStart = try readerStore.audit()
        writer = GroupCommitWriter(store: store)
        reader = StoreWorker(name: "store-reader", resource: readerStore)
        checkpointer = try WALCheckpointer(path: store.path)
        self.logger = logger
    }

    func start(deliver: @escaping @Sendable ([StoreAnswer]) -> Void) {
        delivery.withLock { $0 = deliver }
        writer.onCommitted = { records in deliver([.committed(records)]) }
        writer.onFailure = { error in deliver([.storeFailed(error)]) }
        checkpointer.onFailure = { [logger] error in
            logger.error("cannot fold the write-ahead log into the store file; it grows until this is fixed",
                         metadata: ["error": "\(error)"])
        }
        writer.start()
        reader.start()
        checkpointer.start()
    }

    /// Set by `start()`; read under its lock by whoever answers.
    private let delivery = Mutex<@Sendable ([StoreAnswer]) -> Void>({ _ in })
    private var deliver: @Sendable ([StoreAnswer]) -> Void { delivery.withLock { $0 } }

    func carry(_ request: StoreRequest) {
        switch request {
        case let .commit(records):
            writer.submit(records)
        case let .load(ticket, board, _, deadline):
            read(skipAfter: deadline, or: { .loaded(ticket: ticket, board: board.key, .failure($0)) }) { store in
                .loaded(ticket: ticket, board: board.key, .success(try store.load(board: board.key)))
            }
        case let .lookUpKey(board, key):
            read(or: { .keyAnswer(board: board, key: key, .failure($0)) }) { store in
                .keyAnswer(board: board, key: key, .success(try store.answer(forKey: key, board: board)))
            }
        case let .putImage(_, digest, type, bytes, exchange):
            read(or: { .imageStored(exchange: exchange, $0) }) { store in
                try store.putImage(digest: digest, type: type, bytes: bytes)
                return .imageStored(exchange: exchange, nil)
            }
        case let .countBoards(exchange):
            read(or: { .boardsCounted(exchange: exchange, .failure($0)) }) { store in
                .boardsCounted(exchange: exchange, .success(try store.boardCount()))
            }
        case let .readImage(_, digest, exchange):
            read(or: { .imageRead(exchange: exchange, digest: digest, .failure($0)) }) { store in
                .imageRead(exchange: exchange, digest: digest,
                           .success(try store.image(digest: digest).map { StoredImage(type: $0.type, bytes: $0.bytes) }))
            }
        case let .revoke(entry):
            let logger = self.logger
            let queued = reader.submit { store in
                do {
                    try store.revoke(entry)
                } catch {
                    logger.critical("a revocation could not be stored: it holds until the hub stops, not after",
                                    metadata: ["revocation": "\(entry)", "error": "\(error)"])
                }
            }
            if !queued { logger.critical("a revocation could not be queued for the store", metadata: ["revocation": "\(entry)"]) }
        case let .audit(entry):
            let logger = self.logger
            let queued = reader.submit { store in
                do {
                    try store.keep(audit: entry)
                } catch {
                    logger.error("an action of the console could not be kept in the audit",
                                 metadata: ["action": "\(entry.json)", "error": "\(error)"])
                }
            }
            if !queued { logger.error("an action of the console could not be queued for the audit", metadata: ["action": "\(entry.json)"]) }
        case .propose, .fold, .restore, .keepKeys, .follow, .unfollow, .presence, .serverChecked:
            // A hub on its own store orders its boards itself: the core never asks these.
            logger.error("the embedded store was asked for cluster work", metadata: ["request": "\(request)"])
            assertionFailure("cluster work asked of the embedded store")
        }
    }

    /// Runs `work` on the reader; a failure (or a queue already full)
    /// answers `failed` instead.
    /// `skipAfter`: nobody waits for the answer after then (monotonic nanoseconds).
    private func read(skipAfter deadline: UInt64 = .max, or failed: @escaping @Sendable (StoreFailure) -> StoreAnswer,
                      _ work: @escaping @Sendable (BoardStore) throws -> StoreAnswer) {
        let deliver = self.deliver
        let logger = self.logger
        let queued = reader.submit { store in
            guard WebSocketServer.nowNanos() < deadline else { return }
            do {
                deliver([try work(store)])
            } catch {
                logger.error("the store could not be read", metadata: ["error": "\(error)"])
                deliver([failed(StoreFailure(message: "\(error)"))])
            }
        }
        if !queued { deliver([failed(StoreFailure(message: "too many reads wait for the store"))]) }
    }

    func isUp(_ board: BoardAddress) -> Bool { writer.failed == nil }

    var problem: String? { writer.failed.map { _ in "store failed" } }

    func metricsText(counters: HubCounters) -> String { "" }

    func stop() -> StoreError? {
        writer.stopAndFlush()
        reader.stop()
        checkpointer.stop()
        return writer.failed
    }
}
