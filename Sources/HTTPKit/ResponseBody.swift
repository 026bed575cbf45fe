import Synchronization

/// The bytes of an answer: written once, never changed, shared by reference. A page a `JSONWriter`
/// wrote becomes a body without a copy (`JSONWriter.body()`), and libmicrohttpd sends it from this
/// memory, holding a reference until the last byte is out. So a page of 100 comments is not copied
/// twice on its way out (into an array, then into libmicrohttpd's own buffer), and a cached page or a
/// photo is not copied once per answer.
///
/// Its gzip form is made the first time an answer needs it and kept with the bytes: a page the cache
/// holds, or a file of the web client, is compressed once, however many clients ask for it.
public final class ResponseBody: @unchecked Sendable {   // the bytes never change after init; the gzip form is set once, atomically
    private let storage: UnsafeMutablePointer<UInt8>
    private let gzipForm = AtomicLazyReference<ResponseBody>()
    public let count: Int
    /// The memory it holds, which may be more than `count` (a writer's buffer, adopted as it was).
    public let allocatedBytes: Int

    /// Takes over `storage`, `allocated` bytes of which `count` are the body; freed with the body.
    init(adopting storage: UnsafeMutablePointer<UInt8>, count: Int, allocated: Int) {
        self.storage = storage
        self.count = count
        allocatedBytes = allocated
    }

    /// A copy of `bytes`.
    public convenience init(_ bytes: [UInt8]) {
        let storage = bytes.withUnsafeBufferPointer { Self.copy(of: $0) }
        self.init(adopting: storage, count: bytes.count, allocated: max(bytes.count, 1))
    }

    /// New memory of their size (at least one byte) holding the bytes at `source`.
    private static func copy(of source: UnsafeBufferPointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(source.count, 1))
        if let base = source.baseAddress { storage.update(from: base, count: source.count) }
        return storage
    }

    /// A copy of the UTF-8 of `text`.
    public convenience init(_ text: String) { self.init(Array(text.utf8)) }

    public static let empty = ResponseBody([])
    /// What `gzipForm` holds when gzip does not make a body smaller.
    private static let noGain = ResponseBody([])

    /// These bytes gzipped (made once, then kept), or nil when that is not smaller.
    public var gzipped: ResponseBody? {
        let form = gzipForm.load() ?? gzipForm.storeIfNil(withUnsafeBytes { Gzip.compress($0) } ?? Self.noGain)
        return form === Self.noGain ? nil : form
    }

    /// The memory this body holds, its gzip form (if made) included: what the page cache counts.
    public var retainedBytes: Int {
        guard let form = gzipForm.load(), form !== Self.noGain else { return allocatedBytes }
        return allocatedBytes + form.allocatedBytes
    }

    deinit { storage.deallocate() }

    public var isEmpty: Bool { count == 0 }

    /// The bytes as an array (a copy): for the few that keep or combine bodies (the idempotency
    /// store, a Parse batch), and for tests.
    public var bytes: [UInt8] { [UInt8](UnsafeBufferPointer(start: storage, count: count)) }

    public func withUnsafeBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage, count: count))
    }

    /// A strong ETag of these bytes (FNV-1a, 64 bits): it only has to change when the bytes do, and
    /// is the same in every replica and release for the same bytes.
    public var strongETag: String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        withUnsafeBytes { for b in $0 { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 } }
        return "\"p\(String(hash, radix: 36))\""
    }

    /// This body in memory of its own size: for one kept long (the page cache), so that a small page
    /// does not hold the rest of the writer's buffer.
    public func compacted() -> ResponseBody {
        guard allocatedBytes - count >= 1024 else { return self }
        return ResponseBody(adopting: Self.copy(of: UnsafeBufferPointer(start: storage, count: count)), count: count, allocated: max(count, 1))
    }

    /// The start of the bytes, for libmicrohttpd, which sends from it while it holds a reference
    /// (`Unmanaged.passRetained`) released by its free callback.
    var baseAddress: UnsafeMutableRawPointer { UnsafeMutableRawPointer(storage) }
}
