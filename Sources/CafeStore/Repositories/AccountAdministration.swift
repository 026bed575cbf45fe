import CafeDomain
import Foundation
import PostgresKit

/// What operators see of accounts, and may change: blocking and the admin right.
public struct AccountAdministration: Sendable {
    let pool: ConnectionPool
    public init(pool: ConnectionPool) { self.pool = pool }

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

    private static let select: SQL = "\(UserColumns.select), u.blocked_at"

    private static func decode(_ row: Row) throws -> Account {
        Account(user: try UserColumns.decode(row), blockedAt: try row.decode(8, as: Date?.self))
    }

    /// Accounts whose username contains `text` (any case), by id, `limit` after the id `after`.
    public func search(_ text: String?, after: Int64?, limit: Int) throws -> (accounts: [Account], more: Bool) {
        var conditions: [SQL] = []
        if let text, !text.isEmpty { conditions.append("strpos(lower(u.username), lower(\(text))) > 0") }
        if let after { conditions.append("u.id > \(after)") }
        let rows = try pool.query("SELECT \(Self.select) FROM users u \(SQL.where(conditions)) ORDER BY u.id LIMIT \(limit + 1)")
        return (try rows.prefix(limit).map(Self.decode), rows.count > limit)
    }

    /// Blocks or unblocks; a block also ends every session of the account in the same transaction.
    /// With `comments`, a block also hides every comment of the account and an unblock brings back
    /// the ones a block hid (`commentsMoved` says how many). Nil for no such account.
    public func setBlocked(_ id: UserID, _ blocked: Bool, comments: Bool = false) throws -> (before: Account, after: Account, commentsMoved: Int)? {
        try pool.transaction { tx in
            guard let before = try tx.query("SELECT \(Self.select) FROM users u WHERE u.id = \(id.rawValue) FOR UPDATE").first.map(Self.decode) else {
                return nil
            }
            let after = try Self.decode(try tx.query("""
                UPDATE users u SET blocked_at = CASE WHEN \(blocked) THEN coalesce(u.blocked_at, now()) END
                WHERE u.id = \(id.rawValue) RETURNING \(Self.select)
                """).one())
            if blocked { try tx.query("DELETE FROM sessions WHERE user_id = \(id.rawValue)") }
            var moved = 0
            if comments {
                let moderation = Moderation(pool: pool)
                moved = try blocked ? moderation.hideAll(of: id, tx) : moderation.restoreBlocked(of: id, tx)
            }
            return (before, after, moved)
        }
    }

    /// Grants or revokes the admin right; never revokes the last admin who can log in (the admins
    /// are locked while it counts them, so two revoking each other cannot both pass). Nil for no such account.
    public func setAdmin(_ id: UserID, _ admin: Bool) throws -> RoleChange? {
        try pool.transaction { tx in
            let admins = try tx.query("SELECT u.id, u.blocked_at IS NULL FROM users u WHERE u.is_admin ORDER BY u.id FOR UPDATE")
            guard let current = try tx.query("SELECT \(Self.select) FROM users u WHERE u.id = \(id.rawValue) FOR UPDATE").first.map(Self.decode) else {
                return nil
            }
            if current.user.isAdmin == admin { return .unchanged(current) }
            if !admin {
                var others = 0
                for row in admins where try row.decode(0, as: Int64.self) != id.rawValue && row.decode(1, as: Bool.self) { others += 1 }
                if others == 0 { return .lastAdmin }
            }
            return .changed(try Self.decode(try tx.query("UPDATE users u SET is_admin = \(admin) WHERE u.id = \(id.rawValue) RETURNING \(Self.select)").one()))
        }
    }
}
