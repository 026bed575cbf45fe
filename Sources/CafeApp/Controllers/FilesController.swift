import CafeDomain
import CafeStore
import HTTPKit

/// Photo upload and download. The bytes must really be the declared image format.
struct FilesController: Sendable {
    let files: FileRepository
    let auth: Authenticator

    var routes: [Endpoint] {
        [
            Endpoint("POST", "/v1/files", upload).lane(.upload),
            Endpoint("GET", "/v1/files/{id}", download).publicRead(),
        ]
    }

    func upload(_ request: Request) throws -> Response {
        let user = try auth.user(request)
        guard let declared = request.mediaType.flatMap(ImageFormat.init(rawValue:)) else {
            throw Problem.unsupportedMediaType("Upload image/png, image/jpeg, image/webp or image/gif bytes with that Content-Type.")
        }
        guard request.body.count <= ImageFormat.maxBytes else { throw Problem.payloadTooLarge(limit: ImageFormat.maxBytes) }
        guard !request.body.isEmpty else {
            throw Problem.validation([.init(field: "body", message: "is empty; send the image bytes")])
        }
        guard ImageFormat.detect(request.body) == declared else {
            throw Problem.unsupportedMediaType("The bytes are not a valid \(declared.contentType) image.")
        }
        let stored = try files.create(owner: user.id, format: declared, bytes: request.body)
        return Response.json(201) { w in
            w.object {
                w.field("id", stored.id.description)
                w.field("url", FileURL.path(for: stored.id))
                w.field("contentType", stored.contentType)
                w.field("size", stored.size)
            }
        }.adding(header: "Location", FileURL.path(for: stored.id))
    }

    func download(_ request: Request) throws -> Response {
        guard let id = FileID(try request.pathParameter("id")), let file = try files.find(id, knownDigests: Self.knownDigests(request)) else {
            throw Problem.notFound("No such file.")
        }
        return Self.serve(file, request)
    }

    /// The digests the client says it has (`If-None-Match`), so their bytes are never read: each
    /// tag that `serve`'s `ETag` comparison could match, unquoted, or `*`.
    static func knownDigests(_ request: Request) -> [String] {
        request.ifNoneMatchTags.compactMap { tag in
            if tag == "*" { return tag }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            return String(tag.dropFirst().dropLast())
        }
    }

    /// The stored bytes, cacheable forever (a file never changes) and never run as a page.
    static func serve(_ file: StoredFile, _ request: Request) -> Response {
        let etag = "\"\(file.sha256Hex)\""
        var headers = [("ETag", etag), ("Cache-Control", "public, max-age=31536000, immutable"),
                       ("Content-Security-Policy", "default-src 'none'; sandbox")]
        if request.ifNoneMatch(etag) { return Response(status: 304, headers: headers) }   // `file.bytes` were not read
        headers.append(("Content-Type", file.contentType))
        return Response(status: 200, headers: headers, body: file.bytes)
    }
}
