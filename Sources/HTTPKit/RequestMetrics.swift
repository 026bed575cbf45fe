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
    /// Everything kept for one route and method: answers by status, and the latency histogram.
    private struct Series {
        var byStatus: [Int: Int] = [:]
        var buckets = [Int](repeating: 0, count: RequestMetrics.buckets.count)
        var sum = 0.0
        var count: Int { byStatus.values.reduce(0, +) }

        mutating func add(status: Int, seconds: Double) {
            byStatus[status, default: 0] += 1
            if let i = RequestMetrics.buckets.firstIndex(where: { seconds <= $0 }) { buckets[i] += 1 }
            sum += seconds
        }

        mutating func merge(_ other: Series) {
            byStatus.merge(other.byStatus, uniquingKeysWith: +)
            buckets = zip(buckets, other.buckets).map(+)
            sum += other.sum
        }
    }
    /// Shards, picked by thread: the handler threads record every request, and one lock for all
    /// of them cost a tenth of the trivial endpoint's throughput.
    private final class Shard: Sendable { let series = Mutex<[Key: Series]>([:]) }
    private let shards: [Shard] = (0..<16).map { _ in Shard() }
    private static let knownMethods: Set<String> = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"]

    public init() {}

    public func record(route: String?, method: String, status: Int, seconds: Double) {
        // Methods outside the known set would be one series each: fold them.
        let key = Key(route: route ?? "unmatched", method: Self.knownMethods.contains(method) ? method : "OTHER")
        // Thread handles are far apart and alike in their low bits: mix them (Fibonacci hashing).
        let shard = Int((UInt64(pthread_self()) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        shards[shard].series.withLock { $0[key, default: Series()].add(status: status, seconds: seconds) }
    }

    public func render(into out: inout String) {
        var all: [Key: Series] = [:]
        for shard in shards {
            for (key, series) in shard.series.withLock({ $0 }) { all[key, default: Series()].merge(series) }
        }
        let sorted = all.sorted { ($0.key.route, $0.key.method) < ($1.key.route, $1.key.method) }
        out += "# HELP cafe_http_requests_total HTTP requests answered, by route template, method and status.\n"
        out += "# TYPE cafe_http_requests_total counter\n"
        for (key, series) in sorted {
            for (status, n) in series.byStatus.sorted(by: { $0.key < $1.key }) {
                out += "cafe_http_requests_total{route=\"\(Prometheus.escape(key.route))\",method=\"\(key.method)\",status=\"\(status)\"} \(n)\n"
            }
        }
        out += "# HELP cafe_http_request_duration_seconds Time to answer a request, from its headers to its response.\n"
        out += "# TYPE cafe_http_request_duration_seconds histogram\n"
        for (key, series) in sorted {
            let labels = "route=\"\(Prometheus.escape(key.route))\",method=\"\(key.method)\""
            var cumulative = 0
            for (i, bound) in Self.buckets.enumerated() {
                cumulative += series.buckets[i]
                out += "cafe_http_request_duration_seconds_bucket{\(labels),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "cafe_http_request_duration_seconds_bucket{\(labels),le=\"+Inf\"} \(series.count)\n"
            out += "cafe_http_request_duration_seconds_sum{\(labels)} \(series.sum)\n"
            out += "cafe_http_request_duration_seconds_count{\(labels)} \(series.count)\n"
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
