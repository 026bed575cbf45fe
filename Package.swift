// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "CafeReview",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cafe", targets: ["cafe"]),
    ],
    targets: [
        // Debian C libraries, wrapped as system libraries.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // The few calls Swift cannot make itself: variadic MHD_start_daemon and fork+setuid+exec.
        .target(name: "CSystem", dependencies: ["CMicroHTTPD"]),

        .target(name: "Logging"),
        .target(name: "PostgresKit", dependencies: ["CLibPQ", "CSystem", "Logging"]),
        .target(name: "HTTPKit", dependencies: ["CMicroHTTPD", "CSystem", "Logging"]),
        .target(name: "CafeDomain"),
        .target(name: "CafeStore", dependencies: ["CafeDomain", "PostgresKit", "CSodium", "Logging"]),
        .target(name: "Aggregation", dependencies: ["PostgresKit", "Logging"]),
        .target(name: "CafeApp", dependencies: ["CafeDomain", "PostgresKit", "HTTPKit", "CafeStore", "Aggregation", "Logging"]),
        .executableTarget(name: "cafe", dependencies: ["CafeDomain", "CafeApp", "CafeStore", "Aggregation", "PostgresKit", "HTTPKit", "Logging"]),

        // Shared by the test targets: the throwaway cluster and a raw-socket HTTP client. Not linked into `cafe`.
        .target(name: "CafeTestSupport", dependencies: ["PostgresKit", "Logging"]),

        .testTarget(name: "PostgresKitTests", dependencies: ["PostgresKit", "CafeTestSupport"]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit", "CafeTestSupport"]),
        .testTarget(name: "CafeAppTests", dependencies: ["CafeDomain", "CafeApp", "CafeStore", "Aggregation", "PostgresKit", "HTTPKit", "CafeTestSupport", "cafe"]),
    ],
    swiftLanguageModes: [.v6]
)
