#if canImport(Glibc)
import Glibc
#endif
import CafeTestSupport
import Foundation
import XCTest

/// `make cluster` as it runs (tools/cluster.sh: three PostgreSQL nodes under Patroni, two API
/// processes, two workers, nginx in front), started from a checkout the postgres account cannot enter
/// (as a clone under /root is): five wrong passwords through the balancer from one client do not lock
/// the account for another client, the per-client limits count each client, not the balancer, a
/// client's log-in budget is one for both API processes, and the balancer takes every photo the
/// service takes.
final class ClusterLoginTests: XCTestCase {
    func testWrongPasswordsThroughTheBalancerHoldOffOnlyTheirClient() throws {
        for (tool, package) in [("/usr/sbin/nginx", "nginx-light"), ("/usr/bin/patroni", "patroni"), ("/usr/bin/etcd", "etcd-server")]
        where !FileManager.default.isExecutableFile(atPath: tool) {
            return XCTFail("\(tool) is not installed: make test installs \(package)")
        }
        let directory = TestCluster.root.appendingPathComponent("make-cluster-\(UUID().uuidString.prefix(8))")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try Self.freePortRun()
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "DATABASE_URL")
        environment["CAFE_BIN"] = CafeProcess.binary.path
        environment["CLUSTER_PORT"] = String(port)
        environment["MIGRATIONS_DIR"] = repositoryRoot.appendingPathComponent("migrations").path
        // A checkout only its owner may enter (mode 700, links to the real one's directories): the script
        // and everything it starts as postgres must not need to enter it.
        let checkout = directory.appendingPathComponent("private-checkout")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try FileManager.default.createDirectory(at: checkout, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        for name in ["tools", "deploy", "migrations", "web", "openapi"] {
            try FileManager.default.createSymbolicLink(at: checkout.appendingPathComponent(name), withDestinationURL: repositoryRoot.appendingPathComponent(name))
        }
        environment["CLUSTER_DIR"] = directory.appendingPathComponent("data").path
        let script = try ChildProcess(checkout.appendingPathComponent("tools/cluster.sh").path, [], environment: environment, directory: checkout.path)
        defer {
            script.signal(SIGTERM)   // the script stops every process of the cluster on SIGTERM
            // Bounded: a leftover daemon must fail the test, not hang the suite.
            XCTAssertNotNil(script.waitForExit(timeout: 60), "tools/cluster.sh did not stop within 60 s of SIGTERM:\n\(script.output)")
        }
        // It starts in 30–45 s here; a CI run once took longer than 120 s, in a phase when this shared
        // machine ran at a third of its speed. The logs say where a start that fails was waiting.
        let deadline = Date().addingTimeInterval(300)
        while !script.output.contains("Ctrl-C stops it.") {
            guard script.isRunning, Date() < deadline else {
                return XCTFail("the cluster did not start:\n\(script.output)\n\(Self.logTails(directory.appendingPathComponent("data")))")
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        let lb = UInt16(port)
        func logIn(_ password: String, from source: String) throws -> RawHTTPClient.Response {
            try RawHTTPClient(port: lb, from: source).request("POST", "/v1/sessions", json: #"{"username":"victim_c","password":"\#(password)"}"#)
        }
        let signUp = try RawHTTPClient(port: lb, from: "127.0.0.4").request("POST", "/v1/users", json: #"{"username":"victim_c","password":"the right one!"}"#)
        XCTAssertEqual(signUp.status, 201, signUp.text)
        try assertTheBalancerTakesWhatTheServiceTakes(port: lb, token: signUp.json()["sessionToken"] as? String ?? "")
        for _ in 0..<5 { XCTAssertEqual(try logIn("wrong", from: "127.0.0.2").status, 401) }
        let held = try logIn("the right one!", from: "127.0.0.2")
        XCTAssertEqual(held.status, 429, "the attacking client itself is held off: \(held.text)")
        let owner = try logIn("the right one!", from: "127.0.0.3")
        XCTAssertEqual(owner.status, 201, "the owner, from another client, logs in: \(owner.text)")
        // The balancer is no longer exempt: a client's log-in limit (10 a minute) is its own. Names
        // never tried before, so the hold-off is not what answers.
        var codes: [String] = []
        let spraying = Date()
        for n in 0..<25 {
            let r = try RawHTTPClient(port: lb, from: "127.0.0.5").request("POST", "/v1/sessions", json: #"{"username":"sprayed_\#(n)","password":"x"}"#)
            codes.append(r.json()["code"] as? String ?? "\(r.status)")
        }
        // One budget for the client through both API processes together (`SharedRateCounts`), not 10 in each:
        // 10, one more for the processes' 50 ms sync, and one more for each sixth of a minute the spray took
        // (the window slides: a slow phase of this machine once took 12 s over the 25 and admitted 12).
        let admitted = codes.filter { $0 != "rate_limited" }.count
        let slid = Int((Date().timeIntervalSince(spraying) / 6).rounded(.down))
        XCTAssertTrue((10...(11 + slid)).contains(admitted), "\(admitted) log-ins admitted in \(slid) sixths of a minute: \(codes)")
        XCTAssertLessThan(11 + slid, 20, "the spray took too long to tell one budget from two")
        XCTAssertEqual(try logIn("the right one!", from: "127.0.0.6").status, 201, "another client is not limited")
    }

    /// A 20 MiB phone photo through nginx is stored; a body over PHOTO_MAX_BYTES is refused by the
    /// service in its own format (problem+json), not by nginx's HTML page; so is one past even the balancer's limit.
    private func assertTheBalancerTakesWhatTheServiceTakes(port: UInt16, token: String) throws {
        let photo = TestPhotos.make(width: 2800, height: 2500, as: "png[compression=0]")
        XCTAssertGreaterThan(photo.count, 20 << 20)
        let headers = ["Authorization": "Bearer \(token)", "Content-Type": "image/png"]
        let stored = try RawHTTPClient(port: port, from: "127.0.0.7").request("POST", "/v1/files", headers: headers, body: photo)
        XCTAssertEqual(stored.status, 201, stored.text)
        for size in [25 * 1024 * 1024 + 1, 40 * 1024 * 1024] {
            let tooLarge = try RawHTTPClient(port: port, from: "127.0.0.7").request("POST", "/v1/files", headers: headers, body: photo + [UInt8](repeating: 0, count: size - photo.count))
            XCTAssertEqual(tooLarge.status, 413, "\(size) bytes")
            XCTAssertEqual(tooLarge.headers["content-type"], "application/problem+json; charset=utf-8", "\(size) bytes: \(tooLarge.text)")
            XCTAssertEqual(tooLarge.json()["code"] as? String, "payload_too_large", "\(size) bytes")
        }
    }

    /// The last lines of every log the cluster's processes wrote.
    private static func logTails(_ directory: URL) -> String {
        let logs = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
        return logs.map { name in
            let text = (try? String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)) ?? ""
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
