import CafeTestSupport
import Foundation
import XCTest

/// There is no Docker engine here, so docker-compose.yml is checked by parsing it.
final class ComposeFileTests: XCTestCase {
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
        XCTAssertEqual(db["image"] as? String, "postgres:15")
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
        XCTAssertEqual(standby["image"] as? String, "postgres:15")
        XCTAssertTrue(command("db-standby").joined(separator: " ").contains("pg_basebackup -h db -U cafe -D $$PGDATA -R"))
        XCTAssertNotNil((standby["depends_on"] as? [String: Any])?["db"])
        let apiEnvironment = (services["api"] as? [String: Any])?["environment"] as? [String: Any]
        XCTAssertEqual(apiEnvironment?["DATABASE_READ_URLS"] as? String, "postgres://cafe:cafe@db-standby:5432/cafe")
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
