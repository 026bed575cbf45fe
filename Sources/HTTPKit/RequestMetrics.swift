#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Request counts by route template, method and status, and a latency histogram per route
/// template and method, in the Prometheus text format. Route templates (not paths) keep the
/// number of series bounded.
public final class RequestMetrics: Sendable {
    public static let buckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private struct Key: Hashable { let route: String; let method: String }
    private struct Histogram { var counts = [Int](repeating: 0, count: RequestMetrics.buckets.count); var count = 0; var sum = 0.0 }
    private struct State {
        var requests: [Key: [Int: Int]] = [:]
        var latency: [Key: Histogram] = [:]
    }
    /// Shards, picked by thread: the handler threads record every request, and one lock for all
    /// of them cost a tenth of the trivial endpoint's throughput.
    private final class Shard: Sendable { let state = Mutex(State()) }
    private let shards: [Shard] = (0..<16).map { _ in Shard() }
    private static let knownMethods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]

    public init() {}

    public func record(route: String?, method: String, status: Int, seconds: Double) {
        // Methods outside the known set would be one series each: fold them.
        let key = Key(route: route ?? "unmatched", method: Self.knownMethods.contains(method) ? method : "OTHER")
        // Thread handles are far apart and alike in their low bits: mix them (Fibonacci hashing).
        let shard = Int((UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        shards[shard].state.withLock { s in
            s.requests[key, default: [:]][status, default: 0] += 1
            var h = s.latency[key] ?? Histogram()
            if let i = Self.buckets.firstIndex(where: { seconds <= $0 }) { h.counts[i] += 1 }
            h.count += 1
            h.sum += seconds
            s.latency[key] = h
        }
    }

    public func render(into out: inout String) {
        var s = State()
        for shard in shards {
            let part = shard.state.withLock { $0 }
            for (key, byStatus) in part.requests { s.requests[key, default: [:]].merge(byStatus, uniquingKeysWith: +) }
            for (key, h) in part.latency {
                var merged = s.latency[key] ?? Histogram()
                merged.counts = zip(merged.counts, h.counts).map(+)
                merged.count += h.count
                merged.sum += h.sum
                s.latency[key] = merged
            }
        }
        out += "# HELP cafe_http_requests_total HTTP requests answered, by route template, method and status.\n"
        out += "# TYPE cafe_http_requests_total counter\n"
        for (key, byStatus) in s.requests.sorted(by: { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }) {
            for (status, n) in byStatus.sorted(by: { $0.key < $1.key }) {
                out += "cafe_http_requests_total{route=\"\(Prometheus.escape(key.route))\",method=\"\(key.method)\",status=\"\(status)\"} \(n)\n"
            }
        }
        out += "# HELP cafe_http_request_duration_seconds Time to answer a request, from its headers to its response.\n"
        out += "# TYPE cafe_http_request_duration_seconds histogram\n"
        for (key, h) in s.latency.sorted(by: { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }) {
            let labels = "route=\"\(Prometheus.escape(key.route))\",method=\"\(key.method)\""
            var cumulative = 0
            for (i, bound) in Self.buckets.enumerated() {
                cumulative += h.counts[i]
                out += "cafe_http_request_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "cafe_http_request_duration_seconds_bucket{\(labels),le=\"+Inf\"} \(h.count)\n"
            out += "cafe_http_request_duration_seconds_sum{\(labels)} \(h.sum)\n"
            out += "cafe_http_request_duration_seconds_count{\(labels)} \(h.count)\n"
        }
    }
}

public enum Prometheus {
    public static func escape(_ label: String) -> String {
        label.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    /// `# HELP`, `# TYPE` and one sample per labelled value.
    public static func gauge(_ name: String, _ help: String, type: String = "gauge", _ samples: [(labels: String, value: Double)], into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples {
            let number = value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
            out += labels.isEmpty ? "\(name) \(number)\n" : "\(name){\(labels)} \(number)\n"
        }
    }
}
