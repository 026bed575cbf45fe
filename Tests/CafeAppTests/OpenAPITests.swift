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

    func testEveryReferencedSchemaExists() throws {
        let text = try call("GET", "/openapi.json").text
        let schemas = Set(((try call("GET", "/openapi.json").json()["components"] as? [String: Any])?["schemas"] as? [String: Any] ?? [:]).keys)
        let regex = try NSRegularExpression(pattern: "#/components/schemas/([A-Za-z]+)")
        let refs = regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
        XCTAssertFalse(refs.isEmpty)
        XCTAssertEqual(Set(refs).subtracting(schemas), [])
    }
}
