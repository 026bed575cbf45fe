import CafeDomain
import CafeStore
import HTTPKit

/// Parse files: `POST /parse/files/{name}` with the raw bytes, served back at
/// `/parse/files/{appId}/{name}`. As on Parse Server 5 and later, uploading needs a session;
/// here, as through /v1, only images are stored (the apps upload photos).
struct ParseFilesController: Sendable {
    let context: ParseContext
    let files: FileRepository

    var routes: [Endpoint] {
        [Endpoint("POST", "/parse/files/{name}", context.handler(fileBody: true, upload)).lane(.upload)]
    }

    /// Fetched by image views with no Parse headers, like Parse Server's file URLs: outside the
    /// Parse envelope, answered like the web client's files.
    var downloadRoutes: [Endpoint] {
        [Endpoint("GET", "/parse/files/{appId}/{name}", download).publicRead().lane(.query)]
    }

    func upload(_ r: ParseRequest) throws -> Response {
        guard let user = try r.user() else { throw ParseError.fileSave("File upload by public is disabled.") }
        let name = try r.http.pathParameter("name")
        guard ParseFileName.isValidClientName(name) else { throw ParseError(122, "Filename contains invalid characters.") }
        let bytes = r.http.body
        guard !bytes.isEmpty else { throw ParseError.fileSave("Invalid file upload: the body is empty.") }
        guard bytes.count <= ImageFormat.maxBytes else { throw ParseError.fileSave("The file is larger than \(ImageFormat.maxBytes) bytes.") }
        // The SDKs send the type guessed from the file name, or none; the bytes decide.
        guard let format = ImageFormat.detect(bytes) else {
            throw ParseError.fileSave("Only PNG, JPEG, WebP and GIF images can be stored.")
        }
        if let declared = r.http.mediaType, declared.hasPrefix("image/"), declared != format.contentType {
            throw ParseError.fileSave("The bytes are a \(format.contentType) image, not \(declared).")
        }
        let stored = try files.create(owner: user.id, format: format, bytes: bytes, name: name)
        let parseName = ParseFileName.make(stored.id, clientName: name)
        let url = ParseFileLinks(baseURL: context.baseURL(r.http), appID: context.appID, names: [:]).url(name: parseName)
        return Response.json(201) { w in
            w.object {
                w.field("name", parseName)
                w.field("url", url)
            }
        }.adding(header: "Location", url)
    }

    func download(_ request: Request) throws -> Response {
        guard try request.pathParameter("appId") == context.appID, let id = ParseFileName.fileID(try request.pathParameter("name")),
              let file = try files.find(id, knownDigests: FilesController.knownDigests(request)) else { throw Problem.notFound("No such file.") }
        return FilesController.serve(file, request)
    }
}
