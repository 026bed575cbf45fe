@testable import CafeApp
import CafeDomain
import CafeTestSupport
import Foundation
import XCTest

final class OpenAPITests: APITestCase {
    func testEveryRouteIsDocumentedAndEveryDocumentedOperationIsRouted() throws {
        let r = try call("GET", "/openapi.json")
        XCTAssertEqual(r.status, 200)
        let doc = r.json()
        XCTAssertEqual(doc["openapi"] as? String, "3.1.0")
        let paths = try XCTUnwrap(doc["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, item) in paths {
            for method in ["get", "post", "put", "patch", "delete"] where item[method] != nil {
                documented.insert("\(method.uppercased()) \(path)")
            }
        }
        let routed = Set(app.router.routes.map { "\($0.method) \($0.pattern)" })
        XCTAssertEqual(routed.subtracting(documented), [], "routes missing from openapi.json")
        XCTAssertEqual(documented.subtracting(routed), [], "documented operations with no route")
    }

    /// A route declares a photo-sized body exactly where the document says it takes image bytes.
    func testUploadRoutesAreTheDocumentsImageBodies() throws {
        let paths = try XCTUnwrap(try call("GET", "/openapi.json").json()["paths"] as? [String: [String: Any]])
        var documented = Set<String>()
        for (path, item) in paths {
            for (method, operation) in item {
                let content = ((operation as? [String: Any])?["requestBody"] as? [String: Any])?["content"] as? [String: Any] ?? [:]
                if content.keys.contains(where: { $0.hasPrefix("image/") }) { documented.insert("\(method.uppercased()) \(path)") }
            }
        }
        let declared = Set(app.router.routes.filter { $0.traits.lane == .upload }.map { "\($0.method) \($0.pattern)" })
        XCTAssertEqual(declared, documented)
    }

    func testEveryReferencedSchemaExists() throws {
        let text = try call("GET", "/openapi.json").text
        let schemas = Set(((try call("GET", "/openapi.json").json()["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]).keys)
        let regex = try NSRegularExpression(pattern: "#/components/schemas/([A-Za-z]+)")
        let refs = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
        XCTAssertFalse(refs.isEmpty)
        XCTAssertEqual(Set(refs).subtracting(schemas), [])
    }

    /// The document is edited by hand: its length and range limits must say what the validators do.
    func testDocumentedLimitsAreTheValidationRules() throws {
        let doc = try call("GET", "/openapi.json").json()
        let paths = try XCTUnwrap(doc["paths"] as? [String: [String: Any]])
        func property(_ path: String, _ method: String, _ field: String) -> [String: Any] {
            let operation = paths[path]?[method] as? [String: Any]
            let body = ((operation?["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"] as? [String: Any]
            return ((body?["schema"] as? [String: Any])?["properties"] as? [String: Any])?[field] as? [String: Any] ?? [:]
        }
        func assertLength(_ path: String, _ method: String, _ field: String, _ range: ClosedRange<Int>, line: UInt = #line) {
            let schema = property(path, method, field)
            XCTAssertEqual(schema["maxLength"] as? Int, range.upperBound, "\(method) \(path) \(field) maxLength", line: line)
            XCTAssertEqual(schema["minLength"] as? Int ?? 0, range.lowerBound, "\(method) \(path) \(field) minLength", line: line)
        }
        func assertRange(_ path: String, _ method: String, _ field: String, _ range: ClosedRange<Int>, line: UInt = #line) {
            let schema = property(path, method, field)
            XCTAssertEqual(schema["minimum"] as? Int, range.lowerBound, "\(method) \(path) \(field) minimum", line: line)
            XCTAssertEqual(schema["maximum"] as? Int, range.upperBound, "\(method) \(path) \(field) maximum", line: line)
        }
        assertLength("/v1/users", "post", "username", AccountRules.usernameLength)
        assertLength("/v1/users", "post", "password", AccountRules.passwordLength)
        assertRange("/v1/users", "post", "age", AccountRules.ageRange)
        for (path, method) in [("/v1/cafes", "post"), ("/v1/cafes/{id}", "patch")] {
            assertLength(path, method, "name", CafeRules.nameLength)
            assertLength(path, method, "catchCopy", CafeRules.catchCopyLength)
            assertLength(path, method, "introduction", CafeRules.introductionLength)
            assertLength(path, method, "publishDate", CafeRules.publishDateLength)
        }
        for (path, method) in [("/v1/cafes/{id}/comments", "post"), ("/v1/comments/{id}", "patch")] {
            assertLength(path, method, "detail", CommentRules.detailLength)
            assertRange(path, method, "star", Star.range)
        }
    }
}
