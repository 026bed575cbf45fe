import CafeDomain
import CafeStore
import HTTPKit
import JSONLogging
import PhotoCodec
import PostgresKit

/// Errors from lower layers that have a proper HTTP answer. Anything else is a logged 500.
enum ErrorMapping {
    static func problem(for error: any Error, request: Request) -> Problem? {
        switch error {
        case is StatementLoop.Full:
            return .unavailable("overloaded", "Too many reads are waiting for the database; retry.", retryAfter: 1)
        case let pg as PostgresError where pg.isUnavailable:
            return .unavailable("database_unavailable", "The database is not reachable right now; retry shortly.", retryAfter: 2)
        case let pg as PostgresError where pg.isRejectedValue:
            // A value got past the validators but not past the database's own checks: still the
            // client's input, so a 400 naming the field, never a 500.
            let field = pg.rejectedColumn.map { apiFieldNames[$0] ?? $0 } ?? (request.method == "GET" ? "query" : "body")
            return .validation([.init(field: field, message: "is not a value the database accepts (\(pg.message))")])
        case let validation as ValidationError:
            return .validation(validation.fields.map { .init(field: $0.field, message: $0.message) })
        case StoreError.notFound:
            return .notFound()
        case StoreError.forbidden:
            return forbidden("You may only change your own comments.")
        case StoreError.accountGone:
            return Authenticator.unauthorized
        case StoreError.usernameTaken:
            return Problem(status: 409, code: "username_taken", title: "Username taken", detail: "That username, or one that looks the same, is already in use.")
        case StoreError.emailTaken:
            return Problem(status: 409, code: "email_taken", title: "E-mail address taken", detail: "Another account has that e-mail address.")
        case StoreError.invalidReference(let field):
            return .validation([.init(field: field, message: "no such file, or not one you uploaded")])
        case StoreError.uploadInProgress:
            return Problem(status: 429, code: "upload_in_progress", title: "Upload in progress",
                           detail: "Another photo of yours is being processed; send the next one when it is done.", headers: [("Retry-After", "1")])
        case StoreError.uploadQuotaExceeded(let kind, let limit, let wait):
            let whose = kind == .account ? "Your uploads" : "The uploads from your address"
            let setting = kind == .account ? "UPLOAD_QUOTA_BYTES" : "UPLOAD_QUOTA_PER_ADDRESS_BYTES"
            return Problem(status: 429, code: "upload_quota_exceeded", title: "Upload quota exceeded",
                           detail: "\(whose) of the last 24 hours would pass \(limit) bytes (\(setting)); retry in \(wait) s.",
                           headers: [("Retry-After", String(wait))])
        case let refusal as PhotoRefusal:
            return photoProblem(refusal)
        case let unavailable as PhotoStoreUnavailable:
            return .unavailable("photo_store_unavailable", "The photo store is not answering (\(unavailable.description)); nothing was stored. Retry shortly.",
                                retryAfter: 2)
        default:
            return nil
        }
    }

    /// An upload that is not a photo this service stores; nil for libvips' own failure (a 500).
    static func photoProblem(_ refusal: PhotoRefusal) -> Problem? {
        switch refusal {
        case .undecodable(let why):
            return .badRequest("invalid_image", "The bytes are not a whole image that can be decoded (\(why)).")
        case .tooManyPixels(let width, let height, let limit):
            return .badRequest("too_many_pixels", "The image is \(width) × \(height) pixels, more than \(limit) (PHOTO_MAX_PIXELS).")
        case .tooManyScans(let scans, let limit):
            return .badRequest("too_many_scans", "The JPEG has \(scans) scans, more than \(limit) (PHOTO_MAX_JPEG_SCANS): no camera writes that many.")
        case .failed:
            return nil
        }
    }

    /// How `/v1`, the operations endpoints and the web client answer errors: problem+json.
    static func problems(logger: Logger) -> ErrorRenderer {
        Problem.renderer(logger: logger, map: problem(for:request:))
    }

    /// How `/parse` answers errors: Parse's `{"code","error"}`, the shared layers' problems translated.
    static func parse(logger: Logger) -> ErrorRenderer {
        { error, request in
            if let parseError = error as? ParseError { return parseError.response }
            return ParseError(translating: Problem.standingFor(error, request, logger: logger, map: problem(for:request:))).response
        }
    }

    /// Column names whose API field is spelt differently.
    static let apiFieldNames = ["catch_copy": "catchCopy", "publish_date": "publishDate", "image_id": "imageId",
                                "password_hash": "password"]

    static func forbidden(_ detail: String) -> Problem {
        Problem(status: 403, code: "forbidden", title: "Forbidden", detail: detail)
    }
}
