import CafeTestSupport
import Foundation
import XCTest

/// docs/configuration.md is the operator's manual: every environment variable the service reads is named
/// there, and every variable named in its tables is one the service reads.
final class ConfigurationDocumentationTests: XCTestCase {
    /// Variables read from the environment by the service's code (not the tests' support), by their
    /// two forms: `environment["NAME"]` and the `Configuration` reader's `env.kind("NAME", …)`.
    private func variablesTheCodeReads() throws -> Set<String> {
        let sources = repositoryRoot.appendingPathComponent("Sources")
        let pattern = try NSRegularExpression(pattern: #"(?:environment\["|env\.[a-zA-Z]+\(")([A-Z][A-Z0-9_]{2,})""#)
        var names: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift", !file.path.contains("/CafeTestSupport/") else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
            }
        }
        names.remove("PATH")
        return names
    }

    func testEveryVariableTheCodeReadsIsDocumented() throws {
        let page = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let read = try variablesTheCodeReads()
        XCTAssertGreaterThan(read.count, 80, "the scan finds the variables: \(read.sorted())")
        XCTAssertTrue(read.isSuperset(of: ["DATABASE_URL", "PHOTO_MAX_BYTES", "AWS_SECRET_ACCESS_KEY", "PG_BINDIR"]), "\(read.sorted())")
        let undocumented = read.filter { !page.contains("`\($0)`") }
        XCTAssertEqual(undocumented.sorted(), [], "read by the code, not named in docs/configuration.md")
    }

    func testEveryServiceVariableTheTablesNameIsRead() throws {
        let page = try String(contentsOf: repositoryRoot.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        let read = try variablesTheCodeReads()
        // The first column of the service's tables (the make targets' settings are the scripts', not the service's).
        let serviceTables = page.components(separatedBy: "## The make targets' settings").first ?? page
        var named: Set<String> = []
        for line in serviceTables.split(separator: "\n") where line.hasPrefix("| `") {
            let cell = line.dropFirst(2).prefix { $0 != "|" }
            for part in cell.split(separator: "/") { named.insert(part.trimmingCharacters(in: CharacterSet(charactersIn: " `"))) }
        }
        XCTAssertGreaterThan(named.count, 80)
        XCTAssertEqual(named.subtracting(read).sorted(), [], "named in docs/configuration.md, read by no code")
    }
}
