import CUsernameSpoof

/// Usernames that cannot pass for another (UTS 39, through ICU's `uspoof`): a name must keep to the
/// "moderately restrictive" profile — one script, or Latin with one other that is not Cyrillic or
/// Greek (so `аdmin`, with a Cyrillic а, is refused), no invisible characters, one system of digits —
/// and no two accounts may share a confusable skeleton (Cyrillic `сосоа` and Latin `cocoa` are one name here,
/// as `Alice` and `alice` are). Skeletons are of the lower-cased name and kept in
/// `users.username_skeleton` (migration 0021).
public enum UsernameSpoofing {
    /// Whether the name keeps to the profile (false also when ICU cannot say).
    public static func isAllowed(_ username: String) -> Bool {
        let utf8 = Array(username.utf8)
        return utf8.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { cafe_username_allowed($0.baseAddress, Int32($0.count)) == 1 }
        }
    }

    /// The confusable skeleton of the lower-cased name; nil when ICU cannot make one.
    public static func skeleton(_ username: String) -> String? {
        let utf8 = Array(username.lowercased().utf8)
        guard utf8.count < 4096 else { return nil }
        var out = [CChar](repeating: 0, count: utf8.count * 18 + 16)
        let capacity = Int32(out.count)
        let written = utf8.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { cafe_username_skeleton($0.baseAddress, Int32($0.count), &out, capacity) }
        }
        guard written >= 0, Int(written) <= out.count else { return nil }
        return String(decoding: out.prefix(Int(written)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
