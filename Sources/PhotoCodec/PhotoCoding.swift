import CafeDomain

/// What the stores ask of a photo codec. `InProcessPhotoCodec` does the work in this process;
/// `PhotoCodecProcesses` hands it to helper processes that run it, so that a decoder that crashes
/// or runs away on a hostile file takes only its helper with it.
public protocol PhotoCoding: Sendable {
    func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) async throws(PhotoRefusal) -> EncodedPhoto
    func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) async throws(PhotoRefusal) -> EncodedPhoto
}

/// libvips in this very process (`PhotoCodec`), on the caller's thread: what tests of the stores use
/// where no helper is wanted.
public struct InProcessPhotoCodec: PhotoCoding {
    public init() {}

    public func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) async throws(PhotoRefusal) -> EncodedPhoto {
        try limits.refuseBeforeDecoding(bytes, format: format)
        return try PhotoCodec.clean(bytes, format: format, limits: limits)
    }

    public func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) async throws(PhotoRefusal) -> EncodedPhoto {
        try PhotoCodec.resize(photo, width: width, to: encoding)
    }
}
