/// The photo formats accepted for upload, recognised by their magic bytes — the declared
/// Content-Type must match what the bytes really are.
public enum ImageFormat: String, Sendable, CaseIterable {
    case png = "image/png"
    case jpeg = "image/jpeg"
    case webp = "image/webp"
    case gif = "image/gif"

    public static let maxBytes = 5 * 1024 * 1024

    public var contentType: String { rawValue }

    public static func detect(_ bytes: [UInt8]) -> ImageFormat? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        return nil
    }
}
