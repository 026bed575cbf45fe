@testable import HTTPKit
import XCTest

/// The handshake's SHA-1 against FIPS 180's test vectors, and the accept value against RFC 6455's example.
final class WebSocketHandshakeTests: XCTestCase {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    func testSHA1MatchesTheStandardsVectors() {
        XCTAssertEqual(hex(SHA1.digest(Array("abc".utf8))), "a9993e364706816aba3e25717850c26c9cd0d89d")
        XCTAssertEqual(hex(SHA1.digest([])), "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        XCTAssertEqual(hex(SHA1.digest(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))),
                       "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))), "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        // Lengths around the padding's edges (55, 56, 64 bytes).
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 55))), "c1c8bbdc22796e28c0e15163d20899b65621d65a")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 56))), "c2db330f6083854c99d4b5bfb6e8f29f201be699")
        XCTAssertEqual(hex(SHA1.digest([UInt8](repeating: 0x61, count: 64))), "0098ba824b5c16427bd7a1122a5a442a25ec644d")
    }

    func testTheAcceptValueIsTheRFCs() {
        XCTAssertEqual(WebSocketHandshake.accept(key: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }
}
