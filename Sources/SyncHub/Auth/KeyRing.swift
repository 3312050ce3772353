import Foundation
import JWTKit

/// The keys a hub verifies tokens with (A2), each named by its `kid`: the
/// base name of its file without the extension (`keys/2026-06.pem` is
/// `2026-06`). Several keys of any algorithm may be configured at once, so
/// a new key can be added before the old one is retired.
///
/// Each key holds jwt-kit's own algorithm object (`any JWTAlgorithm`), whose
/// `verify(_:signs:)` is synchronous; jwt-kit only hands those out through
/// its `JWTKeyCollection` actor, so building a ring is async, done once.
struct KeyRing: Sendable {
    /// One verification key.
    struct Key: Sendable {
        var kid: String
        /// jwt-kit's verifier for this key; its `name` is the one `alg` a
        /// token signed with this key may carry ("HS256", "EdDSA", "ES256").
        var algorithm: any JWTAlgorithm
        /// The file it came from, for messages.
        var file: String
        var algorithmName: String { algorithm.name }
    }

    let keys: [Key]
    private let byKid: [String: Key]

    var isEmpty: Bool { keys.isEmpty }

    /// The ring of `sources`, each turned into jwt-kit's algorithm for it.
    init(sources: [KeySource]) async throws(KeyLoadError) {
        var keys: [Key] = []
        var byKid: [String: Key] = [:]
        for source in sources {
            if let earlier = byKid[source.kid] {
                throw KeyLoadError(file: source.file, option: source.option,
                                   problem: "has the same name '\(source.kid)' as \(earlier.file) (a key's kid is its file name " +
                                            "without extension); rename one")
            }
            let algorithm: any JWTAlgorithm
            do {
                algorithm = try await source.material.algorithm()
            } catch {
                throw KeyLoadError(file: source.file, option: source.option, problem: "jwt-kit refused the key (\(error))")
            }
            let key = Key(kid: source.kid, algorithm: algorithm, file: source.file)
            keys.append(key)
            byKid[source.kid] = key
        }
        self.keys = keys
        self.byKid = byKid
    }

    /// Reads and checks every file, then builds the ring. Blocks the calling
    /// thread while jwt-kit's actor hands out the keys (microseconds): call
    /// it at start-up, from a thread outside Swift's concurrency pool.
    static func load(secretFiles: [String], publicKeyFiles: [String],
                     secretOption: String = "--auth-secret-file",
                     publicKeyOption: String = "--auth-public-key") throws(KeyLoadError) -> KeyRing {
        var sources: [KeySource] = []
        for file in secretFiles { sources.append(try KeySource.secret(file: file, option: secretOption)) }
        for file in publicKeyFiles { sources.append(try KeySource.publicKey(file: file, option: publicKeyOption)) }
        let checked = sources
        do {
            return try awaitAtStartup { try await KeyRing(sources: checked) }
        } catch let error as KeyLoadError {
            throw error
        } catch {
            throw KeyLoadError(file: "", option: secretOption, problem: "could not build the key ring (\(error))")
        }
    }

    /// The key a `kid` names.
    func key(kid: String) -> Key? { byKid[kid] }

    /// The keys whose algorithm is `alg`, in the order they were configured.
    func keys(forAlgorithm alg: String) -> [Key] { keys.filter { $0.algorithmName == alg } }

    /// The algorithms configured, for messages ("HS256, EdDSA").
    var algorithmNames: String {
        var seen: [String] = []
        for key in keys where !seen.contains(key.algorithmName) { seen.append(key.algorithmName) }
        return seen.joined(separator: ", ")
    }
}

/// A key read from a file and understood, not yet handed to jwt-kit's
/// collection.
struct KeySource: Sendable {
    /// What the file held.
    enum Material: Sendable {
        /// HS256: the file's raw bytes.
        case secret(HMACKey)
        /// EdDSA over Ed25519.
        case ed25519(EdDSA.PublicKey)
        /// ES256: ECDSA over P-256.
        case p256(ES256PublicKey)

        /// jwt-kit's verifier for this key, from a collection holding only it.
        func algorithm() async throws -> any JWTAlgorithm {
            let collection = JWTKeyCollection()
            switch self {
            case .secret(let key): await collection.add(hmac: key, digestAlgorithm: .sha256)
            case .ed25519(let key): await collection.add(eddsa: key)
            case .p256(let key): await collection.add(ecdsa: key)
            }
            return try await collection.getKey()
        }
    }

    /// Fewest bytes an HS256 secret may have (the size of its hash's output).
    static let minimumSecretBytes = 32

    var kid: String
    var file: String
    /// The command-line option that named the file, for messages.
    var option: String
    var material: Material

    /// The kid of the key in `file`: its base name without its extension.
    static func kid(ofFile file: String) -> String {
        URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
    }

    /// An HS256 secret: the file's bytes, all of them (a trailing newline counts).
    static func secret(file: String, option: String) throws(KeyLoadError) -> KeySource {
        let bytes = try read(file, option: option)
        guard bytes.count >= minimumSecretBytes else {
            throw KeyLoadError(file: file, option: option,
                               problem: "holds \(bytes.count) bytes; an HS256 secret needs at least \(minimumSecretBytes) " +
                                        "(make one with: head -c 32 /dev/urandom > FILE)")
        }
        return KeySource(kid: kid(ofFile: file), file: file, option: option, material: .secret(HMACKey(from: bytes)))
    }

    /// A PEM public key: Ed25519 (EdDSA) or P-256 (ES256); anything else is refused.
    static func publicKey(file: String, option: String) throws(KeyLoadError) -> KeySource {
        let pem = String(decoding: try read(file, option: option), as: UTF8.self)
        guard pem.contains("-----BEGIN") else {
            throw KeyLoadError(file: file, option: option, problem: "is not PEM (expected -----BEGIN PUBLIC KEY-----)")
        }
        if pem.contains("PRIVATE KEY-----") {
            throw KeyLoadError(file: file, option: option,
                               problem: "holds a private key; give the hub only the public key (openssl pkey -in FILE -pubout)")
        }
        let material: Material
        if let key = try? EdDSA.PublicKey(pem: pem) {
            material = .ed25519(key)
        } else if let key = try? ES256PublicKey(pem: pem) {
            material = .p256(key)
        } else {
            throw KeyLoadError(file: file, option: option,
                               problem: "is not an Ed25519 or P-256 public key in PEM (RSA, P-384 and other keys are not accepted)")
        }
        return KeySource(kid: kid(ofFile: file), file: file, option: option, material: material)
    }

    /// The bytes of a key file, or a message naming the file and the option.
    static func read(_ file: String, option: String) throws(KeyLoadError) -> Data {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: file, isDirectory: &isDirectory) else {
            throw KeyLoadError(file: file, option: option, problem: "does not exist")
        }
        if isDirectory.boolValue { throw KeyLoadError(file: file, option: option, problem: "is a directory, not a key file") }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: file))
        } catch {
            throw KeyLoadError(file: file, option: option, problem: "cannot be read (\(error.localizedDescription))")
        }
    }
}

/// A key file the hub or `synchub token` cannot use, and why.
struct KeyLoadError: Error, Equatable, Sendable, CustomStringConvertible {
    var file: String
    var option: String
    var problem: String

    var description: String { file.isEmpty ? "\(option): \(problem)" : "\(option) \(file): \(problem)" }
}
