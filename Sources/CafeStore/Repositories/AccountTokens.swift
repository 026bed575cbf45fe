import CafeDomain
import Foundation
import PostgresKit

/// Single-use tokens a mail carries (a password reset, an e-mail verification): 256 random bits,
/// base64url, shown only in the mail and stored only as their SHA-256.
public struct AccountTokens: Sendable {
    public enum Purpose: String, Sendable {
        case passwordReset = "password_reset"
        case emailVerification = "email_verification"
    }

    /// A new token for `user` and the address `mail` goes to, valid until `expiresAt`, in place of any the
    /// mail had: a mail sent again (a retry) carries a new link and the one before dies.
    static func issue(_ purpose: Purpose, for user: UserID, email: String, mail: Int64, expiresAt: Date, _ tx: DatabaseClient) async throws -> String {
        let token = Tokens.random()
        try await tx.query("DELETE FROM account_tokens WHERE mail_id = \(mail)")
        try await tx.query("""
            INSERT INTO account_tokens (token_hash, user_id, purpose, email, expires_at, mail_id)
            VALUES (\(Tokens.sha256(token)), \(user.rawValue), \(purpose.rawValue), \(email), \(expiresAt), \(mail))
            """)
        return token
    }

    /// Uses the token up: its account and the address it was mailed to, or nil when it is unknown,
    /// expired or used already. Deleting it is what makes it single-use, even under two racing uses.
    static func consume(_ token: String, _ purpose: Purpose, _ tx: DatabaseClient) async throws -> (user: UserID, email: String)? {
        guard Tokens.isWellFormed(token) else { return nil }
        return try await tx.query("""
            DELETE FROM account_tokens WHERE token_hash = \(Tokens.sha256(token)) AND purpose = \(purpose.rawValue)
            RETURNING user_id, email, expires_at > now() AS live
            """).first.flatMap { row in
                try row.decode("live", as: Bool.self) ? (UserID(rawValue: try row.decode("user_id")), try row.decode("email")) : nil
            }
    }
}
