import Synchronization

/// Request ids: an incoming `X-Request-Id` is kept when it looks sane (so a proxy's id threads
/// through the logs); otherwise a process-unique id is made from a random prefix and a counter,
/// which costs no system call per request.
enum RequestID {
    private static let prefix: String = {
        let n = UInt32.random(in: 0...UInt32.max)
        let hex = String(n, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }()
    private static let counter = Atomic<UInt64>(0)

    static func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return prefix + "-" + String(n, radix: 16)
    }

    static func accept(_ incoming: String?) -> String {
        guard let incoming, !incoming.isEmpty, incoming.utf8.count <= 64,
              incoming.utf8.allSatisfy({ c in
                  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 45 || c == 95 || c == 46
              }) else { return next() }
        return incoming
    }
}
