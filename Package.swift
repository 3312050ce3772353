// swift-tools-version:6.0
import PackageDescription

/// SyncHub: a real-time shared-board hub on libwebsockets, its replicated board
/// engine, and a terminal client. See README.md for the map of the folders.
let package = Package(
    name: "SyncHub",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "synchub", targets: ["SyncHub"]),
        .executable(name: "syncclient", targets: ["syncclient"]),
        .library(name: "BoardCRDT", targets: ["BoardCRDT"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // Already under jwt-kit; the hub hashes the shop's images with it (ETags).
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // C stays in these rooms: one per C library.
        .systemLibrary(
            name: "CLibWebsockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // Cluster mode's Redis client (hiredis, synchronous API).
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),

        // Cluster mode's snapshots are stored deflated (zlib, which
        // libwebsockets already brings for permessage-deflate).
        .systemLibrary(
            name: "CZlib",
            providers: [.apt(["zlib1g-dev"])]
        ),

        // The terminal client's HTTPS requests (`syncclient admin`): OpenSSL,
        // which libwebsockets already brings for wss://.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),

        // The terminal client's pictures (the shop's thumbnails): gdk-pixbuf,
        // with librsvg's and webp-pixbuf-loader's loaders.
        .systemLibrary(
            name: "CPixbuf",
            pkgConfig: "gdk-pixbuf-2.0",
            providers: [.apt(["libgdk-pixbuf-2.0-dev", "librsvg2-common", "webp-pixbuf-loader"])]
        ),

        // The pure core: the replicated board engine and its first kind.
        // Cross-module optimisation (release): the hub and the clients
        // specialise the generic engine for their kinds, with no kind named
        // in the engine.
        .target(name: "BoardCRDT", swiftSettings: [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]),

        // Wire messages shared by the hub and its clients (pure, no I/O).
        .target(name: "SyncWire", dependencies: ["BoardCRDT"],
                swiftSettings: [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]),

        // The one place that calls libwebsockets: server and client event loops.
        // Release builds drop the dynamic exclusivity checks of this module
        // only (the hub's server loop and the clients' loop): its state is
        // confined to each loop's thread, and no stored property of it is in
        // the middle of an access across a call into lws or a delegate (lws
        // does call back synchronously, e.g. from lws_write). The checks were
        // 11 % of the hub's instructions per paced change, paid once per
        // client of a fan-out (BENCHMARKS.md, "One write per client").
        // Debug builds, which every test runs, keep them.
        .target(name: "WebSocketLoop", dependencies: ["CLibWebsockets"],
                swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),

        .executableTarget(
            name: "SyncHub",
            dependencies: [
                "BoardCRDT", "SyncWire", "WebSocketLoop", "CSQLite", "CHiredis", "CZlib",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Web")],
            // Release builds drop the dynamic exclusivity checks here too, as
            // in WebSocketLoop: about 40 a change, 3 % of the hub's
            // instructions per paced change (BENCHMARKS.md, "Fewer
            // instructions before the first send"). The checks only catch an
            // overlapping access on one thread; every test runs a debug
            // build, which keeps them.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "syncclient",
            dependencies: [
                "BoardCRDT", "SyncWire", "WebSocketLoop", "CPixbuf", "COpenSSL",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),

        // Benchmarks (never timed tests): see BENCHMARKS.md.
        .executableTarget(name: "crdt-bench", dependencies: ["BoardCRDT"], path: "Benchmarks/CRDTBench"),
        .executableTarget(
            name: "raw-broadcaster",
            path: "Benchmarks/RawBroadcaster",
            linkerSettings: [.linkedLibrary("websockets")]
        ),
        // A lean load tool for fan-out figures: plain sockets and epoll (BENCHMARKS.md, figure 3).
        .executableTarget(name: "fanout-reader", path: "Benchmarks/FanoutReader"),

        .testTarget(name: "BoardCRDTTests", dependencies: ["BoardCRDT"]),
        .testTarget(name: "SyncHubTests", dependencies: [
            "SyncHub", "SyncWire", "BoardCRDT", .product(name: "JWTKit", package: "jwt-kit"),
        ]),
        .testTarget(name: "SyncClientTests", dependencies: ["syncclient", "SyncWire", "BoardCRDT"]),
        .testTarget(name: "EndToEndTests", dependencies: ["SyncWire"]),
    ]
)
