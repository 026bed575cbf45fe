import CafeDomain
import Foundation
import PostgresKit

/// What an account holds besides its comments (`Moderation.comments(of:)`), for the copy of one's
/// data (`GET /v1/users/me/export`, GDPR articles 15 and 20).
public struct AccountExport: DatabaseBound, Sendable {
    public var db: DatabaseClient
    public init(pool: ConnectionPool) { self.db = pool.client }

    public struct ReportMade: Sendable {
        public let commentID: CommentID
        public let reason: String
        public let createdAt: Date
        public let resolution: String?
    }

    public struct Photo: Sendable {
        public let id: FileID
        public let contentType: String
        public let size: Int
        public let width: Int?
        public let height: Int?
        public let createdAt: Date
    }

    public func reports(of user: UserID) async throws -> [ReportMade] {
        try await db.query("""
            SELECT comment_id, reason, created_at, resolution FROM comment_reports WHERE user_id = \(user.rawValue) ORDER BY created_at, comment_id
            """).map {
                ReportMade(commentID: CommentID(rawValue: try $0.decode(0)), reason: try $0.decode(1), createdAt: try $0.decode(2),
                           resolution: try $0.decode(3, as: String?.self))
            }
    }

    /// The comments the account voted helpful, and when.
    public func helpfulVotes(of user: UserID) async throws -> [(comment: CommentID, votedAt: Date)] {
        try await db.query("SELECT comment_id, created_at FROM helpful_votes WHERE user_id = \(user.rawValue) ORDER BY created_at, comment_id")
            .map { (CommentID(rawValue: try $0.decode(0)), try $0.decode(1)) }
    }

    public func photos(of user: UserID) async throws -> [Photo] {
        try await db.query("""
            SELECT id, content_type, size, width, height, created_at FROM files WHERE owner_id = \(user.rawValue) ORDER BY id
            """).map {
                Photo(id: FileID(rawValue: try $0.decode(0)), contentType: try $0.decode(1), size: try $0.decode(2),
                      width: try $0.decode(3, as: Int?.self), height: try $0.decode(4, as: Int?.self), createdAt: try $0.decode(5))
            }
    }
}
