import CafeDomain
import Foundation
import JSONLogging
import Mail
import PostgresKit

/// The worker's delivery of the mail outbox: each due row is prepared once (its account found, its
/// text written with a placeholder where the link goes, in one transaction) and then sent through
/// `SMTPTransport`, retried with backoff until it is delivered, refused for good, or its link has
/// expired. The link's token is made for each attempt, just before it, and written into the text only
/// in memory: the database keeps the token's hash, never the link, so neither the outbox nor the
/// console's mail screen can be used to take over an account. At least once: a worker that dies
/// between the server's acceptance and the row's update sends that one again (with the same
/// `Message-ID`, and a new link). Rows are leased (`next_attempt_at` moved past the send's timeout)
/// with `SKIP LOCKED`, so several workers never send one at the same time.
/// Without a transport (no `SMTP_URL`) a message is kept: handed whole, link included, to `keep` (by
/// default the log, at info: the terminal of the person running `make run`), and shown in the console
/// without its link.
public struct MailDelivery: Sendable {
    public struct Settings: Sendable {
        /// `MAIL_FROM`: the `From` header; its address (inside `<…>` if any) is the envelope sender.
        public var from: String
        /// `PASSWORD_RESET_TTL`, `EMAIL_VERIFICATION_TTL`: seconds a link works.
        public var resetLifetime: TimeInterval
        public var verificationLifetime: TimeInterval
        /// `MAIL_PER_ACCOUNT_PER_HOUR`: mails one account is sent in an hour at most; more are dropped (`throttled`).
        public var perAccountPerHour: Int
        /// `MAIL_PER_ADDRESS_PER_HOUR`: mails one address is sent in an hour at most, whoever asked and for
        /// whichever account; more are dropped (`throttled`): the service cannot be aimed at a mailbox.
        public var perAddressPerHour: Int
        /// `MAIL_RETRY_MAX_SECONDS`: the longest wait between two attempts (from 1 s, doubling).
        public var retryMax: TimeInterval
        public init(from: String, resetLifetime: TimeInterval, verificationLifetime: TimeInterval, perAccountPerHour: Int,
                    perAddressPerHour: Int, retryMax: TimeInterval) {
            self.from = from
            self.perAddressPerHour = perAddressPerHour
            self.resetLifetime = resetLifetime
            self.verificationLifetime = verificationLifetime
            self.perAccountPerHour = perAccountPerHour
            self.retryMax = retryMax
        }
    }

    /// Where a message goes when there is no transport: its recipient, subject and whole text.
    public typealias Keep = @Sendable (_ recipient: String, _ subject: String, _ body: String) -> Void

    let pool: ConnectionPool
    let transport: SMTPTransport?
    let settings: Settings
    let logger: Logger
    let keep: Keep

    public init(pool: ConnectionPool, transport: SMTPTransport?, settings: Settings, logger: Logger, keep: Keep? = nil) {
        self.pool = pool
        self.transport = transport
        self.settings = settings
        self.logger = logger
        self.keep = keep ?? { recipient, subject, body in
            logger.info("mail kept, not sent (no SMTP_URL)", [("to", recipient), ("subject", subject), ("body", body)])
        }
    }

    struct Due {
        let id: Int64
        let kind: MailOutbox.Kind
        let recipient: String
        let user: UserID?
        let language: Language
        let baseURL: String
        let subject: String?
        let body: String?
        let expiresAt: Date?
        let attempts: Int
        let comment: Int64?
    }

