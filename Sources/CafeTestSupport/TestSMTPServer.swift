#if canImport(Glibc)
import Glibc
#endif
import CSystem
import Foundation

/// A real SMTP server for the tests: PyPI's aiosmtpd (`tools/test-smtp-server.py`, installed by
/// `make test`) on a loopback port, as the suite starts PostgreSQL; it dies with the test process.
/// Every message it accepts is a file in `directory`; `stop()` and `start()` take it down and bring it
/// back on the same port (a mail server that is away for a while).
/// Unchecked `Sendable`: `pid` changes only in `start()` and `stop()`, which a test calls from its own thread.
public final class TestSMTPServer: @unchecked Sendable {
    public enum Security: String, Sendable { case none, starttls, implicit }

    public let security: Security
    /// `user:password` the server requires, if any.
    public let login: String?
    public let port: Int
    public let directory: URL
    private var pid: pid_t = 0

    public init(security: Security = .none, login: String? = nil) {
        self.security = security
        self.login = login
        port = TestObjectStore.freePort()
        directory = TestCluster.root.appendingPathComponent("smtp-\(getpid())-\(port)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        start()
    }

    deinit { stop() }

    /// `SMTP_URL` for this server (`smtps://` when it is TLS from the start).
    public var url: String {
        let scheme = security == .implicit ? "smtps" : "smtp"
        return "\(scheme)://\(login.map { "\($0)@" } ?? "")127.0.0.1:\(port)"
    }

    /// What the service needs to trust the server's self-signed certificate.
    public var environment: [String: String] {
        var env = ["SMTP_URL": url]
        if security != .none { env["SMTP_CA_FILE"] = Self.certificate.cert }
        return env
    }

    public func start() {
        guard pid == 0 else { return }
        var arguments = ["/usr/bin/env", "python3", repositoryRoot.appendingPathComponent("tools/test-smtp-server.py").path,
                         "--dir", directory.path, "--port", String(port), "--tls", security.rawValue]
        if security != .none { arguments += ["--cert", Self.certificate.cert, "--key", Self.certificate.key] }
        if let login { arguments += ["--auth", login.removingPercentEncoding ?? login] }
        let logPath = directory.appendingPathComponent("server.log").path
        let log = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = arguments.map { strdup($0) } + [nil]
        pid = cafe_spawn(arguments[0], argv, -1, -1, log, 1)
        argv.forEach { free($0) }
        close(log)
        precondition(pid > 0, "the test SMTP server did not start")
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: logPath, encoding: .utf8), text.contains("ready ") { return }
            if waitpid(pid, nil, WNOHANG) == pid {
                pid = 0
                preconditionFailure("the test SMTP server exited: \((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "") (pip install aiosmtpd; make test does)")
            }
            usleep(50_000)
        }
        preconditionFailure("the test SMTP server did not get ready in 20 s")
    }

    /// Takes the server down: connections are refused until `start()`.
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGKILL)
        waitpid(pid, nil, 0)
        pid = 0
    }

    /// Every message received so far, oldest first.
    public func messages() -> [ReceivedMail] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".eml") }.sorted()
        return names.compactMap { name in
            (try? Data(contentsOf: directory.appendingPathComponent(name))).map { ReceivedMail(raw: String(decoding: $0, as: UTF8.self)) }
        }
    }

    /// The messages once there are at least `count` (or what there is after `timeout` seconds).
    public func waitForMessages(_ count: Int, timeout: Double = 15) -> [ReceivedMail] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let all = messages()
            if all.count >= count { return all }
            usleep(50_000)
        }
        return messages()
    }

    /// A self-signed certificate for 127.0.0.1, made once per test process with openssl.
    static let certificate: (cert: String, key: String) = {
        let dir = TestCluster.root.appendingPathComponent("smtp-tls-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let cert = dir.appendingPathComponent("cert.pem").path, key = dir.appendingPathComponent("key.pem").path
        _ = toolOutput("/usr/bin/openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
                                            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"])
        precondition(FileManager.default.fileExists(atPath: cert), "openssl did not make a certificate")
        return (cert, key)
    }()
}

/// A message as the test server received it: the envelope, whether TLS carried it, the decoded
/// subject (RFC 2047) and body (base64), and the links in it.
public struct ReceivedMail: Sendable {
    public let headers: [String: String]
    public let subject: String
    public let body: String

    init(raw: String) {
        let parts = raw.components(separatedBy: "\r\n\r\n")
        var headers: [String: String] = [:]
        var last: String?
        for line in (parts.first ?? "").components(separatedBy: "\r\n") {
            if line.hasPrefix(" ") || line.hasPrefix("\t"), let last {
                headers[last, default: ""] += line.trimmingCharacters(in: .whitespaces)
            } else if let colon = line.firstIndex(of: ":") {
                let name = line[..<colon].lowercased()
                headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                last = name
            }
        }
        self.headers = headers
        subject = Self.decodeWords(headers["subject"] ?? "")
        let text = parts.dropFirst().joined(separator: "\r\n\r\n")
        if headers["content-transfer-encoding"]?.lowercased() == "base64",
           let data = Data(base64Encoded: text.components(separatedBy: .whitespacesAndNewlines).joined()) {
            body = String(decoding: data, as: UTF8.self)
        } else {
            body = text
        }
    }

    public var envelopeTo: String { headers["x-envelope-to"] ?? "" }
    public var overTLS: Bool { headers["x-tls"] == "yes" }

    /// Every http(s) link in the body, in order.
    public var links: [String] {
        body.split(whereSeparator: { $0.isWhitespace }).map(String.init).filter { $0.hasPrefix("http://") || $0.hasPrefix("https://") }
    }

    /// The token a link carries: its last path segment.
    public var firstLinkToken: String? { links.first.flatMap { $0.split(separator: "/").last.map(String.init) } }

    static func decodeWords(_ header: String) -> String {
        var out = ""
        for word in header.components(separatedBy: "=?").dropFirst().isEmpty ? [header] : header.components(separatedBy: "?=") {
            guard let start = word.range(of: "=?UTF-8?B?", options: .caseInsensitive) else { out += word.trimmingCharacters(in: .whitespaces); continue }
            let encoded = String(word[start.upperBound...])
            if let data = Data(base64Encoded: encoded) { out += String(decoding: data, as: UTF8.self) }
        }
        return out
    }
}
