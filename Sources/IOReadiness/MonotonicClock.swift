#if canImport(Glibc)
import Glibc
#endif

/// The clock every deadline and duration here is measured on: monotonic, never set back.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    public static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}

extension UInt64 {
    /// `self - other`, or 0 when `other` is larger: the time left until a deadline, or since a start.
    public func subtractingSaturated(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