    /// One round: every due message (up to 50); how many were handled.
    @discardableResult
    public func run(isStopping: () -> Bool = { false }) async throws -> Int {
        let lease = (transport?.timeout ?? 10) * 2 + 30
        let rows = try await pool.query("""
            UPDATE mail_outbox SET next_attempt_at = now() + make_interval(secs => \(lease))
            WHERE id IN (SELECT id FROM mail_outbox WHERE state = 'pending' AND next_attempt_at <= now()
                         ORDER BY next_attempt_at, id LIMIT 50 FOR UPDATE SKIP LOCKED)
            RETURNING id, kind, recipient, user_id, language, base_url, subject, body, expires_at, attempts, comment_id
            """)
        var handled = 0
        // Oldest first (RETURNING has no order): an account's mails meet its hourly limit in the order they were asked for.
        for row in try rows.sorted(by: { try $0.decode("id", as: Int64.self) < $1.decode("id", as: Int64.self) }) where !isStopping() {
            guard let kind = MailOutbox.Kind(rawValue: try row.decode("kind")),
                  let language = Language(rawValue: try row.decode("language")) else { continue }
            var due = Due(id: try row.decode("id"), kind: kind, recipient: try row.decode("recipient"),
                          user: try row.decode("user_id", as: Int64?.self).map(UserID.init(rawValue:)), language: language,
                          baseURL: try row.decode("base_url"), subject: try row.decode("subject", as: String?.self),
                          body: try row.decode("body", as: String?.self), expiresAt: try row.decode("expires_at", as: Date?.self),
                          attempts: try row.decode("attempts"), comment: try row.decode("comment_id", as: Int64?.self))
            if due.body == nil {
                guard let prepared = try await prepare(due) else { handled += 1; continue }
                due = prepared
            }
            try await deliver(due)
            handled += 1
        }
        return handled
    }

    /// The account, the token and the text, or nil when the row was finished instead (no such
    /// account, nothing left to verify, too many mails to it this hour).
    private func prepare(_ due: Due) async throws -> Due? {
        try await pool.transaction { tx -> Due? in
            func finish(_ state: String) async throws -> Due? {
                try await tx.query("UPDATE mail_outbox SET state = \(state), finished_at = now() WHERE id = \(due.id)")
                logger.debug("mail not sent", [("id", String(due.id)), ("kind", due.kind.rawValue), ("state", state)])
                return nil
            }
            // One account per request: an address shared by several (accounts imported from Parse, made before
            // addresses were unique) gets one mail, for the oldest of them, not one per account.
            let accounts: SQL = due.user.map { "u.id = \($0.rawValue)" } ?? "lower(u.email) = lower(\(due.recipient))"
            let found = try await tx.query("""
                SELECT u.id, u.username, u.email, u.email_verified, u.language FROM users u
                WHERE \(accounts) AND u.blocked_at IS NULL ORDER BY u.id LIMIT 1
                """)
            guard let account = found.first else { return try await finish("skipped") }
            let user = UserID(rawValue: try account.decode("id"))
            let email = try account.decode("email", as: String?.self)
            guard let email, email.lowercased() == due.recipient.lowercased() else { return try await finish("skipped") }
            if due.kind == .emailVerification, try account.decode("email_verified", as: Bool.self) { return try await finish("skipped") }
            let recent: Int = try await tx.query("""
                SELECT count(*)::int FROM mail_outbox
                WHERE user_id = \(user.rawValue) AND id <> \(due.id) AND created_at > now() - interval '1 hour'
                  AND (state IN ('sent', 'kept') OR (state = 'pending' AND body IS NOT NULL))
                """).one().decode(0)
            if recent >= settings.perAccountPerHour { return try await finish("throttled") }
            let toAddress: Int = try await tx.query("""
                SELECT count(*)::int FROM mail_outbox
                WHERE lower(recipient) = lower(\(email)) AND id <> \(due.id) AND created_at > now() - interval '1 hour'
                  AND (state IN ('sent', 'kept') OR (state = 'pending' AND body IS NOT NULL))
                """).one().decode(0)
            if toAddress >= settings.perAddressPerHour { return try await finish("throttled") }
            let language = (try account.decode("language", as: String?.self)).flatMap(Language.init(rawValue:)) ?? due.language
            let username: String = try account.decode("username")
            let text: (subject: String, body: String)
            let lifetime: TimeInterval
            if let purpose = due.kind.accountLink {
                lifetime = purpose == .passwordReset ? settings.resetLifetime : settings.verificationLifetime
                text = MailTemplates.render(purpose, language, username: username,
                                            link: MailTemplates.linkPlaceholder, validMinutes: max(1, Int((lifetime / 60).rounded())))
            } else {
                // The owners' reply as it is now: none left (removed, hidden, its comment gone) is nothing to tell.
                let reply = try await tx.query("""
                    SELECT c.id, c.name, m.reply_text FROM comments m JOIN cafes c ON c.id = m.cafe_id
                    WHERE m.id = \(due.comment ?? 0) AND m.reply_text IS NOT NULL AND m.reply_hidden_at IS NULL
                    """)
                guard let reply = reply.first else { return try await finish("skipped") }
                text = MailTemplates.ownerReply(language, username: username, cafeName: try reply.decode(1), reply: try reply.decode(2),
                                                baseURL: due.baseURL, cafe: try reply.decode(0))
                lifetime = settings.verificationLifetime
            }
            let expires: Date = try await tx.query("""
                UPDATE mail_outbox SET user_id = \(user.rawValue), subject = \(text.subject), body = \(text.body),
                    expires_at = now() + make_interval(secs => \(lifetime))
                WHERE id = \(due.id) RETURNING expires_at
                """).one().decode(0)
            return Due(id: due.id, kind: due.kind, recipient: email, user: user, language: language, baseURL: due.baseURL,
                       subject: text.subject, body: text.body, expiresAt: expires, attempts: due.attempts, comment: due.comment)
        }
    }

