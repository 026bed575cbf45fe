import CZlib

/// gzip (RFC 1952) of a whole body in one call to zlib's deflate.
///
/// Level 3 with a hash table of memory level 5 rather than zlib's 6 and 8: for a 7 KB page of JSON the
/// output is 8% larger than level 6's and made in a fifth of the time (21 µs against 110 µs with zlib's
/// defaults), most of which was deflate clearing its tables; an uncached page pays it on every answer
/// (docs/performance.md, "Compression").
enum Gzip {
    static let level: Int32 = 3
    static let memoryLevel: Int32 = 5
    /// 15 bits of window, plus 16: write the gzip wrapper rather than zlib's.
    static let windowBits: Int32 = 15 + 16

    /// The gzip form of `bytes`, or nil when it is not smaller (the input was compressed already).
    static func compress(_ bytes: UnsafeBufferPointer<UInt8>) -> ResponseBody? {
        guard let input = bytes.baseAddress, bytes.count > 0, bytes.count < Int(UInt32.max) else { return nil }
        var stream = z_stream()
        guard deflateInit2_(&stream, level, Z_DEFLATED, windowBits, memoryLevel, Z_DEFAULT_STRATEGY,
                            zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count)))
        let output = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        stream.next_in = UnsafeMutablePointer(mutating: input)
        stream.avail_in = uInt(bytes.count)
        stream.next_out = output
        stream.avail_out = uInt(capacity)
        // deflateBound's room is enough for Z_FINISH to end the stream in this one call.
        guard deflate(&stream, Z_FINISH) == Z_STREAM_END, Int(stream.total_out) < bytes.count else {
            output.deallocate()
            return nil
        }
        return ResponseBody(adopting: output, count: Int(stream.total_out), allocated: capacity).compacted()
    }
}
