import CObjectRequest
import CSodium
import IOReadiness
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where photos go when they leave the database: `PHOTO_STORE=s3://BUCKET[/PREFIX]` on any
/// S3-compatible store, with the AWS tools' own variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_REGION`, `AWS_ENDPOINT_URL_S3`, and `AWS_CA_BUNDLE` for a store whose TLS certificate is signed by
/// an authority of its own). With an endpoint (MinIO, SeaweedFS, Ceph, R2…) objects are
/// addressed path-style (`ENDPOINT/BUCKET/KEY`), which they all serve; without one, AWS's virtual-hosted
/// `https://BUCKET.s3.REGION.amazonaws.com/KEY`.
public struct S3Location: Sendable, Equatable, CustomStringConvertible {
    public let bucket: String
    public let prefix: String
    public let region: String
    public let endpoint: String?
    /// `AWS_CA_BUNDLE`: the certificates a TLS endpoint is checked against (nil: the system's).
    public let caBundle: String?
    public let accessKey: String
    public let secretKey: String

    /// `url` is `s3://BUCKET[/PREFIX]`; nil with why when it or the credentials are not usable.
    public static func parse(_ url: String, environment: [String: String]) -> Result<S3Location, S3ConfigurationError> {
        guard url.hasPrefix("s3://") else { return .failure(.init("\(url) is not an s3://BUCKET[/PREFIX] URL")) }
        let rest = url.dropFirst(5).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        let bucket = rest.first.map(String.init) ?? ""
        let prefix = rest.count > 1 ? String(rest[1]).trimmingSlashes : ""
        let bucketCharacters = Set("abcdefghijklmnopqrstuvwxyz0123456789.-")
        guard (3...63).contains(bucket.count), bucket.allSatisfy(bucketCharacters.contains) else {
            return .failure(.init("\"\(bucket)\" is not an S3 bucket name (3–63 of a–z, 0–9, '.', '-')"))
        }
        let keyCharacters = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/_.-")
        guard prefix.count <= 200, prefix.allSatisfy(keyCharacters.contains) else {
            return .failure(.init("the prefix \"\(prefix)\" may hold only A–Z, a–z, 0–9, '/', '_', '.', '-'"))
        }
        guard let key = environment["AWS_ACCESS_KEY_ID"], !key.isEmpty, let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
            return .failure(.init("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set for \(url)"))
        }
        let region = environment["AWS_REGION"].flatMap { $0.isEmpty ? nil : $0 } ?? environment["AWS_DEFAULT_REGION"] ?? "us-east-1"
        let endpoint = environment["AWS_ENDPOINT_URL_S3"] ?? environment["AWS_ENDPOINT_URL"]
        if let endpoint, !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://")) || endpoint.contains(where: { $0 == " " || $0 == "?" || $0 == "#" }) {
            return .failure(.init("AWS_ENDPOINT_URL_S3 \"\(endpoint)\" is not an http:// or https:// URL"))
        }
        guard region.allSatisfy(keyCharacters.contains), !key.contains(":") else {
            return .failure(.init("AWS_REGION or AWS_ACCESS_KEY_ID holds characters no S3 region or key has"))
        }
        return .success(S3Location(bucket: bucket, prefix: prefix, region: region, endpoint: endpoint.map { $0.trimmingSlashes },
                                   caBundle: environment["AWS_CA_BUNDLE"].flatMap { $0.isEmpty ? nil : $0 }, accessKey: key, secretKey: secret))
    }

    /// The same store, its TLS certificate checked against `file`.
    public func withCABundle(_ file: String) -> S3Location {
        S3Location(bucket: bucket, prefix: prefix, region: region, endpoint: endpoint, caBundle: file, accessKey: accessKey, secretKey: secretKey)
    }

    /// The URL this store is named by, without credentials.
    public var description: String { "s3://\(bucket)" + (prefix.isEmpty ? "" : "/\(prefix)") }

    func url(_ key: String) -> String {
        let path = (prefix.isEmpty ? "" : prefix + "/") + key
        if let endpoint { return "\(endpoint)/\(bucket)/\(path)" }
        return "https://\(bucket).s3.\(region).amazonaws.com/\(path)"
    }
}

public struct S3ConfigurationError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// An S3 request that got no usable answer: the store is down, slow past the timeout, or refused.
public struct ObjectStoreError: Error, CustomStringConvertible {
    public let description: String
}

/// An S3 bucket, spoken to with libcurl; libcurl signs every request (AWS Signature Version 4).
/// Keys are this service's own (`photos/…`), so they need no escaping.
public final class S3Bucket: Sendable {
    public let location: S3Location
    let timeoutMilliseconds: Int
    /// Largest object `get` reads.
    let maxObjectBytes: Int
    /// Idle libcurl handles, each with its open connections.
    private let idle = Mutex<[Client]>([])
    /// libcurl's easy interface holds a thread while a request runs: the requests run on these, and
    /// their callers await them.
    private let calls: BlockingCallThreads

