import CafeTestSupport
import Foundation
import XCTest

/// Input that once stopped the process or reached PostgreSQL's own checks as a 500. Each request
/// goes over a raw socket exactly as an attacker would send it; afterwards the service must still
/// answer, and nothing may have been written.
final class HostileInputTests: APITestCase {
    func assertStillServing(file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try call("GET", "/healthz").status, 200, "the service stopped answering", file: file, line: line)
    }

    /// `Content-Type: ;` trapped in `Request.mediaType` (an empty split) and took the process down.
    func testContentTypeWithoutAMediaTypeIsA415NotACrash() throws {
        for value in [";", " ; ", ";;", ";charset=utf-8", ""] {
            let r = try call("POST", "/v1/sessions", headers: ["Content-Type": value], body: Array("{}".utf8))
            XCTAssertTrue([400, 415].contains(r.status), "Content-Type '\(value)': \(r.status) \(r.text)")
            try assertStillServing()
        }
        let upload = try call("POST", "/v1/files", headers: ["Content-Type": ";"], body: [0x89, 0x50])
        XCTAssertTrue([400, 401, 415].contains(upload.status), upload.text)
        let parseUpload = try call("POST", "/parse/files/a.png", headers: ["Content-Type": ";", "X-Parse-Application-Id": "cafe"], body: [0x89])
        XCTAssertLessThan(parseUpload.status, 500, parseUpload.text)
        try assertStillServing()
    }

    /// Lengths are counted in code points, as the tables' CHECKs count them: 100 letters with
    /// combining accents are 200 code points, refused by the validator instead of by PostgreSQL.
    func testLengthsAreCountedAsTheDatabaseCountsThem() throws {
        let admin = try adminToken()
        let accented = String(repeating: "e\u{301}", count: 100)
        let cafe = try call("POST", "/v1/cafes", json: try jsonString(["name": accented, "catchCopy": "", "introduction": ""]), token: admin)
        assertProblem(cafe, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(cafe), ["name"])
        let user = try call("POST", "/v1/users", json: try jsonString(["username": String(repeating: "e\u{301}", count: 39),
                                                                        "password": "correct horse battery"]))
        assertProblem(user, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(user), ["username"])
        XCTAssertEqual(try count("cafes"), 0)
        // The same text at the limit is accepted, and stored whole.
        let fits = try call("POST", "/v1/cafes", json: try jsonString(["name": String(repeating: "e\u{301}", count: 50),
                                                                        "catchCopy": "", "introduction": ""]), token: admin)
        XCTAssertEqual(fits.status, 201, fits.text)
    }

    /// A NUL in a GET `where` reached PostgreSQL (22021) and a year-0000 date failed its range
    /// check (22008): both were 500s. They are Parse's validation errors now, anonymous (in a
    /// transaction with a statement timeout) and with a session (each read on the statement loop),
    /// where a NUL must not cut the value short instead.
    func testParseQueriesThatPostgreSQLWouldRefuseAre400() throws {
        let anonymous = ["X-Parse-Application-Id": "cafe"]
        let session = anonymous.merging(["X-Parse-Session-Token": try signUp("nul-reader").token]) { $1 }
        for condition in [#"{"CafeName":"a\u0000b"}"#, #"{"publishDate":{"$gt":"\u0000"}}"#,
                          #"{"createdAt":{"$gt":{"__type":"Date","iso":"0000-01-01T00:00:00Z"}}}"#,
                          #"{"updatedAt":{"$lt":{"__type":"Date","iso":"0000-12-31T23:59:59.999Z"}}}"#] {
            let encoded = condition.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            for headers in [anonymous, session] {
                let r = try call("GET", "/parse/classes/CafeMaster?where=\(encoded)", headers: headers)
                XCTAssertEqual(r.status, 400, "\(condition), session \(headers.count > 1): \(r.text)")
                XCTAssertNotNil(r.json()["code"] as? Int, r.text)
            }
        }
        try assertStillServing()
    }

    /// `%00` once cut the decoded target short: `q=a%00b` searched for "a", `/v1/cafes/1%00x` read cafe 1,
    /// and a write to such a path went to the shorter one. Every such target is a 400 now, in the
    /// route's own format, and nothing is written.
    func testATargetHoldingAnEncodedNULIsRefusedWhole() throws {
        let admin = try adminToken()
        for target in ["/v1/cafes?q=a%00b", "/v1/cafes?sort=rating%00x", "/v1/cafes/1%00x", "/v1/cafes/1/comments%00"] {
            assertProblem(try call("GET", target), 400, "invalid_target")
        }
        assertProblem(try call("POST", "/v1/cafes%00", json: #"{"name":"A","catchCopy":"","introduction":""}"#, token: admin), 400, "invalid_target")
        XCTAssertEqual(try count("cafes"), 0)
        let parse = try call("GET", "/parse/classes/CafeMaster?where=%7B%22CafeName%22%3A%22a%00%22%7D", headers: ["X-Parse-Application-Id": "cafe"])
        XCTAssertEqual(parse.status, 400, parse.text)
        XCTAssertEqual(parse.json()["code"] as? Int, 102, parse.text)
        try assertStillServing()
    }

    /// The safety net under every validator: a value only the database refuses (here a CHECK the
    /// validators do not know about) is a 400 naming the field, and writes nothing.
    func testAValueOnlyTheDatabaseRefusesIsA400NamingTheField() throws {
        try pool.query("ALTER TABLE cafes ADD CONSTRAINT cafes_catch_copy_check2 CHECK (catch_copy <> 'forbidden')")
        try pool.query("""
            ALTER TABLE cafes DROP CONSTRAINT cafes_introduction_check,
                ADD CONSTRAINT cafes_introduction_check CHECK (char_length(introduction) <= 5000 AND introduction <> 'nope')
            """)
        let admin = try adminToken()
        let r = try call("POST", "/v1/cafes", json: try jsonString(["name": "A", "catchCopy": "", "introduction": "nope"]), token: admin)
        assertProblem(r, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(r), ["introduction"])
        let unnamed = try call("POST", "/v1/cafes", json: try jsonString(["name": "A", "catchCopy": "forbidden", "introduction": ""]), token: admin)
        assertProblem(unnamed, 400, "validation_failed")
        XCTAssertEqual(fieldErrors(unnamed), ["body"])
        XCTAssertEqual(try count("cafes"), 0)
        let viaParse = try call("POST", "/parse/classes/CafeMaster", json: #"{"name":"A","IntroduceDetail":"nope"}"#,
                                headers: ["X-Parse-Application-Id": "cafe", "X-Parse-Session-Token": admin])
        XCTAssertEqual(viaParse.status, 400, viaParse.text)
        XCTAssertEqual(viaParse.json()["code"] as? Int, 142, viaParse.text)
        XCTAssertEqual(try count("cafes"), 0)
    }

    /// Requests that break framing or encoding in every header the service reads: never a 5xx
    /// (but 501/505 for what it does not speak), and the service keeps answering.
    func testHostileHeadersAndFramingNeverAnswer5xx() throws {
        let token = try signUp("hostile").token
        let values = ["", ";", ",", " ", "=", "\u{7F}", "Bearer", "Bearer ", "W/", "\"", String(repeating: ";", count: 4000),
                      "\u{3000}", "%00", "-1", "99999999999999999999999"]
        let headers = ["Content-Type", "Authorization", "X-Parse-Application-Id", "X-Parse-Session-Token", "X-Parse-Request-Id",
                       "Idempotency-Key", "If-None-Match", "Origin", "X-Request-Id", "Host", "Content-Length"]
        for name in headers {
            for value in values {
                var h = ["Authorization": "Bearer \(token)", "X-Parse-Application-Id": "cafe"]
                h[name] = value
                for (method, path, body) in [("POST", "/v1/cafes/1/comments", #"{"detail":"x","star":2}"#),
                                             ("GET", "/v1/files/1", ""), ("POST", "/parse/classes/CafeMaster", #"{"_method":"GET"}"#)] {
                    let client = try RawHTTPClient(port: app.server.port, timeoutSeconds: 1)
                    var head = "\(method) \(path) HTTP/1.1\r\n"
                    if name != "Host" { head += "Host: x\r\n" }
                    for (k, v) in h where !(k == "Content-Length") { head += "\(k): \(v)\r\n" }
                    head += "Content-Length: \(name == "Content-Length" ? value : String(body.utf8.count))\r\nConnection: close\r\n\r\n"
                    try? client.send(Array(head.utf8) + Array(body.utf8))
                    if let status = try? client.readResponse().status {
                        XCTAssertFalse(status >= 500 && ![501, 503, 505].contains(status), "\(name): '\(value)' on \(method) \(path) → \(status)")
                    }
                }
            }
        }
        for raw in ["GET /v1/cafes HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                    "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
                    "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n",
                    "GET /v1/cafes?cursor=%ff%fe&limit=-0 HTTP/1.1\nHost: x\n\n",
                    "GET //parse//classes//CafeMaster/..?where=%7B HTTP/1.1\r\nHost: x\r\nX-Parse-Application-Id: cafe\r\n\r\n",
                    "GET /v1/cafes/%00 HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/cafes/%zz HTTP/1.1\r\nHost: x\r\n\r\n"] {
            let client = try RawHTTPClient(port: app.server.port, timeoutSeconds: 1)
            try? client.send(raw)
            if let status = try? client.readResponse().status {
                XCTAssertFalse(status >= 500 && ![501, 503, 505].contains(status), "\(raw.debugDescription) → \(status)")
            }
        }
        try assertStillServing()
    }
}
