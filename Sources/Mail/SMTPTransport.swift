import CMailTransfer

/// Sends one message at a time through libcurl's SMTP (`SMTP_URL`): `smtp://user:pass@host:587`
/// upgrades with STARTTLS whenever the server offers it, and refuses to send without it when
/// `requireTLS` (`SMTP_REQUIRE_TLS=1`); `smtps://…:465` is TLS from the start.
public struct SMTPTransport: Sendable {
    public let url: String
    public let requireTLS: Bool
    /// `SMTP_CA_FILE`: authorities to check the server's certificate against instead of the system's.
    public let caFile: String?
    public let timeout: Double

    public init(url: String, requireTLS: Bool, caFile: String?, timeout: Double) {
        self.url = url
        self.requireTLS = requireTLS
        self.caFile = caFile
        self.timeout = timeout
    }

    public enum Outcome: Sendable, Equatable {
        case sent
        /// The server refused the message for good (a 5xx reply): retrying would be refused again.
        case refused(String)
        /// Not delivered this time (no connection, a timeout, a 4xx reply, no TLS when it is required).
        case failed(String)
    }

    /// The URL with its password replaced, for logs and errors.
    public var redactedURL: String { Self.redact(url) }

    static func redact(_ url: String) -> String {
        guard let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@") else { return url }
        let userinfo = url[scheme.upperBound..<at]
        let user = userinfo.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
        return String(url[..<scheme.upperBound]) + user + ":***" + String(url[at...])
    }

    public func send(_ message: MailMessage) -> Outcome {
        let text = message.rendered
        var result = cafe_mail_result()
        let code = text.withCString { bytes in
            cafe_mail_send(url, MailMessage.address(of: message.from), message.to, bytes, text.utf8.count, requireTLS ? 1 : 0, caFile,
                           Int(timeout * 1000), &result)
        }
        if code == 0 { return .sent }
        let error = withUnsafeBytes(of: &result.error) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let reply = result.smtp_code
        let detail = reply > 0 ? "\(error) (reply \(reply))" : error
        // A mailbox the server will never take (550–553); any other refusal (authentication, policy) may be the
        // operator's to fix, so it is retried until the link expires.
        return (550...553).contains(reply) ? .refused(detail) : .failed(detail)
    }
}
