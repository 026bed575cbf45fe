#if canImport(Glibc)
import Glibc
import IOReadiness
#endif

/// Reading and writing the messages between the service and its helpers: fixed-size little-endian
/// headers, then bytes. Both ends are the same binary, so each kind's layout is private to it.
public enum HelperFrames {
    /// No message is larger than this (no photo, size or upload is).
    public static let maxLength = 1 << 30

    public static func append(_ out: inout [UInt8], _ value: UInt64, _ bytes: Int) {
        for i in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    public static func uint64(_ b: [UInt8], _ at: Int) -> UInt64 {
        (0..<8).reduce(0) { $0 | UInt64(b[at + $1]) << (8 * UInt64($1)) }
    }

    public static func int32(_ b: [UInt8], _ at: Int) -> Int32 {
        Int32(bitPattern: (0..<4).reduce(0) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) })
    }

    /// Writes all of `bytes`; false when the other end is gone.
    public static func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, base + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                    // A descriptor in non-blocking mode (the service's ends of its helpers' pipes) that is full.
                    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&poller, 1, -1)
                    continue
                }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }

    /// Exactly `count` bytes, or nil at the end of the stream or when `deadline` (monotonic seconds) passes.
    public static func read(_ fd: Int32, count: Int, deadline: Double? = nil) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        while offset < count {
            if let deadline {
                let left = deadline - MonotonicClock.seconds()
                guard left > 0 else { return nil }
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(min(left * 1000, 60_000).rounded(.up)))
                if ready < 0 && errno == EINTR { continue }
                guard ready > 0 else { continue }
            }
            let n = out.withUnsafeMutableBytes { raw in raw.baseAddress.map { Glibc.read(fd, $0 + offset, count - offset) } ?? 0 }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                // Non-blocking and empty: wait (the deadline, if any, is checked above).
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, deadline == nil ? -1 : 10)
                continue
            }
            guard n > 0 else { return nil }
            offset += n
        }
        return out
    }
}
