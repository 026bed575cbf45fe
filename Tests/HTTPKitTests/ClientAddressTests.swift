import Foundation
@testable import HTTPKit
import XCTest

/// Who the client is behind trusted proxies, and a rate limiter that stays bounded under a flood of
/// addresses.
final class ClientAddressTests: XCTestCase {
    private func client(_ peer: String, _ headers: HeaderFields, trusted: String = "10.0.0.0/8, 127.0.0.1, fd00::/8") throws -> String {
        let proxies = try TrustedProxies(parsing: trusted)
        return proxies.client(peer: try XCTUnwrap(IPAddress(peer)), headers: headers).description
    }

    func testTheRightMostUntrustedHopIsTheClient() throws {
        XCTAssertEqual(try client("127.0.0.1", ["x-forwarded-for": "6.6.6.6, 203.0.113.5"]), "203.0.113.5", "what the client wrote is to the left")
        XCTAssertEqual(try client("127.0.0.1", ["x-forwarded-for": "203.0.113.5, 10.1.2.3"]), "203.0.113.5", "through two proxies")
        XCTAssertEqual(try client("127.0.0.1", ["x-forwarded-for": "10.1.2.3"]), "10.1.2.3", "a client that is itself a proxy's address")
        XCTAssertEqual(try client("192.0.2.1", ["x-forwarded-for": "203.0.113.5"]), "192.0.2.1", "an untrusted peer names no one")
        XCTAssertEqual(try client("127.0.0.1", [:]), "127.0.0.1")
        XCTAssertEqual(try client("127.0.0.1", ["x-forwarded-for": "garbage, 10.1.2.3"]), "10.1.2.3", "an unreadable hop ends the chain")
        XCTAssertEqual(try client("127.0.0.1", ["forwarded": #"for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711""#]), "2001:db8:cafe::17")
        XCTAssertEqual(try client("127.0.0.1", ["x-forwarded-for": "203.0.113.9:4711"]), "203.0.113.9")
        XCTAssertEqual(try client("fd00::1", ["x-forwarded-for": "::ffff:203.0.113.9"]), "203.0.113.9", "IPv4-mapped is IPv4")
        XCTAssertEqual(try client("::ffff:127.0.0.1", ["x-forwarded-for": "203.0.113.9"]), "203.0.113.9")
    }

    func testConfigurationRefusesWhatIsNotAnAddress() {
        for bad in ["10.0.0.0/33", "localhost", "1.2.3", "::1/129", "10.0.0.0/x"] {
            XCTAssertThrowsError(try TrustedProxies(parsing: bad), bad)
        }
        XCTAssertNoThrow(try TrustedProxies(parsing: ""))
    }

    func testAnIPv6ClientCountsByItsSlash64() throws {
        XCTAssertEqual(IPAddress("2001:db8:1:2:aaaa::1")?.clientKey, "2001:db8:1:2::/64")
        XCTAssertEqual(IPAddress("2001:db8:1:2:bbbb::9")?.clientKey, IPAddress("2001:db8:1:2::1")?.clientKey)
        XCTAssertNotEqual(IPAddress("2001:db8:1:3::1")?.clientKey, IPAddress("2001:db8:1:2::1")?.clientKey)
        XCTAssertEqual(IPAddress("203.0.113.9")?.clientKey, "203.0.113.9")
    }

    /// A million distinct addresses: memory stays bounded by `maxTracked`, and a client seen within
    /// the minute keeps its bucket as long as the flood stays under that bound.
    func testAMillionAddressesStayWithinTheBound() {
        let limiter = RateLimiter(perMinute: 2, maxTracked: 100_000, now: 0)
        XCTAssertNil(limiter.take("victim", now: 0))
        XCTAssertNil(limiter.take("victim", now: 0))
        XCTAssertNotNil(limiter.take("victim", now: 0))
        let started = DispatchTime.now().uptimeNanoseconds
        for n in 0..<1_000_000 {
            _ = limiter.take("2001:db8:\(n >> 16):\(n & 0xffff)::/64", now: Double(n) / 1_000_000)
            if n == 40_000 { XCTAssertNotNil(limiter.take("victim", now: 0.04), "still remembered under a smaller flood") }
        }
        let perTake = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6 / 1e3
        XCTAssertLessThanOrEqual(limiter.tracked, 100_000)
        print("rate limiter: \(String(format: "%.2f", perTake)) µs a take over 1,000,000 distinct clients, \(limiter.tracked) tracked")
        // Past a minute every bucket is full again: forgetting them loses nothing.
        XCTAssertNil(limiter.take("victim", now: 61))
    }
}
