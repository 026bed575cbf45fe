import CafeDomain
import CafeStore
import HTTPKit
import PhotoCodec

/// Parse files: `POST /parse/files/{name}` with the raw bytes, served back at
/// `/parse/files/{appId}/{name}`. As on Parse Server 5 and later, uploading needs a session;
/// here, as through /v1, only images are stored (the apps upload photos), cleaned as /v1 cleans them.
struct ParseFilesController: Sendable {
    let parse: ParseFacade
    let photos: PhotoServing

    var routes: [Endpoint<CafeContext>] {
        [Endpoint("POST", "/parse/files/{name}", parse.handler(fileBody: true, upload)).lane(.upload).requiresSession().posts()]
    }

    /// Fetched by image views, mostly with no Parse headers, like Parse Server's file URLs: outside the
    /// Parse envelope, answered like `/v1/files` (the cleaned photo; a session token in
    /// `X-Parse-Session-Token` shows its owner or an admin a photo nothing public shows).
    var downloadRoutes: [Endpoint<CafeContext>] {
        [Endpoint("GET", "/parse/files/{appId}/{name}", download).publicRead().cached(shows: ["photos"]).lane(.query)]
    }

    func upload(_ r: ParseRequest) async throws -> Response {
        guard let user = try r.user() else { throw ParseError.publicUploads }
        let name = try r.http.pathParameter("name")
        guard ParseFileName.isValidClientName(name) else { throw ParseError(122, "Filename contains invalid characters.") }
        let bytes = r.http.body
        guard !bytes.isEmpty else { throw ParseError.fileSave("Invalid file upload: the body is empty.") }
        guard bytes.count <= photos.maxBytes else { throw ParseError.fileSave("The file is larger than \(photos.maxBytes) bytes.") }
        // The SDKs send the type guessed from the file name, or none; the bytes decide.
        guard let format = ImageFormat.detect(bytes) else {
            throw ParseError.fileSave("Only JPEG, PNG, WebP, GIF, HEIC/HEIF and AVIF images can be stored.")
        }
        if let declared = r.http.mediaType, declared.lowercased().hasPrefix("image/"), !(ImageFormat(declared: declared).map(format.matches(declared:)) ?? false) {
            throw ParseError.fileSave("The bytes are a \(format.contentType) image, not \(declared).")
        }
        let stored: StoredPhoto
        do {
            stored = try await photos.files.on(r.context.db).create(owner: user.id, from: r.http.clientKey, upload: bytes, format: format, name: name)
        } catch let refusal as PhotoRefusal {
            guard let problem = ErrorMapping.photoProblem(refusal) else { throw refusal }
            throw ParseError.fileSave(problem.detail ?? problem.title)
        }
        let parseName = ParseFileName.make(stored.id, clientName: name)
        let url = ParseFileLinks(baseURL: parse.baseURL(r.http), appID: parse.appID, names: [:]).url(name: parseName)
        return Response.json(201) { w in
            w.object {
                w.field("name", parseName)
                w.field("url", url)
            }
        }.adding(header: "Location", url)
    }

    func download(_ request: Request, _ context: CafeContext) async throws -> Response {
        guard try request.pathParameter("appId") == parse.appID, let id = ParseFileName.fileID(try request.pathParameter("name")) else {
            throw Problem.notFound("No such file.")
        }
        return try await photos.serve(id, request, context, sizes: false)
    }
}
