import Foundation
import HTTPKit

/// The browser client: `web/index.html` at `/` (and at `/admin`, where it opens the operator
/// console: the same page and scripts; the API decides who sees what) and the files of `web/assets/` at
/// `/assets/{name}`, read once at start (no build step: plain HTML, CSS and JavaScript modules).
/// The page may run only its own scripts (Content-Security-Policy), and everything revalidates
/// by ETag, so a deploy is seen on the next load. Each file is gzipped as it is loaded (`ResponseCompression`).
struct WebClientController: Sendable {
    struct Asset: Sendable {
        let body: ResponseBody
        let contentType: String
        let etag: String
    }

    let index: Asset?
    let assets: [String: Asset]

    static let pagePolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        + "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

    init(directory: URL?) {
        func load(_ url: URL) -> Asset? {
            guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
            let bytes = [UInt8](data)
            let type: String = switch url.pathExtension {
            case "html": "text/html; charset=utf-8"
            case "js": "text/javascript; charset=utf-8"
            case "css": "text/css; charset=utf-8"
            case "svg": "image/svg+xml"
            case "png": "image/png"
            case "json": "application/json; charset=utf-8"
            default: "application/octet-stream"
            }
            let body = ResponseBody(bytes)
            _ = body.gzipped   // compressed once, here: every answer to a client that takes gzip sends these bytes
            return Asset(body: body, contentType: type, etag: body.strongETag)
        }
        index = directory.flatMap { load($0.appendingPathComponent("index.html")) }
        var assets: [String: Asset] = [:]
        if let dir = directory?.appendingPathComponent("assets"),
           let names = try? FileManager.default.contentsOfDirectory(atPath: dir.path) {
            for name in names { assets[name] = load(dir.appendingPathComponent(name)) }
        }
        self.assets = assets
    }

    var routes: [Endpoint<CafeContext>] {
        [Endpoint("GET", "/", page), Endpoint("GET", "/admin", page), Endpoint("GET", "/assets/{name}", asset)]
    }

    func page(_ request: Request, _ context: CafeContext) throws -> Response {
        guard let index else { throw Problem.notFound("The web client is not installed (no web/index.html; set WEB_DIR).") }
        return Self.serve(index, request, extra: [("Content-Security-Policy", Self.pagePolicy), ("Referrer-Policy", "no-referrer")])
    }

    func asset(_ request: Request, _ context: CafeContext) throws -> Response {
        guard let asset = assets[try request.pathParameter("name")] else { throw Problem.notFound("No such file.") }
        return Self.serve(asset, request, extra: [])
    }

    static func serve(_ asset: Asset, _ request: Request, extra: [(String, String)]) -> Response {
        let headers = [("ETag", asset.etag), ("Cache-Control", "no-cache")] + extra
        if request.ifNoneMatch(asset.etag) { return Response(status: 304, headers: headers) }
        return Response(status: 200, headers: headers + [("Content-Type", asset.contentType)], body: asset.body)
    }
}