    /// At most `connections` requests at once (`PHOTO_STORE_CONNECTIONS`), the others awaiting their turn.
    public init(_ location: S3Location, timeout: Double, maxObjectBytes: Int, connections: Int) {
        self.location = location
        timeoutMilliseconds = max(1, Int(timeout * 1000))
        self.maxObjectBytes = maxObjectBytes
        calls = BlockingCallThreads(name: "object-store", threads: connections)
    }

    deinit {
        for client in idle.withLock({ $0 }) { cafe_object_client_free(client.handle) }
    }

    public func put(_ key: String, _ bytes: [UInt8], contentType: String) async throws(ObjectStoreError) {
        let answer = try await request("PUT", key, body: bytes, headers: ["Content-Type: \(contentType)"])
        guard (200..<300).contains(answer.status) else { throw refusal("PUT", key, answer) }
    }

    /// The object's bytes; nil when the store has no such key.
    public func get(_ key: String) async throws(ObjectStoreError) -> [UInt8]? {
        let answer = try await request("GET", key, body: [], headers: [])
        if answer.status == 404 { return nil }
        guard (200..<300).contains(answer.status), !answer.truncated else { throw refusal("GET", key, answer) }
        return answer.body
    }

    /// Whether the store holds `key` (a HEAD request).
    public func exists(_ key: String) async throws(ObjectStoreError) -> Bool {
        let answer = try await request("HEAD", key, body: [], headers: [])
        if answer.status == 404 { return false }
        guard (200..<300).contains(answer.status) else { throw refusal("HEAD", key, answer) }
        return true
    }

    /// Removes the object; a key that is not there is no error (S3 answers 204 either way).
    public func delete(_ key: String) async throws(ObjectStoreError) {
        let answer = try await request("DELETE", key, body: [], headers: [])
        guard (200..<300).contains(answer.status) || answer.status == 404 else { throw refusal("DELETE", key, answer) }
    }

    private struct Answer: Sendable {
        let status: Int
        let body: [UInt8]
        let truncated: Bool
    }

    /// Unchecked `Sendable`: a curl handle serves one request at a time, taken from `idle` and put back after.
    private struct Client: @unchecked Sendable {
        let handle: OpaquePointer
    }

    private func request(_ method: String, _ key: String, body: [UInt8], headers: [String]) async throws(ObjectStoreError) -> Answer {
        try await calls.run { self.blockingRequest(method, key, body: body, headers: headers) }.get()
    }

    private func blockingRequest(_ method: String, _ key: String, body: [UInt8], headers: [String]) -> Result<Answer, ObjectStoreError> {
        guard let client = idle.withLock({ $0.popLast() }) ?? cafe_object_client_new().map(Client.init) else {
            return .failure(ObjectStoreError(description: "libcurl could not start a request"))
        }
        // curl 7.88 signs a body only when its digest is given; for no body, the empty string's.
        let lines = headers + ["x-amz-content-sha256: \(Self.sha256Hex(body))"]
        var result = cafe_object_result()
        let code = withCStrings(lines) { pointers in
            body.withUnsafeBytes { raw in
                cafe_object_request(client.handle, method, location.url(key), pointers, pointers.count, raw.baseAddress, raw.count,
                                    "aws:amz:\(location.region):s3", "\(location.accessKey):\(location.secretKey)", location.caBundle,
                                    timeoutMilliseconds, maxObjectBytes, &result)
            }
        }
        idle.withLock { $0.append(client) }
        defer { cafe_object_result_free(&result) }
        guard code == 0 else {
            let message = withUnsafeBytes(of: result.error) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
            return .failure(ObjectStoreError(description: "\(method) \(location.description)/\(key): \(message)"))
        }
        let bytes = result.body.map { Array(UnsafeBufferPointer(start: $0, count: result.body_length)) } ?? []
        return .success(Answer(status: result.status, body: bytes, truncated: result.truncated != 0))
    }

    private func refusal(_ method: String, _ key: String, _ answer: Answer) -> ObjectStoreError {
        let text = String(decoding: answer.body.prefix(300), as: UTF8.self)
        // S3's error document: `<Error><Code>NoSuchBucket</Code>…`.
        let code = text.split(separator: "<Code>", maxSplits: 1).dropFirst().first?.split(separator: "<").first
        return ObjectStoreError(description: "\(method) \(location.description)/\(key): HTTP \(answer.status)" + (code.map { " \($0)" } ?? ""))
    }

    static func sha256Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: Int(crypto_hash_sha256_BYTES))
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        let hex = Array("0123456789abcdef".utf8)
        return String(decoding: digest.flatMap { [hex[Int($0 >> 4)], hex[Int($0 & 15)]] }, as: UTF8.self)
    }
}

private func withCStrings<R>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> R) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    return body(copies.map { UnsafePointer($0) })
}

extension String {
    var trimmingSlashes: String {
        var s = Substring(self)
        while s.hasPrefix("/") { s = s.dropFirst() }
        while s.hasSuffix("/") { s = s.dropLast() }
        return String(s)
    }
}
