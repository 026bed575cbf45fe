import CafeDomain

/// The texts of the mails, in Japanese and English. The first link of every mail is its action link;
/// the links open pages of the web client, whose address fragment carries the token (a fragment is
/// never sent to a server, so the token is in no access log and no `Referer`).
enum MailTemplates {
    /// Where the link stands in a mail's text as the database keeps it: the link itself is written in
    /// only as the mail is sent (`MailDelivery`), so the outbox and the console never hold a live one.
    static let linkPlaceholder = "[the link is written in as the mail is sent]"

    static func link(_ purpose: AccountTokens.Purpose, baseURL: String, token: String) -> String {
        switch purpose {
        case .passwordReset: "\(baseURL)/#/reset-password/\(token)"
        case .emailVerification: "\(baseURL)/#/verify-email/\(token)"
        }
    }

    /// The mail telling a comment's author that the cafe's owners answered it: the cafe's page, and the reply.
    static func ownerReply(_ language: Language, username: String, cafeName: String, reply: String, baseURL: String, cafe: Int64) -> (subject: String, body: String) {
        let link = "\(baseURL)/#/cafes/\(cafe)"
        switch language {
        case .ja:
            return ("【CafeReview】\(cafeName) のオーナーがあなたのコメントに返信しました", """
                \(link)

                \(username) さん

                \(cafeName) のオーナーが、あなたのコメントに返信しました。

                \(reply)

                上のリンクから、お店のページで読めます。
                """)
        case .en:
            return ("The owner of \(cafeName) answered your comment", """
                \(link)

                Hello \(username),

                The owner of \(cafeName) answered your comment on CafeReview:

                \(reply)

                Read it on the cafe's page: the link above.
                """)
        }
    }

    /// An account mail: its link is the account token's.
    static func render(_ purpose: AccountTokens.Purpose, _ language: Language, username: String, link: String, validMinutes: Int) -> (subject: String, body: String) {
        let hours = validMinutes % 60 == 0 ? validMinutes / 60 : nil
        switch (purpose, language) {
        case (.passwordReset, .ja):
            let span = hours.map { "\($0)時間" } ?? "\(validMinutes)分"
            return ("【CafeReview】パスワードの再設定", """
                \(link)

                \(username) さん

                CafeReview のパスワード再設定が依頼されました。上のリンクを開いて、新しいパスワードを設定してください。
                リンクは\(span)有効で、一度だけ使えます。

                心当たりがない場合は、このメールを無視してください。パスワードは変わりません。
                """)
        case (.passwordReset, .en):
            let span = hours.map { "\($0) hour\($0 == 1 ? "" : "s")" } ?? "\(validMinutes) minutes"
            return ("Reset your CafeReview password", """
                \(link)

                Hello \(username),

                Someone asked to reset the password of your CafeReview account. Open the link above to choose a new one.
                It works once, for \(span).

                If it was not you, ignore this mail: your password stays as it is.
                """)
        case (.emailVerification, .ja):
            let span = hours.map { "\($0)時間" } ?? "\(validMinutes)分"
            return ("【CafeReview】メールアドレスの確認", """
                \(link)

                \(username) さん

                上のリンクを開いて、このメールアドレスが CafeReview のアカウントのものであることを確認してください。
                リンクは\(span)有効です。

                心当たりがない場合は、このメールを無視してください。
                """)
        case (.emailVerification, .en):
            let span = hours.map { "\($0) hour\($0 == 1 ? "" : "s")" } ?? "\(validMinutes) minutes"
            return ("Confirm your e-mail address for CafeReview", """
                \(link)

                Hello \(username),

                Open the link above to confirm that this address belongs to your CafeReview account.
                It works for \(span).

                If it was not you, ignore this mail.
                """)
        }
    }
}