    private func deliver(_ due: Due) async throws {
        guard let subject = due.subject, let text = due.body, let user = due.user, let expires = due.expiresAt else { return }
        if expires < Date() {
            try await pool.query("UPDATE mail_outbox SET state = 'expired', body = NULL, finished_at = now() WHERE id = \(due.id)")
            return
        }
        guard MailMessage.isDeliverable(due.recipient) else {
            try await finishFailed(due, "the address cannot be sent to as it is (it has characters SMTP headers do not take)")
            return
        }
        var body = text
        if let purpose = due.kind.accountLink {
            // This attempt's link, committed before the mail can arrive; written into the text here only.
            let token = try await pool.transaction { tx in
                try await AccountTokens.issue(purpose, for: user, email: due.recipient, mail: due.id, expiresAt: expires, tx)
            }
            body = text.replacingOccurrences(of: MailTemplates.linkPlaceholder, with: MailTemplates.link(purpose, baseURL: due.baseURL, token: token))
        }
        guard let transport else {
            try await pool.query("UPDATE mail_outbox SET state = 'kept', finished_at = now() WHERE id = \(due.id)")
            keep(due.recipient, subject, body)
            return
        }
        let host = URLComponents(string: due.baseURL)?.host ?? "localhost"
        let message = MailMessage(from: settings.from, to: due.recipient, subject: subject, body: body,
                                  messageID: "cafe-mail-\(due.id)@\(host)", date: Date())
        switch transport.send(message) {
        case .sent:
            try await pool.query("UPDATE mail_outbox SET state = 'sent', body = NULL, attempts = attempts + 1, last_error = NULL, finished_at = now() WHERE id = \(due.id)")
            logger.debug("mail sent", [("id", String(due.id)), ("kind", due.kind.rawValue)])
        case .refused(let why):
            try await finishFailed(due, why)
        case .failed(let why):
            let wait = min(settings.retryMax, pow(2, Double(min(due.attempts, 30))))
            try await pool.query("""
                UPDATE mail_outbox SET attempts = attempts + 1, last_error = \(String(why.prefix(500))),
                    next_attempt_at = now() + make_interval(secs => \(wait))
                WHERE id = \(due.id)
                """)
            logger.warning("mail not delivered, will retry", [("id", String(due.id)), ("error", why), ("retry_in_s", String(wait)),
                                                               ("server", transport.redactedURL)])
        }
    }

    private func finishFailed(_ due: Due, _ why: String) async throws {
        try await pool.query("""
            UPDATE mail_outbox SET state = 'failed', body = NULL, attempts = attempts + 1, last_error = \(String(why.prefix(500))), finished_at = now()
            WHERE id = \(due.id)
            """)
        logger.warning("mail refused for good", [("id", String(due.id)), ("error", why)])
    }
}
