import CafeDomain
import Foundation
import PostgresKit

/// The mail outbox (`mail_outbox`): a request records what to send in its own transaction; the
/// worker (`MailDelivery`) prepares and delivers it, at least once, one message per row.
public struct MailOutbox: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    public enum Kind: String, Sendable, CaseIterable {
        case passwordReset = "password_reset"
        case emailVerification = "email_verification"
        /// A comment's author is told that the cafe's owners answered it (once per comment).
        case ownerReply = "owner_reply"

        /// The account link (a token made for each attempt) the mail carries; nil for a mail with a plain link.
        var accountLink: AccountTokens.Purpose? {
            switch self {
            case .passwordReset: .passwordReset
            case .emailVerification: .emailVerification
            case .ownerReply: nil
            }
        }
    }

    /// What a request asks to send. `baseURL` is where the links point (`PUBLIC_URL`, or the request's allowed host).
    public struct Request: Sendable {
        public var kind: Kind
        public var recipient: String
        public var user: UserID?
        public var language: Language
        public var baseURL: String
        /// The comment an owner's reply mail is about.
        public var comment: CommentID?
        public init(kind: Kind, recipient: String, user: UserID?, language: Language, baseURL: String, comment: CommentID? = nil) {
            self.comment = comment
            self.kind = kind
            self.recipient = recipient
            self.user = user
            self.language = language
            self.baseURL = baseURL
        }
    }

    /// In the caller's transaction when there is one (`tx`), so the mail exists exactly when what caused it
    /// committed. An owner's reply mail is asked for once per comment: a second request is dropped.
    public static func enqueue(_ request: Request, _ conn: DatabaseClient) async throws {
        try await conn.query("""
            INSERT INTO mail_outbox (kind, recipient, user_id, language, base_url, comment_id)
            VALUES (\(request.kind.rawValue), \(String(request.recipient.prefix(254))), \(request.user?.rawValue), \(request.language.rawValue),
                    \(String(request.baseURL.prefix(512))), \(request.comment?.rawValue))
            ON CONFLICT (comment_id) WHERE kind = 'owner_reply' DO NOTHING
            """)
    }

    public func enqueue(_ request: Request) async throws {
        try await db.statement { try await Self.enqueue(request, $0) }
    }

    /// A message as the console's mail screen shows it: the text only while the service keeps it
    /// (not sent: no `SMTP_URL`, or not yet); a sent one's links are gone from the database.
    public struct Entry: Sendable {
        public let id: Int64
        public let kind: String
        public let recipient: String
        public let state: String
        public let attempts: Int
        public let createdAt: Date
        public let finishedAt: Date?
        public let lastError: String?
        public let subject: String?
        public let body: String?
    }

    /// The newest messages, `limit` after the id `before` (newest first).
    public func recent(before: Int64?, limit: Int) async throws -> (entries: [Entry], more: Bool) {
        let older: SQL = before.map { "WHERE id < \($0)" } ?? ""
        let rows = try await db.query("""
            SELECT id, kind, recipient, state, attempts, created_at, finished_at, last_error, subject, body
            FROM mail_outbox \(older) ORDER BY id DESC LIMIT \(limit + 1)
            """)
        let entries = try rows.prefix(limit).map { row in
            Entry(id: try row.decode("id"), kind: try row.decode("kind"), recipient: try row.decode("recipient"), state: try row.decode("state"),
                  attempts: try row.decode("attempts"), createdAt: try row.decode("created_at"), finishedAt: try row.decode("finished_at", as: Date?.self),
                  lastError: try row.decode("last_error", as: String?.self), subject: try row.decode("subject", as: String?.self),
                  body: try row.decode("body", as: String?.self))
        }
        return (entries, rows.count > limit)
    }

    /// Finished messages older than `retention` go (they hold an address), and so do tokens past their expiry.
    func prune(retention: TimeInterval) async throws -> Int {
        let mails = try await db.query("DELETE FROM mail_outbox WHERE finished_at < now() - make_interval(secs => \(retention))").affectedRows
        return await mails + (try db.query("DELETE FROM account_tokens WHERE expires_at < now()").affectedRows)
    }
}
