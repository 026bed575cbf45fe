import Foundation

/// A plain-text message in UTF-8 as RFC 5322 and RFC 2047 spell it: the subject as an encoded word
/// (Japanese survives every server), the body base64 in lines of 76, CRLF line ends.
public struct MailMessage: Sendable, Equatable {
    public var from: String
    public var to: String
    public var subject: String
    public var body: String
    /// Stable per outbox row, so a message delivered twice (at-least-once) is recognisably the same one.
    public var messageID: String
    public var date: Date

    public init(from: String, to: String, subject: String, body: String, messageID: String, date: Date) {
        self.from = from
        self.to = to
        self.subject = subject
        self.body = body
        self.messageID = messageID
        self.date = date
    }

    /// The address of a `From` value (`Name <a@b>` or `a@b`): the envelope sender.
    public static func address(of from: String) -> String {
        if let open = from.lastIndex(of: "<"), let close = from.lastIndex(of: ">"), open < close {
            return String(from[from.index(after: open)..<close])
        }
        return from
    }

    /// Whether an address can go into an SMTP envelope and a header as it is: printable ASCII, one `@`,
    /// none of the characters that end an address or a header. Others are never sent (not silently mangled).
    public static func isDeliverable(_ address: String) -> Bool {
        let forbidden = Set("<>()[]\\,;:\"".utf8)
        let bytes = Array(address.utf8)
        return bytes.count <= 254 && bytes.filter { $0 == UInt8(ascii: "@") }.count == 1
            && bytes.allSatisfy { $0 > 32 && $0 < 127 && !forbidden.contains($0) }
    }

    public var rendered: String {
        var lines = [
            "From: \(from)",
            "To: \(to)",
            "Subject: \(Self.encodedWord(subject))",
            "Date: \(Self.rfc5322Date(date))",
            "Message-ID: <\(messageID)>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=UTF-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        let encoded = Data(body.utf8).base64EncodedString()
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// `=?UTF-8?B?…?=` words of at most 45 bytes of text each (75 characters encoded), split between characters.
    static func encodedWord(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) && text.utf8.count <= 70 { return text }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in text {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45, !chunk.isEmpty {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=") }
        return words.joined(separator: "\r\n ")
    }

    static func rfc5322Date(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss '+0000'"
        return formatter.string(from: date)
    }
}
