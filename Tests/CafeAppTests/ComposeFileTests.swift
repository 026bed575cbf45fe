import CafeTestSupport
import Foundation
import XCTest

/// There is no Docker engine here: docker-compose.yml is checked by parsing it, and by the real
/// `docker-compose config` (PyPI's docker-compose, which `make test` installs into .build/compose-venv).
final class ComposeFileTests: XCTestCase {
    /// As shipped, nothing starts without the database password, and the message names the variable.
    func testComposeRefusesToStartWithoutItsSecrets() throws {
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "POSTGRES_PASSWORD")
        let refused = try Self.composeConfig(environment)
        XCTAssertNotEqual(refused.status, 0, refused.output)
        XCTAssertTrue(refused.output.contains("set POSTGRES_PASSWORD"), refused.output)

        environment["POSTGRES_PASSWORD"] = "a-secret_1"
        let resolved = try Self.composeConfig(environment)
        XCTAssertEqual(resolved.status, 0, resolved.output)
        let services = try XCTUnwrap(try Self.json(resolved.output)["services"] as? [String: Any])
        let api = try XCTUnwrap(services["api"] as? [String: Any])
        let apiEnvironment = try XCTUnwrap(api["environment"] as? [String: Any])
        XCTAssertEqual(apiEnvironment["DATABASE_URL"] as? String, "postgres://cafe:a-secret_1@db:5432/cafe")
        XCTAssertEqual(apiEnvironment["DATABASE_READ_URLS"] as? String, "postgres://cafe:a-secret_1@db-standby:5432/cafe")
        // Starts when the primary is healthy; a standby outage only sends the reads to the primary.
        XCTAssertEqual(Set(((api["depends_on"] as? [String: Any]) ?? [:]).keys), ["db"])
        XCTAssertFalse(resolved.output.contains("change-me"), "no shipped default for a secret")
        // The balancer and the API take the same photo size.
        let lb = try XCTUnwrap(services["lb"] as? [String: Any])
        XCTAssertEqual((lb["environment"] as? [String: Any])?["PHOTO_MAX_BYTES"] as? String, apiEnvironment["PHOTO_MAX_BYTES"] as? String)
    }

    /// The balancer's body limit follows the service's: above its MAX_BODY_BYTES (PHOTO_MAX_BYTES + 64 KiB
    /// unless set), so every body the service refuses reaches it and is refused in the service's format.
    func testTheBalancersBodyLimitFollowsThePhotoLimit() throws {
        func limit(_ environment: [String: String]) throws -> Int {
            let render = try ChildProcess(repositoryRoot.appendingPathComponent("deploy/nginx-render.sh").path, [], environment: environment)
            XCTAssertEqual(render.waitForExit(timeout: 10), 0, render.output)
            let line = try XCTUnwrap(render.output.split(separator: "\n").first { $0.contains("client_max_body_size") })
            return try XCTUnwrap(Int(line.split(separator: " ").last?.dropLast() ?? ""))
        }
        let path = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        XCTAssertEqual(try limit(path), 25 * 1024 * 1024 + 64 * 1024 + 1024 * 1024)
        XCTAssertEqual(try limit(path.merging(["PHOTO_MAX_BYTES": "10485760"]) { $1 }), 10 * 1024 * 1024 + 64 * 1024 + 1024 * 1024)
        XCTAssertEqual(try limit(path.merging(["MAX_BODY_BYTES": "50000000"]) { $1 }), 50_000_000 + 1024 * 1024)
    }

    /// `docker-compose config` on the shipped file: its exit status, and what it printed (the resolved
    /// file turned into JSON by the same venv's PyYAML when it succeeded, else its error).
    private static func composeConfig(_ environment: [String: String]) throws -> (status: Int32?, output: String) {
        let bin = repositoryRoot.appendingPathComponent(".build/compose-venv/bin").path
        guard FileManager.default.isExecutableFile(atPath: bin + "/docker-compose") else {
            throw RawHTTPClient.Failure(description: "\(bin)/docker-compose is missing: make test installs PyPI's docker-compose there")
        }
        let script = """
            set -o pipefail
            "$BIN/docker-compose" -f docker-compose.yml config 2>&1 | "$BIN/python" -c '
            import json, sys, yaml
            text = sys.stdin.read()
            try:
                print(json.dumps(yaml.safe_load(text)))
            except Exception:
                print(text)
            '
            """
        let config = try ChildProcess("/bin/bash", ["-c", script], environment: environment.merging(["BIN": bin]) { $1 },
                                      directory: repositoryRoot.path)
        let status = config.waitForExit(timeout: 60)
        config.waitForOutputEnd(timeout: 5)
        return (status, config.output)
    }

    private static func json(_ text: String) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], text)
    }

    func testServicesCommandsAndSettingsAreThere() throws {
        let text = try String(contentsOf: repositoryRoot.appendingPathComponent("docker-compose.yml"), encoding: .utf8)
        let services = try XCTUnwrap(try MiniYAML.parse(text)["services"] as? [String: Any])
        XCTAssertEqual(Set(services.keys), ["db", "db-standby", "migrate", "api", "worker", "lb", "objects"])
        // The optional object store for photos starts only with its profile; api and worker name it.
        let objects = try XCTUnwrap(services["objects"] as? [String: Any])
        XCTAssertEqual(objects["profiles"] as? [String], ["s3"])
        XCTAssertTrue(FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent("deploy/objects.sh").path))
        for name in ["api", "worker"] {
            let env = (services[name] as? [String: Any])?["environment"] as? [String: Any]
            XCTAssertEqual(env?["PHOTO_STORE"] as? String, "${PHOTO_STORE:-postgres}", name)
            XCTAssertEqual(env?["AWS_ENDPOINT_URL_S3"] as? String, "${AWS_ENDPOINT_URL_S3:-http://objects:8333}", name)
        }

        let db = try XCTUnwrap(services["db"] as? [String: Any])
        XCTAssertEqual(db["image"] as? String, "postgis/postgis:15-3.3")
        XCTAssertNotNil(db["healthcheck"] as? [String: Any])
        XCTAssertEqual((db["volumes"] as? [Any])?.count, 2, "the data and the script that admits the standby")

        func command(_ name: String) -> [String] { (services[name] as? [String: Any])?["command"] as? [String] ?? [] }
        XCTAssertEqual(command("migrate").first, "migrate")
        XCTAssertEqual(command("api").first, "serve")
        XCTAssertEqual(command("worker").first, "worker")
        XCTAssertEqual((services["migrate"] as? [String: Any])?["profiles"] as? [String], ["tools"], "migrate does not start with `up`")
        for name in ["migrate", "api", "worker"] {
            let env = (services[name] as? [String: Any])?["environment"] as? [String: Any]
            XCTAssertTrue((env?["DATABASE_URL"] as? String)?.hasPrefix("postgres://") ?? false, name)
            let dependsOn = (services[name] as? [String: Any])?["depends_on"] as? [String: Any]
            XCTAssertNotNil(dependsOn?["db"], name)
        }
        XCTAssertNil((services["api"] as? [String: Any])?["container_name"], "a fixed container name would prevent replicas")

        // Read replicas: the standby streams from db, the API reads from it, nginx is in front.
        let standby = try XCTUnwrap(services["db-standby"] as? [String: Any])
        XCTAssertEqual(standby["image"] as? String, "postgis/postgis:15-3.3")
        XCTAssertTrue(command("db-standby").joined(separator: " ").contains("pg_basebackup -h db -U cafe -D $$PGDATA -R"))
        XCTAssertNotNil((standby["depends_on"] as? [String: Any])?["db"])
        let apiEnvironment = (services["api"] as? [String: Any])?["environment"] as? [String: Any]
        XCTAssertTrue((apiEnvironment?["DATABASE_READ_URLS"] as? String)?.hasSuffix("@db-standby:5432/cafe") ?? false)
        XCTAssertNil((services["worker"] as? [String: Any])?["environment"].flatMap { ($0 as? [String: Any])?["DATABASE_READ_URLS"] },
                     "the worker writes: primary only")
        let lb = try XCTUnwrap(services["lb"] as? [String: Any])
        XCTAssertEqual(lb["ports"] as? [String], ["8080:8080"])
        let nginx = try String(contentsOf: repositoryRoot.appendingPathComponent("deploy/nginx.conf"), encoding: .utf8)
        XCTAssertTrue(nginx.contains("server api:8080"))
        // The API believes forwarded addresses from the balancer alone, whose address is fixed, and
        // the balancer replaces what a client wrote there; absolute URLs come from PUBLIC_URL.
        let lbAddress = ((lb["networks"] as? [String: Any])?["default"] as? [String: Any])?["ipv4_address"] as? String
        XCTAssertNotNil(lbAddress)
        XCTAssertEqual(apiEnvironment?["TRUSTED_PROXIES"] as? String, lbAddress)
        XCTAssertNotNil(apiEnvironment?["PUBLIC_URL"] as? String)
        XCTAssertTrue(nginx.contains("proxy_set_header X-Forwarded-For $remote_addr;"))
        let replication = try String(contentsOf: repositoryRoot.appendingPathComponent("deploy/db-replication.sh"), encoding: .utf8)
        XCTAssertTrue(replication.contains("host replication cafe"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: repositoryRoot.appendingPathComponent("Dockerfile").path))
    }

    /// The image has no checkout to find files in: it copies each directory the service reads at
    /// run time and says where it is.
    func testTheImageCarriesEveryFileTheServiceReads() throws {
        let dockerfile = try String(contentsOf: repositoryRoot.appendingPathComponent("Dockerfile"), encoding: .utf8)
        for (directory, setting) in [("migrations", "MIGRATIONS_DIR=/app/migrations"), ("web", "WEB_DIR=/app/web"),
                                     ("openapi", "OPENAPI_FILE=/app/openapi/openapi.json")] {
            XCTAssertTrue(dockerfile.contains("COPY \(directory) /app/\(directory)"), directory)
            XCTAssertTrue(dockerfile.contains(setting), setting)
        }
    }

    func testMiniYAMLParsesTheSubsetItClaims() throws {
        let doc = try MiniYAML.parse("""
            # comment
            a:
              b: "quoted # not a comment"
              c: ["x", "y"]
              d:
                - one
                - "two"
            e: plain
            """)
        XCTAssertEqual((doc["a"] as? [String: Any])?["b"] as? String, "quoted # not a comment")
        XCTAssertEqual((doc["a"] as? [String: Any])?["c"] as? [String], ["x", "y"])
        XCTAssertEqual((doc["a"] as? [String: Any])?["d"] as? [String], ["one", "two"])
        XCTAssertEqual(doc["e"] as? String, "plain")
    }
}

