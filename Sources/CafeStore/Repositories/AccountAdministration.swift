import CafeDomain
import Foundation
import PostgresKit

/// What operators see of accounts, and may change: blocking and the admin right.
public struct AccountAdministration: DatabaseBound, Sendable {
    public var db: DatabaseClient
    /// Told of each change this store commits to an account (`SessionCache`); nil when there is none.
    let sessionCache: SessionCache?
    public init(pool: ConnectionPool, sessionCache: SessionCache? = nil) {
        self.db = pool.client
        self.sessionCache = sessionCache
    }

    public struct Account: Sendable, Equatable {
        public let user: User
        public let blockedAt: Date?
    }

    public enum RoleChange: Sendable, Equatable {
        case changed(Account)
        case unchanged(Account)
        /// Revoking it would leave no admin who can log in.
        case lastAdmin
    }

    /// Why a change of who administers was refused.
    public enum Refusal: Error, Sendable, Equatable {
        /// It would leave no admin who can log in.
        case lastAdmin
        /// The operator asking is no longer an admin who can log in (blocked, or the right revoked a
        /// moment ago by another operator).
        case notAnAdmin
    }

    /// Every change of who can administer — a block, an unblock, a grant, a revoke (and any later
    /// deletion of accounts) — runs under this one lock, checks that the operator asking is still an
    /// admin who can log in, and after its change that one such admin is left: however they
    /// interleave, no sequence of them leaves none.
    /// With no `actor` (a person deleting their own account), only the check after the change is made.
    static func administering<T>(by actor: UserID?, _ tx: DatabaseClient, _ change: () async throws -> T) async throws -> T {
        try await tx.query("SELECT pg_advisory_xact_lock(hashtextextended('cafe admins', 0))")
        if let actor { guard try await admins(tx, withActor: actor) else { throw Refusal.notAnAdmin } }
        let result = try await change()
        guard try await admins(tx, withActor: nil) else { throw Refusal.lastAdmin }
        return result
    }

    /// Whether an admin who can log in remains (and, with `actor`, whether it is one).
    private static func admins(_ tx: DatabaseClient, withActor actor: UserID?) async throws -> Bool {
        let who: SQL = actor.map { "AND u.id = \($0.rawValue)" } ?? ""
        return await !(try tx.query("SELECT 1 FROM users u WHERE u.is_admin AND u.blocked_at IS NULL \(who) LIMIT 1").isEmpty)
    }

    private static let select: SQL = "\(UserColumns.select), u.blocked_at"

    private static func decode(_ row: Row) throws -> Account {
        Account(user: try UserColumns.decode(row), blockedAt: try row.decode("blocked_at", as: Date?.self))
    }

    public func find(_ id: UserID) async throws -> Account? {
        try await db.query("SELECT \(Self.select) FROM users u WHERE u.id = \(id.rawValue)").first.map(Self.decode)
    }

    /// Accounts whose username contains `text` (any case), by id, `limit` after the id `after`.
    public func search(_ text: String?, after: Int64?, limit: Int) async throws -> (accounts: [Account], more: Bool) {
        var conditions: [SQL] = []
        if let text, !text.isEmpty { conditions.append("strpos(lower(u.username), lower(\(text))) > 0") }
        if let after { conditions.append("u.id > \(after)") }
        let rows = try await db.query("SELECT \(Self.select) FROM users u \(SQL.where(conditions)) ORDER BY u.id LIMIT \(limit + 1)")
        return (try rows.prefix(limit).map(Self.decode), rows.count > limit)
    }

    /// Blocks or unblocks; a block also ends every session of the account in the same transaction.
    /// With `comments`, a block also hides every comment of the account and an unblock brings back
    /// the ones a block hid (`commentsMoved` says how many). Nil for no such account. `Refusal`
    /// when it would leave no admin who can log in, or `actor` is no longer one.
    public func setBlocked(_ id: UserID, _ blocked: Bool, comments: Bool = false, by actor: UserID) async throws
        -> (before: Account, after: Account, commentsMoved: Int)? {
        defer { sessionCache?.forget(users: [id.rawValue]) }
        return try await db.transaction { tx in try await Self.administering(by: actor, tx) {
            guard let before = try await tx.query("SELECT \(Self.select) FROM users u WHERE u.id = \(id.rawValue) FOR UPDATE").first.map(Self.decode) else {
                return nil
            }
            let after = try await Self.decode(try tx.query("""
                UPDATE users u SET blocked_at = CASE WHEN \(blocked) THEN coalesce(u.blocked_at, now()) END
                WHERE u.id = \(id.rawValue) RETURNING \(Self.select)
                """).one())
            if blocked { try await tx.query("DELETE FROM sessions WHERE user_id = \(id.rawValue)") }
            var moved = 0
            if comments {
                let moderation = Moderation(pool: db.pool)
                moved = try await blocked ? moderation.hideAll(of: id, tx) : moderation.restoreBlocked(of: id, tx)
            }
            return (before, after, moved)
        } }
    }

    /// Grants or revokes the admin right; never revokes the last admin who can log in (see
    /// `administering`). Nil for no such account; `Refusal.notAnAdmin` when `actor` no longer is one.
    public func setAdmin(_ id: UserID, _ admin: Bool, by actor: UserID) async throws -> RoleChange? {
        defer { sessionCache?.forget(users: [id.rawValue]) }
        do {
            return try await db.transaction { tx in try await Self.administering(by: actor, tx) { () -> RoleChange? in
                guard let current = try await tx.query("SELECT \(Self.select) FROM users u WHERE u.id = \(id.rawValue) FOR UPDATE").first.map(Self.decode) else {
                    return nil
                }
                if current.user.isAdmin == admin { return .unchanged(current) }
                return await .changed(try Self.decode(try tx.query("UPDATE users u SET is_admin = \(admin) WHERE u.id = \(id.rawValue) RETURNING \(Self.select)").one()))
            } }
        } catch Refusal.lastAdmin {
            return .lastAdmin
        }
    }
}
