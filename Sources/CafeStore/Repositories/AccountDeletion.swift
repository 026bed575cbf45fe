import CafeDomain
import Foundation
import PostgresKit

/// An account leaving, by its own request or an operator's: in one transaction its comments (the
/// aggregation outbox gets their cafes from the comments' own triggers, so the worker's next pass
/// makes `commentSum`/`commentAmount` exact), its hidden comments, its photos (but one a cafe shows,
/// which stays as the cafe's), its sessions, tokens, mail and idempotency keys, and the account. Its
/// reports stay without the reporter; the audit log keeps the id of an operator who acted.
/// Never the last admin who can log in (`AccountAdministration.administering`).
public struct AccountDeletion: DatabaseBound, Sendable {
    public var db: DatabaseClient
    /// Told of each change this store commits to an account (`SessionCache`); nil when there is none.
    let sessionCache: SessionCache?
    public init(pool: ConnectionPool, sessionCache: SessionCache? = nil) {
        self.db = pool.client
        self.sessionCache = sessionCache
    }

    /// What a deletion takes, shown to an operator before they confirm it.
    public struct Contents: Sendable, Equatable {
        public var comments: Int
        public var hiddenComments: Int
        public var photos: Int
        public var reports: Int
        public init(comments: Int, hiddenComments: Int, photos: Int, reports: Int) {
            self.comments = comments
            self.hiddenComments = hiddenComments
            self.photos = photos
            self.reports = reports
        }
    }

    public enum Outcome: Sendable, Equatable {
        case deleted(Contents)
        case noSuchAccount
        case lastAdmin
        /// The confirmed counts no longer hold: nothing was deleted.
        case contentsChanged(Contents)
    }

    public func contents(_ id: UserID) async throws -> Contents? {
        try await db.statement { try await Self.contents(id, $0) }
    }

    static func contents(_ id: UserID, _ conn: DatabaseClient) async throws -> Contents? {
        try await conn.query("""
            SELECT (SELECT count(*)::int FROM comments WHERE user_id = u.id) AS comments,
                   (SELECT count(*)::int FROM hidden_comments WHERE user_id = u.id) AS hidden,
                   (SELECT count(*)::int FROM files f WHERE f.owner_id = u.id AND NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = f.id)) AS photos,
                   (SELECT count(*)::int FROM comment_reports WHERE user_id = u.id) AS reports
            FROM users u WHERE u.id = \(id.rawValue)
            """).first.map {
                Contents(comments: try $0.decode("comments"), hiddenComments: try $0.decode("hidden"), photos: try $0.decode("photos"),
                         reports: try $0.decode("reports"))
            }
    }

    /// Deletes the account, in the caller's transaction when there is one (which may record it in the
    /// audit log). `confirmed`: the counts an operator was shown; nil when the person deletes their own.
    /// `actor`: the operator deleting it, who must still be an admin; nil for the person themselves.
    public func delete(_ id: UserID, confirmed: Contents?, by actor: UserID?) async throws -> Outcome {
        defer { sessionCache?.forget(users: [id.rawValue]) }
        // A transaction of its own, or a savepoint of the caller's: a refusal after the deletes rolls them back.
        do {
            return try await db.transaction { tx in try await Self.checkingAdmins(of: id, by: actor, tx) { () -> Outcome in
                // The row lock first: a comment or an upload being written now holds the key-share lock
                // its foreign key takes, so this waits for it and the deletes below see it; one that
                // starts later fails on the missing account.
                guard try await !tx.query("SELECT 1 FROM users WHERE id = \(id.rawValue) FOR UPDATE").isEmpty,
                      let contents = try await Self.contents(id, tx) else { return .noSuchAccount }
                if let confirmed, confirmed != contents { return .contentsChanged(contents) }
                let comments = try await tx.query("DELETE FROM comments WHERE user_id = \(id.rawValue) RETURNING id").map { String(try $0.decode(0, as: Int64.self)) }
                let hidden = try await tx.query("DELETE FROM hidden_comments WHERE user_id = \(id.rawValue) RETURNING id").map { String(try $0.decode(0, as: Int64.self)) }
                let files = try await tx.query("""
                    DELETE FROM files f WHERE f.owner_id = \(id.rawValue) AND NOT EXISTS (SELECT 1 FROM cafes c WHERE c.image_id = f.id) RETURNING id
                    """).map { String(try $0.decode(0, as: Int64.self)) }
                try await tx.query("""
                    DELETE FROM parse_object_ids WHERE (kind = 'user' AND id = \(id.rawValue))
                        OR (kind = 'comment' AND id = ANY(\(PostgresTextArray(comments + hidden))::bigint[]))
                        OR (kind = 'file' AND id = ANY(\(PostgresTextArray(files))::bigint[]))
                    """)
                try await tx.query("DELETE FROM users WHERE id = \(id.rawValue)")
                return .deleted(contents)
            } }
        } catch AccountAdministration.Refusal.lastAdmin {
            return .lastAdmin
        }
    }

    /// An operator's deletion, or an admin's own, under the rule that an admin who can log in remains
    /// (`AccountAdministration.administering`); anyone else's own needs no check (a service with no
    /// admin yet still lets people leave).
    private static func checkingAdmins(of id: UserID, by actor: UserID?, _ tx: DatabaseClient, _ change: () async throws -> Outcome) async throws -> Outcome {
        let isAdmin = try await !tx.query("SELECT 1 FROM users WHERE id = \(id.rawValue) AND is_admin AND blocked_at IS NULL").isEmpty
        return await actor != nil || isAdmin ? try AccountAdministration.administering(by: actor, tx, change) : try change()
    }
}
