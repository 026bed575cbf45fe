/// `ALLOWED_HOSTS`: the `Host` header values the service believes enough to build absolute URLs
/// from when `PUBLIC_URL` is unset. Each entry is a host name or address literal and matches it with
/// any port (`cafe.example.com`, `127.0.0.1`, `[::1]`). By default: `localhost`, `127.0.0.1`,
/// `[::1]` and the listen address. A request naming any other host gets relative URLs, which are
/// the same whatever it sent: a cache in front can never keep a URL an attacker chose.
public struct AllowedHosts: Sendable {
    let names: Set<String>

    public init(_ entries: [String]) {
        names = Set(entries.map { Self.hostPart(of: $0.lowercased()) }.filter { !$0.isEmpty })
    }

    public static func defaults(listenHost: String) -> AllowedHosts {
        var entries = ["localhost", "127.0.0.1", "[::1]"]
        if listenHost != "*", listenHost != "0.0.0.0", listenHost != "::" {
            entries.append(listenHost.contains(":") && !listenHost.hasPrefix("[") ? "[\(listenHost)]" : listenHost)
        }
        return AllowedHosts(entries)
    }

    /// The `Host` value if it names an allowed host (with any port), else nil.
    public func allowed(_ host: String?) -> String? {
        guard let host, !host.isEmpty, host.utf8.count <= 255,
              host.utf8.allSatisfy({ $0 > 32 && $0 < 127 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@") }) else { return nil }
        let lowered = host.lowercased()
        let name = Self.hostPart(of: lowered)
        let port = lowered.dropFirst(name.count)
        guard names.contains(name), port.isEmpty || (port.first == ":" && port.dropFirst().allSatisfy(\.isNumber) && port.count > 1) else {
            return nil
        }
        return lowered
    }

    /// `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`.
    static func hostPart(of value: String) -> String {
        if value.hasPrefix("["), let close = value.firstIndex(of: "]") { return String(value[...close]) }
        return String(value.prefix { $0 != ":" })
    }
}
