import CafeDomain
import CafeStore
import HTTPKit
import PhotoCodec

/// Photo upload and download. An upload is decoded and cleaned by a photo helper (`PhotoCodecProcesses`);
/// what is served is never the uploaded bytes. `?w=` asks for a smaller size (160, 320, 640, 1280),
/// WebP when `Accept` names it. A photo is served to anyone only while a listed cafe or a visible
/// comment shows it, else to its owner and the admins alone (404 to everyone else).
struct FilesController: Sendable {
    let photos: PhotoServing
    let auth: Authenticator

    var routes: [Endpoint<CafeContext>] {
        [
            Endpoint("POST", "/v1/files", upload).lane(.upload).requiresSession().posts(),
            Endpoint("GET", "/v1/files/{id}", download).publicRead()
                .cached(shows: ["photos"], parameters: ["w"], variant: { PhotoServing.wantsWebP($0) ? "webp" : "" }),
        ]
    }

    func upload(_ request: Request, _ context: CafeContext) async throws -> Response {
        let user = try auth.user(context)
        let accepted = ImageFormat.allCases.map(\.contentType).joined(separator: ", ")
        guard let declared = request.mediaType.flatMap(ImageFormat.init(declared:)) else {
            throw Problem.unsupportedMediaType("Upload the image's bytes with its Content-Type: one of \(accepted).")
        }
        guard request.body.count <= photos.maxBytes else { throw Problem.payloadTooLarge(limit: photos.maxBytes) }
        guard !request.body.isEmpty else {
            throw Problem.validation([.init(field: "body", message: "is empty; send the image bytes")])
        }
        guard let detected = ImageFormat.detect(request.body), detected.matches(declared: declared) else {
            throw Problem.unsupportedMediaType("The bytes are not a \(declared.contentType) image.")
        }
        let stored = try await photos.files.on(context.db).create(owner: user.id, from: request.clientKey, upload: request.body, format: detected)
        return Response.json(201) { w in
            w.object {
                w.field("id", stored.id.description)
                w.field("url", FileURL.path(for: stored.id))
                w.field("contentType", stored.contentType)
                w.field("size", stored.size)
                w.field("width", stored.width)
                w.field("height", stored.height)
            }
        }.adding(header: "Location", FileURL.path(for: stored.id))
    }

    func download(_ request: Request, _ context: CafeContext) async throws -> Response {
        guard let id = FileID(try request.pathParameter("id")) else { throw Problem.notFound("No such file.") }
        return try await photos.serve(id, request, context, sizes: true)
    }
}

/// Serving a photo or one of its sizes, for `/v1/files` and `/parse/files` alike.
struct PhotoServing: Sendable {
    let files: FileRepository
    /// What bounds the sizes made and old photos cleaned on first request: the uploads' lane.
    let lane: WorkLane
    let maxBytes: Int
    /// `PHOTO_CACHE_SECONDS`: how long a browser or CDN may keep a public photo.
    let cacheSeconds: Int
    /// Each photo's work (a size, a cleaning) done once, however many requests ask for it together and
    /// however they are authenticated.
    let work: OneAtATime

    /// Whether `Accept` names `image/webp` (and not with `q=0`, which refuses it).
    static func wantsWebP(_ request: Request) -> Bool {
        guard let accept = request.header("accept") else { return false }
        return accept.split(separator: ",").contains { part in
            let fields = part.split(separator: ";").map { String($0.filter { $0 != " " && $0 != "\t" }).lowercased() }
            guard fields.first == "image/webp" else { return false }
            let q = fields.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) }
            return (q ?? 1) > 0
        }
    }

    /// The photo (`?w=` absent, or `sizes` false) or a size, as the request's session may see it.
    func serve(_ id: FileID, _ request: Request, _ context: CafeContext, sizes: Bool) async throws -> Response {
        let viewer = context.user.map { PhotoViewer(userID: $0.id, isAdmin: $0.isAdmin) }
        let files = files.on(context.db)
        let known = Self.knownDigests(request)
        let webp = Self.wantsWebP(request)
        let width: Int?
        if sizes, let w = request.query["w"] {
            guard let n = Int(w), PhotoCodec.widths.contains(n) else {
                throw Problem.badRequest("invalid_parameter", "w must be one of \(PhotoCodec.widths.map(String.init).joined(separator: ", ")).")
            }
            width = n
        } else {
            width = nil
        }
        for _ in 0..<3 {
            let lookup = if let width {
                try await files.size(id, width: width, webp: webp, viewer: viewer, knownDigests: known)
            } else {
                try await files.original(id, viewer: viewer, knownDigests: known)
            }
            switch lookup {
            case .hidden:
                throw Problem.notFound("No such file.")
            case .found(let answer):
                return respond(answer, request, negotiated: width != nil)
            case .needsWork(let key, let needed):
                let ran = try await work.run(key) { try await lane.run(needed) != nil }
                if ran == false { throw Problem.unavailable("overloaded", "Too many photos are being resized; retry.", retryAfter: 1) }
            }
        }
        throw Problem.unavailable("photo_busy", "The photo is being prepared; retry.", retryAfter: 1)
    }

    /// The digests the client says it has (`If-None-Match`), so their bytes are never read: each
    /// tag that the `ETag` comparison could match, unquoted, or `*`.
    static func knownDigests(_ request: Request) -> [String] {
        request.ifNoneMatchTags.compactMap { tag in
            if tag == "*" { return tag }
            guard tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
            return String(tag.dropFirst().dropLast())
        }
    }

    /// The bytes, never run as a page. A public photo may be kept `cacheSeconds` by anyone (a CDN
    /// too); one only its owner and the admins see, by their own browser only.
    private func respond(_ answer: PhotoAnswer, _ request: Request, negotiated: Bool) -> Response {
        let etag = "\"\(answer.sha256Hex)\""
        var headers = [("ETag", etag), ("Cache-Control", answer.isPublic ? "public, max-age=\(cacheSeconds)" : "private, max-age=\(cacheSeconds)"),
                       ("Content-Security-Policy", "default-src 'none'; sandbox")]
        if negotiated { headers.append(("Vary", "Accept")) }
        if request.ifNoneMatch(etag) || answer.bytes == nil { return Response(status: 304, headers: headers) }
        headers += [("Content-Type", answer.contentType), ("X-Photo-Width", String(answer.width)), ("X-Photo-Height", String(answer.height))]
        return Response(status: 200, headers: headers, body: ResponseBody(answer.bytes ?? []))
    }
}

