#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as 16 bytes (IPv4 as `::ffff:a.b.c.d`, so one mask arithmetic serves both).
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// Network order; an IPv4 address is IPv4-mapped.
    let bytes: [UInt8]

    /// 127.0.0.0/8 or ::1.
    public var isLoopback: Bool { isIPv4 ? bytes[12] == 127 : bytes == [UInt8](repeating: 0, count: 15) + [1] }

    public var isIPv4: Bool { bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff }

    /// Dotted IPv4, or an IPv6 literal (with or without brackets, with an optional zone that is dropped).
    public init?(_ text: some StringProtocol) {
        var literal = String(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        if let zone = literal.firstIndex(of: "%") { literal = String(literal[..<zone]) }
        guard !literal.isEmpty, literal.utf8.count <= 45 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            bytes = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff] + withUnsafeBytes(of: v4.s_addr) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, literal, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: v6) { Array($0) }
    }

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// The usual text: dotted for IPv4 (also for an IPv4-mapped IPv6 address), RFC 5952 for IPv6.
    public var description: String {
        var buffer = [CChar](repeating: 0, count: 64)
        if isIPv4 {
            var v4 = in_addr()
            withUnsafeMutableBytes(of: &v4.s_addr) { $0.copyBytes(from: bytes[12..<16]) }
            _ = inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count))
        } else {
            var v6 = in6_addr()
            withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
            _ = inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count))
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first `bits` bits kept, the rest zero.
    func masked(_ bits: Int) -> IPAddress {
        IPAddress(bytes: bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, bits - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        })
    }

    /// What counts one client in rate limits and log-in hold-offs: an IPv4 address, or an IPv6 /64
    /// (one subscriber's network: a client holds 2^64 addresses of it to come from).
    public var clientKey: String {
        isIPv4 ? description : "\(masked(64))/64"
    }
}

/// `TRUSTED_PROXIES`: the addresses and CIDR blocks (IPv4 and IPv6) of the reverse proxies in front
/// of the service. Only a request whose TCP peer is one of them has its client address taken from
/// `X-Forwarded-For` (else `Forwarded`'s `for=`): the right-most address of the chain that is not
/// itself a trusted proxy, since everything left of it was written by whoever sent the request.
/// From any other peer the headers are ignored, so a client cannot name itself someone else.
public struct TrustedProxies: Sendable {
    struct Block: Sendable {
        let network: IPAddress
        let bits: Int
        func contains(_ address: IPAddress) -> Bool { address.masked(bits) == network }
    }

    let blocks: [Block]

    public static let none = TrustedProxies(blocks: [])

    init(blocks: [Block]) { self.blocks = blocks }

    public struct Invalid: Error, CustomStringConvertible {
        public let entry: String
        public var description: String {
            "TRUSTED_PROXIES: \"\(entry)\" is not an IPv4 or IPv6 address or CIDR block (e.g. 10.0.0.0/8, fd00::/8, 127.0.0.1)"
        }
    }

    /// Comma- or space-separated entries: `10.0.0.5`, `10.0.0.0/8`, `::1`, `fd00::/8`.
    public init(parsing list: String) throws(Invalid) {
        var blocks: [Block] = []
        for entry in list.split(whereSeparator: { $0 == "," || $0 == " " }) {
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let first = parts.first, let address = IPAddress(first) else { throw Invalid(entry: String(entry)) }
            let maximum = address.isIPv4 ? 32 : 128
            var bits = maximum
            if parts.count == 2 {
                guard let given = Int(parts[1]), (0...maximum).contains(given) else { throw Invalid(entry: String(entry)) }
                bits = given
            }
            let total = address.isIPv4 ? bits + 96 : bits
            blocks.append(Block(network: address.masked(total), bits: total))
        }
        self.blocks = blocks
    }

    public var isEmpty: Bool { blocks.isEmpty }

    public func contains(_ address: IPAddress) -> Bool { blocks.contains { $0.contains(address) } }

    /// The client of a request from `peer` with these (lower-cased) headers.
    public func client(peer: IPAddress, headers: HeaderFields) -> IPAddress {
        guard contains(peer) else { return peer }
        let chain: [Substring]
        if let forwardedFor = headers["x-forwarded-for"] {
            chain = forwardedFor.split(separator: ",")
        } else if let forwarded = headers["forwarded"] {
            chain = Self.forElements(forwarded)
        } else {
            return peer
        }
        var client = peer
        for entry in chain.reversed() {
            // A hop a trusted proxy could not name is the end of what can be believed.
            guard let address = Self.address(entry) else { return client }
            client = address
            if !contains(address) { return address }
        }
        return client
    }

    /// The `for=` values of a `Forwarded` header (RFC 7239), in order.
    static func forElements(_ header: String) -> [Substring] {
        header.split(separator: ",").compactMap { element in
            element.split(separator: ";").lazy.compactMap { pair -> Substring? in
                let trimmed = pair.drop { $0 == " " }
                guard trimmed.lowercased().hasPrefix("for=") else { return nil }
                return trimmed.dropFirst(4)
            }.first
        }
    }

    /// One hop: `1.2.3.4`, `1.2.3.4:5678`, `2001:db8::1`, `[2001:db8::1]:5678`, or quoted (`"[::1]:80"`).
    static func address(_ hop: Substring) -> IPAddress? {
        var text = hop.trimming([" ", "\t", "\""])
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            text = String(text[text.index(after: text.startIndex)..<close])
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = String(text[..<colon])   // IPv4 with a port
        }
        return IPAddress(text)
    }
}
