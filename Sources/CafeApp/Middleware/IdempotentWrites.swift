import CafeDomain
import CafeStore
import HTTPKit
import JSONLogging
import PostgresKit

/// Idempotent POSTs. A logged-in client that sends `Idempotency-Key` (on /parse, the
/// `X-Parse-Request-Id` the SDKs send with every request and repeat on a retry) gets, on a retry
/// within 24 hours, the original status and body without the work being done again; the same key
/// with a different request is 422. The key is claimed in the same transaction as the write it
/// guards (the handler's context carries that transaction's client, which every store it uses is
/// bound to), so either both commit or neither does: a 2xx is never replayed for a write that was
/// lost, and a write is never done twice. Such a write therefore commits with its key, never in the
/// group commit (`DatabaseClient.commit`).
///
/// An upload (a route on the photo lane) is the exception: no transaction may stay open while its
/// photo is decoded (seconds, holding a connection idle in transaction). Its key is looked up first (an
/// answered one is replayed without the work), the upload commits on its own, and the key is claimed and
/// its answer recorded afterwards in one short transaction. Two retries racing with one key may then
/// both store the photo: both are answered with the first one's answer, and the other photo, attached to
/// nothing, is swept with the unattached uploads after 24 hours.
///
/// Only answers below 500 are kept (429 excepted): after a failure the key stays free for a retry.
/// Requests without a valid session pass straight through (the handler answers 401), as do the
/// routes that create sessions: their answers hold a token, which is never stored.
struct IdempotentWrites: Middleware {
    /// The header taken as the key when there is no `Idempotency-Key` (`X-Parse-Request-Id` on /parse).
    let requestIDHeader: String?
    private let keys: IdempotencyRepository

    init(keys: IdempotencyRepository, requestIDHeader: String? = nil) {
        self.keys = keys
        self.requestIDHeader = requestIDHeader
    }

    func respond(to request: Request, context: CafeContext, next: (Request, CafeContext) async -> Response) async throws -> Response {
        guard request.method == "POST", !request.readsOnly, request.traits.credentials == nil,
              let key = request.header("idempotency-key") ?? requestIDHeader.flatMap(request.header) else {
            return await next(request, context)
        }
        guard !key.isEmpty, key.utf8.count <= 255 else {
            throw Problem.badRequest("invalid_idempotency_key", "Idempotency-Key must be 1–255 characters.")
        }
        guard let user = context.user else { return await next(request, context) }
        let fingerprint = IdempotencyRepository.fingerprint(method: request.method, path: request.path, body: request.body)
        if request.traits.lane == .upload { return try await upload(request, user: user.id, key: key, fingerprint: fingerprint, context, next) }
        do {
            return try await context.db.transaction { tx in
                let keys = keys.on(tx)
                switch try await keys.claim(user: user.id, key: key, requestHash: fingerprint) {
                case .answered(let stored):
                    return try Self.replay(stored, fingerprint)
                case .claimed:
                    var inTransaction = context
                    inTransaction.db = tx
                    let response = try await handlerResponse(request, inTransaction, next)
                    guard response.status < 500, response.status != 429 else { throw Abandoned(response: response) }
                    try await keys.record(user: user.id, key: key, status: response.status, contentType: response.header("content-type"),
                                    location: response.header("location"), body: response.body.bytes)
                    return response
                }
            }
        } catch let abandoned as Abandoned {
            return abandoned.response
        }
    }

    /// An upload's key, around its stored result rather than its work (see the type's comment).
    private func upload(_ request: Request, user: UserID, key: String, fingerprint: [UInt8], _ context: CafeContext, _ next: (Request, CafeContext) async -> Response) async throws -> Response {
        if let stored = try await keys.on(context.db).answer(user: user, key: key) { return try Self.replay(stored, fingerprint) }
        let response = await next(request, context)
        guard response.status < 500, response.status != 429 else { return response }
        return try await context.db.transaction { tx in
            let keys = keys.on(tx)
            switch try await keys.claim(user: user, key: key, requestHash: fingerprint) {
            case .answered(let stored):
                return try Self.replay(stored, fingerprint)
            case .claimed:
                try await keys.record(user: user, key: key, status: response.status, contentType: response.header("content-type"),
                                location: response.header("location"), body: response.body.bytes)
                return response
            }
        }
    }

    /// A stored answer sent again, or 422 when the key was used for another request.
    private static func replay(_ stored: IdempotencyRepository.StoredAnswer, _ fingerprint: [UInt8]) throws -> Response {
        guard stored.requestHash == fingerprint else {
            throw Problem(status: 422, code: "idempotency_key_reused", title: "Idempotency key reused",
                          detail: "This Idempotency-Key was used for a different request; use a new key for a new request.")
        }
        var headers = [("Idempotent-Replayed", "true")]
        if let type = stored.contentType { headers.append(("Content-Type", type)) }
        if let location = stored.location { headers.append(("Location", location)) }
        return Response(status: stored.status, headers: headers, body: ResponseBody(stored.body))
    }

    /// Thrown to roll the claim back with the handler's work, answering what the handler answered.
    private struct Abandoned: Error { let response: Response }

    /// The handler's answer, its work in a transaction of its own inside the key's (`context.db`): a handler that
    /// answered 4xx after a failed statement left that transaction aborted, so its work is undone
    /// while the key and the answer still commit.
    private func handlerResponse(_ request: Request, _ context: CafeContext, _ next: (Request, CafeContext) async -> Response) async throws -> Response {
        struct Failed: Error { let response: Response }
        do {
            return try await context.db.transaction { tx in
                var inSavepoint = context
                inSavepoint.db = tx
                let response = await next(request, inSavepoint)
                if tx.isInFailedTransaction { throw Failed(response: response) }
                return response
            }
        } catch let failed as Failed {
            return failed.response
        }
    }
}
