import CafeApp
import CafeTestSupport
import Foundation
import JSONLogging
import PostgresKit
import XCTest

/// Two API processes' worth of the application on one database: a client's log-in budget is the
/// service's, not each process's (`SharedRateCounts`). `ClusterLoginTests` does the same through
/// nginx in front of two `cafe serve` processes.
final class SharedRateLimitTests: APITestCase {
    // No hold: the refusals answer at once, so the whole burst stays inside one minute.
    override var extraEnvironment: [String: String] { ["RATE_LIMIT_LOGINS": "10", "RATE_LIMIT_HOLD": "0"] }

    func testTwoProcessesShareOneLogInBudget() throws {
        let first = app!
        let config = Configuration(environment: ["DATABASE_URL": db.conninfo, "PORT": "0", "LOG_LEVEL": "error", "HTTP_THREADS": "4",
                                                 "MIGRATIONS_DIR": repositoryRoot.appendingPathComponent("migrations").path,
                                                 "RATE_LIMIT_LOGINS": "10", "RATE_LIMIT_HOLD": "0", "PAGE_CACHE_BYTES": "0"])
        let second = try Application(configuration: config, database: try Database.open(config, applicationName: "second", forAPI: true,
                                                                                         logger: Logger(label: "t", minimum: .error)))
        try Blocking.run { try await second.start() }
        defer { second.shutdown() }
        var statuses: [Int] = []
        for n in 0..<30 {
            let port = (n % 2 == 0 ? first : second).server.port
            let r = try RawHTTPClient(port: port, from: "127.0.0.7").request("POST", "/v1/sessions", json: #"{"username":"sprayed_\#(n)","password":"x"}"#)
            statuses.append(r.status)
        }
        let admitted = statuses.filter { $0 != 429 }.count
        XCTAssertTrue((10...11).contains(admitted), "10 a minute for the client through both, not 10 in each: \(statuses)")
        XCTAssertEqual(try RawHTTPClient(port: second.server.port, from: "127.0.0.8").request("POST", "/v1/sessions",
                                                                                          json: #"{"username":"other","password":"x"}"#).status, 401,
                       "another client has its own budget")
    }
}
