// swift-tools-version:6.0
import PackageDescription

// Release builds optimise across module boundaries, so generic row decoding and JSON writing are
// specialised where they are used instead of going through runtime generic metadata on every row
// (measured: that lookup was the largest item in a profile of the list endpoint), and skip the
// run-time exclusivity checks, which debug builds and the tests keep.
//
// A nonisolated async function runs on its caller's executor (SE-0461) instead of hopping to the
// generic one: a request's task stays on the thread that runs it without a task switch per call.
// Every Swift target, the tests included, builds in that mode: a function's type depends on it.
let language: [SwiftSetting] = [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
let release: [SwiftSetting] = language + [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"], .when(configuration: .release))]

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
        .systemLibrary(name: "CCrypt", pkgConfig: "libxcrypt", providers: [.apt(["libcrypt-dev"])]),
        .systemLibrary(name: "CVips", pkgConfig: "vips", providers: [.apt(["libvips-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // WebSocket framing (HTTPKit's WebSocketLoop); Debian ships no pkg-config file for it.
        .systemLibrary(name: "CWslay", providers: [.apt(["libwslay-dev"])]),
        // gzip for answers (HTTPKit's ResponseCompression).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // The few calls Swift cannot make itself: variadic MHD_start_daemon and fork+setuid+exec.
        .target(name: "CSystem", dependencies: ["CMicroHTTPD"]),
        .target(name: "CJSONScan"),
        // ICU's uspoof (Debian libicu-dev) behind a header with no ICU types (see its header).
        .target(name: "CUsernameSpoof", linkerSettings: [.linkedLibrary("icui18n"), .linkedLibrary("icuuc")]),
        // libvips and libcurl behind headers with no GLib or curl types: both APIs are variadic.
        .target(name: "CPhotoCodec", dependencies: ["CVips"]),
        .target(name: "CObjectRequest", dependencies: ["CCurl"]),
        .target(name: "CMailTransfer", dependencies: ["CCurl"]),

        .target(name: "JSONLogging", swiftSettings: release),
        // Waiting for descriptors without holding a thread, and the monotonic clock.
        .target(name: "IOReadiness", dependencies: ["CSystem"], swiftSettings: release),
        .target(name: "PostgresKit", dependencies: ["CLibPQ", "CSystem", "IOReadiness", "JSONLogging"], swiftSettings: release),
        // Before the service can use a database: the embedded PostgreSQL launcher and the migrator.
        .target(name: "DatabaseSetup", dependencies: ["PostgresKit", "CLibPQ", "CSystem", "JSONLogging"], swiftSettings: release),
        .target(name: "HTTPKit", dependencies: ["CMicroHTTPD", "CSystem", "CJSONScan", "CZlib", "CWslay", "IOReadiness", "JSONLogging"], swiftSettings: release),
        .target(name: "CafeDomain", swiftSettings: release),
        // Decoding, cleaning and resizing photos (libvips), and the S3 API (libcurl, SigV4).
        // Helper processes of the `cafe` executable, and the messages to them (photos, password hashes).
        .target(name: "HelperProcesses", dependencies: ["CSystem", "IOReadiness"], swiftSettings: release),
        .target(name: "PhotoCodec", dependencies: ["CPhotoCodec", "CafeDomain", "CSystem", "HelperProcesses", "IOReadiness"], swiftSettings: release),
        .target(name: "ObjectStorage", dependencies: ["CObjectRequest", "CSodium", "IOReadiness"], swiftSettings: release),
        // Mail over SMTP (libcurl): the message's text and its one-at-a-time transport.
        .target(name: "Mail", dependencies: ["CMailTransfer"], swiftSettings: release),
        .target(name: "CafeStore", dependencies: ["CafeDomain", "PostgresKit", "PhotoCodec", "ObjectStorage", "Mail", "CSodium", "CCrypt", "CUsernameSpoof", "CSystem", "HelperProcesses", "IOReadiness", "JSONLogging"], swiftSettings: release),
        .target(name: "Aggregation", dependencies: ["PostgresKit", "CSystem", "JSONLogging"], swiftSettings: release),
        .target(name: "Backups", dependencies: ["DatabaseSetup", "ObjectStorage", "PostgresKit", "JSONLogging"], swiftSettings: release),
        .target(name: "CafeApp", dependencies: ["HelperProcesses", "IOReadiness", "CafeDomain", "PostgresKit", "PhotoCodec", "ObjectStorage", "Mail", "DatabaseSetup", "CSystem", "HTTPKit", "CafeStore", "Aggregation", "Backups", "JSONLogging"], swiftSettings: release),
        .executableTarget(name: "cafe", dependencies: ["HelperProcesses", "CafeDomain", "CafeApp", "Backups", "ObjectStorage", "PhotoCodec", "CafeStore", "Aggregation", "DatabaseSetup", "JSONLogging"], swiftSettings: release),

        // Shared by the test targets: the throwaway cluster and a raw-socket HTTP client. Not linked into `cafe`.
        .target(name: "CafeTestSupport", dependencies: ["PostgresKit", "DatabaseSetup", "JSONLogging", "CSystem"], swiftSettings: language),

        .testTarget(name: "PostgresKitTests", dependencies: ["PostgresKit", "DatabaseSetup", "JSONLogging", "CafeTestSupport"], swiftSettings: language),
        .testTarget(name: "DatabaseSetupTests", dependencies: ["DatabaseSetup", "PostgresKit", "CafeTestSupport"], swiftSettings: language),
        .testTarget(name: "CafeDomainTests", dependencies: ["CafeDomain"], swiftSettings: language),
        .testTarget(name: "PhotoCodecTests", dependencies: ["PhotoCodec", "CafeDomain", "CafeTestSupport"], swiftSettings: language),
        .testTarget(name: "CafeStoreTests", dependencies: ["CafeStore", "HelperProcesses", "IOReadiness", "CafeDomain", "PostgresKit", "DatabaseSetup", "CafeTestSupport", "JSONLogging"], swiftSettings: language),
        .testTarget(name: "AggregationTests", dependencies: ["Aggregation", "PostgresKit", "DatabaseSetup", "CafeTestSupport", "JSONLogging"], swiftSettings: language),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit", "IOReadiness", "CafeTestSupport"], swiftSettings: language),
        .testTarget(name: "CafeAppTests", dependencies: ["CZlib", "CafeDomain", "CafeApp", "PhotoCodec", "ObjectStorage", "CafeStore", "Aggregation", "PostgresKit", "HTTPKit", "Backups", "CafeTestSupport", "cafe"], swiftSettings: language),
    ],
    swiftLanguageModes: [.v6]
)
