// swift-tools-version:6.0
import PackageDescription

// Release builds optimise across module boundaries, so generic row decoding and JSON writing are
// specialised where they are used instead of going through runtime generic metadata on every row
// (measured: that lookup was the largest item in a profile of the list endpoint), and skip the
// run-time exclusivity checks, which debug builds and the tests keep.
let release: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))]

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

        .target(name: "Logging", swiftSettings: release),
        .target(name: "PostgresKit", dependencies: ["CLibPQ", "CSystem", "Logging"], swiftSettings: release),
        .target(name: "HTTPKit", dependencies: ["CMicroHTTPD", "CSystem", "Logging"], swiftSettings: release),
        .target(name: "CafeDomain", swiftSettings: release),
        .target(name: "CafeStore", dependencies: ["CafeDomain", "PostgresKit", "CSodium", "Logging"], swiftSettings: release),
        .target(name: "Aggregation", dependencies: ["PostgresKit", "Logging"], swiftSettings: release),
        .target(name: "CafeApp", dependencies: ["CafeDomain", "PostgresKit", "HTTPKit", "CafeStore", "Aggregation", "Logging"], swiftSettings: release),
        .executableTarget(name: "cafe", dependencies: ["CafeDomain", "CafeApp", "CafeStore", "Aggregation", "PostgresKit", "HTTPKit", "CSystem", "Logging"], swiftSettings: release),

        // Shared by the test targets: the throwaway cluster and a raw-socket HTTP client. Not linked into `cafe`.
        .target(name: "CafeTestSupport", dependencies: ["PostgresKit", "Logging"]),

        .testTarget(name: "PostgresKitTests", dependencies: ["PostgresKit", "CafeTestSupport"]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit", "CafeTestSupport"]),
        .testTarget(name: "CafeAppTests", dependencies: ["CafeDomain", "CafeApp", "CafeStore", "Aggregation", "PostgresKit", "HTTPKit", "CafeTestSupport", "cafe"]),
    ],
    swiftLanguageModes: [.v6]
)