/// Block mappings, block sequences of scalars, flow sequences of scalars, comments, quoted scalars:
/// the YAML subset our compose file is written in (anything else is an error, not a guess).
enum MiniYAML {
    struct Invalid: Error { let line: Int; let reason: String }

    static func parse(_ text: String) throws -> [String: Any] {
        var lines: [(indent: Int, text: String, number: Int)] = []
        for (i, raw) in text.components(separatedBy: "\n").enumerated() {
            let stripped = stripComment(raw)
            guard !stripped.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            let indent = stripped.prefix { $0 == " " }.count
            lines.append((indent, stripped.trimmingCharacters(in: .whitespaces), i + 1))
        }
        var index = 0
        return try mapping(lines, &index, indent: 0)
    }

    private static func mapping(_ lines: [(indent: Int, text: String, number: Int)], _ i: inout Int, indent: Int) throws -> [String: Any] {
        var result: [String: Any] = [:]
        while i < lines.count, lines[i].indent == indent {
            let line = lines[i]
            guard let colon = line.text.firstIndex(of: ":") else { throw Invalid(line: line.number, reason: "expected key: value") }
            let key = unquote(String(line.text[..<colon]))
            let rest = line.text[line.text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            i += 1
            if !rest.isEmpty {
                result[key] = try scalarOrFlow(rest, line: line.number)
            } else if i < lines.count, lines[i].indent > indent {
                if lines[i].text.hasPrefix("- ") {
                    var items: [Any] = []
                    let childIndent = lines[i].indent
                    while i < lines.count, lines[i].indent == childIndent, lines[i].text.hasPrefix("- ") {
                        items.append(try scalarOrFlow(String(lines[i].text.dropFirst(2)), line: lines[i].number))
                        i += 1
                    }
                    result[key] = items
                } else {
                    result[key] = try mapping(lines, &i, indent: lines[i].indent)
                }
            } else {
                result[key] = NSNull()
            }
        }
        if i < lines.count, lines[i].indent > indent { throw Invalid(line: lines[i].number, reason: "unexpected indentation") }
        return result
    }

    private static func scalarOrFlow(_ text: String, line: Int) throws -> Any {
        guard text.hasPrefix("[") else { return unquote(text) }
        guard text.hasSuffix("]") else { throw Invalid(line: line, reason: "unterminated flow sequence") }
        return text.dropFirst().dropLast().split(separator: ",").map { unquote($0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func unquote(_ s: String) -> String {
        if s.count >= 2, (s.hasPrefix("\"") && s.hasSuffix("\"")) || (s.hasPrefix("'") && s.hasSuffix("'")) {
            return String(s.dropFirst().dropLast())
        }
        return s
    }

    private static func stripComment(_ line: String) -> String {
        var quote: Character?
        for (offset, ch) in line.enumerated() {
            if let q = quote { if ch == q { quote = nil }; continue }
            if ch == "\"" || ch == "'" { quote = ch }
            if ch == "#" && (offset == 0 || line[line.index(line.startIndex, offsetBy: offset - 1)] == " ") {
                return String(line.prefix(offset))
            }
        }
        return line
    }
}
