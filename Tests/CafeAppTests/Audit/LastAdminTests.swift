import CafeTestSupport
import Foundation
import XCTest

/// No interleaving of blocks and revokes leaves no admin who can log in.
final class LastAdminTests: APITestCase {
    private func admins(_ n: Int) throws -> [(id: String, token: String)] {
        try (0..<n).map { i in
            let account = try signUp("adm\(i)_\(UUID().uuidString.prefix(6))")
            try pool.query("UPDATE users SET is_admin = true WHERE id = \(Int64(account.id) ?? 0)")
            return account
        }
    }

    private func usableAdmins() throws -> Int {
        try pool.query("SELECT count(*)::int FROM users WHERE is_admin AND blocked_at IS NULL").one().decode(0)
    }

    /// Runs both requests at the same moment; their statuses.
    private func together(_ a: @escaping @Sendable () throws -> Int, _ b: @escaping @Sendable () throws -> Int) -> [Int] {
        let results = UnsafeSendableBox([0, 0])
        let start = DispatchSemaphore(value: 0)
        let group = DispatchGroup()
        for (i, work) in [a, b].enumerated() {
            DispatchQueue.global().async(group: group) {
                start.wait()
                results.value[i] = (try? work()) ?? -1
            }
        }
        start.signal(); start.signal()
        group.wait()
        return results.value
    }

    /// Eight rounds, each with two fresh admins a and b: a asks `first` of b and b asks `second` of a,
    /// at the same moment; the statuses of each round.
    private func rounds(_ first: (method: String, path: String), _ second: (method: String, path: String)) throws -> [[Int]] {
        let port = app.server.port
        return try (0..<8).map { _ in
            try pool.query("UPDATE users SET is_admin = false")
            let pair = try admins(2)
            let (a, b) = (pair[0], pair[1])
            let statuses = together({ try RawHTTPClient(port: port).request(first.method, first.path.replacingOccurrences(of: "{id}", with: b.id),
                                                                            headers: ["Authorization": "Bearer \(a.token)"]).status },
                                    { try RawHTTPClient(port: port).request(second.method, second.path.replacingOccurrences(of: "{id}", with: a.id),
                                                                            headers: ["Authorization": "Bearer \(b.token)"]).status })
            XCTAssertEqual(try usableAdmins(), 1, "\(statuses)")
            return statuses
        }
    }

    func testTwoAdminsBlockingEachOtherAtOnceLeaveOne() throws {
        let block = (method: "POST", path: "/v1/admin/users/{id}/block")
        for statuses in try rounds(block, block) {
            XCTAssertEqual(statuses.filter { $0 == 200 }.count, 1, "\(statuses)")
        }
    }

    func testABlockRacingARevokeLeavesOne() throws {
        _ = try rounds((method: "POST", path: "/v1/admin/users/{id}/block"), (method: "DELETE", path: "/v1/admin/users/{id}/admin"))
    }

    func testBlockingTheLastOtherAdminIsRefusedOnlyWhenNoneWouldRemain() throws {
        let pair = try admins(2)
        try pool.query("UPDATE users SET blocked_at = now() WHERE id = \(Int64(pair[1].id) ?? 0)")
        // A blocked admin's revocation by the last usable one is fine; blocking the last usable one is not possible
        // (it cannot block itself), and a blocked admin cannot act.
        XCTAssertEqual(try call("DELETE", "/v1/admin/users/\(pair[1].id)/admin", token: pair[0].token).status, 200)
        assertProblem(try call("DELETE", "/v1/admin/users/\(pair[0].id)/admin", token: pair[0].token), 409, "last_admin")
        XCTAssertEqual(try usableAdmins(), 1)
    }
}

/// A value threads may write to at distinct indices (the test joins them before reading).
final class UnsafeSendableBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}
