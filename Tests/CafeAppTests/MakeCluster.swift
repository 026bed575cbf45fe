#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import XCTest

/// `make cluster` as it runs (tools/cluster.sh: three PostgreSQL nodes under Patroni, two API processes,
/// two workers, nginx in front), started from a checkout the postgres account cannot enter (as a
/// clone under /root is), on ports of its own; `stop()` stops it as Ctrl-C does.
final class MakeCluster {
    /// Everything of this cluster: the private checkout and the data (`data`, CLUSTER_DIR).
    let directory: URL
    var data: URL { directory.appendingPathComponent("data") }
    /// The load balancer's port; the nodes' are `port + 21…23`, their Patroni REST APIs' `port + 31…33`.
    let port: Int
    let script: ChildProcess

    /// Starts it with `extra` in its environment and waits until it says it runs (up to 300 s: it
    /// starts in 30–45 s here, and a CI run in a slow phase of its machine once took longer than 120 s).
    init(_ extra: [String: String] = [:]) throws {
        for (tool, package) in [("/usr/sbin/nginx", "nginx-light"), ("/usr/bin/patroni", "patroni"), ("/usr/bin/etcd", "etcd-server")]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            throw RawHTTPClient.Failure(description: "\(tool) is not installed: make test installs \(package)")
        }
        directory = TestCluster.root.appendingPathComponent("make-cluster-\(UUID().uuidString.prefix(8))")
        port = try Self.freePortRun()
        var environment = ProcessInfo.processInfo.environment
        for name in ["DATABASE_URL", "BACKUP_REPO", "BACKUP_CONFIG"] { environment.removeValue(forKey: name) }
        environment["CAFE_BIN"] = CafeProcess.binary.path
        environment["CLUSTER_PORT"] = String(port)
        environment["MIGRATIONS_DIR"] = repositoryRoot.appendingPathComponent("migrations").path
        environment.merge(extra) { $1 }
        // A checkout only its owner may enter (mode 700, links to the real one's directories): the script
        // and everything it starts as postgres must not need to enter it.
        let checkout = directory.appendingPathComponent("private-checkout")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for name in ["tools", "deploy", "migrations", "web", "openapi"] {
            try FileManager.default.createSymbolicLink(at: checkout.appendingPathComponent(name), withDestinationURL: repositoryRoot.appendingPathComponent(name))
        }
        environment["CLUSTER_DIR"] = directory.appendingPathComponent("data").path
        script = try ChildProcess(checkout.appendingPathComponent("tools/cluster.sh").path, [], environment: environment, directory: checkout.path)
        let deadline = Date().addingTimeInterval(300)
        while !script.output.contains("Ctrl-C stops it.") {
            guard script.isRunning, Date() < deadline else {
                let failure = "the cluster did not start:\n\(script.output)\n\(logTails())"
                stop()
                throw RawHTTPClient.Failure(description: failure)
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
    }

    /// The writers' connection string the script printed.
    var database: String {
        script.output.split(separator: "\n").first { $0.hasPrefix("    database ") }.map { String($0.dropFirst("    database ".count)) } ?? ""
    }

    /// Stops every process of the cluster (the script does on SIGTERM) and removes its directory.
    func stop() {
        script.signal(SIGTERM)
        // Bounded: a leftover daemon must fail the test, not hang the suite.
        XCTAssertNotNil(script.waitForExit(timeout: 60), "tools/cluster.sh did not stop within 60 s of SIGTERM:\n\(script.output)")
        try? FileManager.default.removeItem(at: directory)
    }

    /// The last lines of every log the cluster's processes wrote.
    func logTails() -> String {
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: data.path)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
        return logs.map { name in
            let text = (try? String(contentsOf: data.appendingPathComponent(name), encoding: .utf8)) ?? ""
            return "== \(name)\n" + text.split(separator: "\n", omittingEmptySubsequences: false).suffix(15).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The ports tools/cluster.sh takes after its base: the two API processes', etcd's two, the
    /// three nodes' and their Patroni REST APIs.
    static let clusterPorts = [0, 1, 2, 10, 11, 21, 22, 23, 31, 32, 33]

    /// A base port whose `offsets` are all free.
    static func freePortRun(_ offsets: [Int] = clusterPorts) throws -> Int {
        for _ in 0..<50 {
            let base = Int.random(in: 20_000..<40_000)
            let free = offsets.allSatisfy { offset in
                let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                defer { close(fd) }
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_port = in_port_t(UInt16(base + offset).bigEndian)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                return withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
                }
            }
            if free { return base }
        }
        throw RawHTTPClient.Failure(description: "no base with \(offsets) free")
    }
}
