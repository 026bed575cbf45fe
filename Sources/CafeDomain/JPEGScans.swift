/// The scans of a JPEG, counted from its markers without decoding anything.
///
/// A progressive JPEG is decoded scan by scan, and every scan passes over the whole image: one of
/// 7000 × 7000 pixels with 2,647 legal scans (each an end-of-band run, 533 KB in all) took about 30 s to
/// decode. Cameras and phones write one scan (baseline) or about ten (libjpeg's and mozjpeg's
/// progressive scripts: 10 for colour, at most a few dozen for any encoder seen), so an upload with more
/// than `PhotoLimits.maxJPEGScans` (`PHOTO_MAX_JPEG_SCANS`, default 64) is refused before its decode
/// starts. Counting costs one pass over the bytes.
public enum JPEGScans {
    /// The number of start-of-scan markers before the end of the image; nil when `bytes` is no JPEG.
    public static func count(_ bytes: [UInt8]) -> Int? {
        bytes.withUnsafeBufferPointer { count(in: $0) }
    }

    static func count(in bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        let n = bytes.count
        guard n >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var scans = 0
        var i = 2
        while i + 1 < n {
            guard bytes[i] == 0xFF else { i += 1; continue }   // stray bytes between segments: skip them
            let marker = bytes[i + 1]
            switch marker {
            case 0xFF:   // fill byte before a marker
                i += 1
            case 0xD9:   // end of image
                return scans
            case 0x01, 0xD0...0xD7:   // markers without a length
                i += 2
            default:
                guard i + 3 < n else { return scans }
                let length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                i += 2 + max(length, 2)
                guard marker == 0xDA else { continue }
                scans += 1
                // The entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor a restart.
                while i + 1 < n {
                    if bytes[i] == 0xFF, bytes[i + 1] != 0x00, !(0xD0...0xD7).contains(bytes[i + 1]) { break }
                    i += 1
                }
            }
        }
        return scans
    }
}
