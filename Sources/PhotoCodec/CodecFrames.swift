#if canImport(Glibc)
import Glibc
#endif
import CafeDomain
import CSystem
import HelperProcesses

/// The messages between the service and a `cafe photo-codec` helper over its pipes: fixed-size
/// little-endian headers, then the bytes. Both ends are the same binary, so the layout is private.
enum CodecOperation: Int32 {
    case clean = 1
    case resize = 2
}

struct CodecRequest {
    static let headerSize = 40
    let operation: CodecOperation
    let format: Int32
    let maxPixels: Int64
    let maxSide: Int32
    let quality: Int32
    let width: Int32
    let encoding: Int32

    func header(length: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.headerSize)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: operation.rawValue)), 4)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: format)), 4)
        HelperFrames.append(&out, UInt64(bitPattern: maxPixels), 8)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: maxSide)), 4)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: quality)), 4)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: width)), 4)
        HelperFrames.append(&out, UInt64(UInt32(bitPattern: encoding)), 4)
        HelperFrames.append(&out, UInt64(length), 8)
        return out
    }

    /// The header and its body length; nil for one no service wrote.
    static func parse(_ header: [UInt8]) -> (CodecRequest, Int)? {
        guard header.count == headerSize, let operation = CodecOperation(rawValue: HelperFrames.int32(header, 0)) else { return nil }
        let length = HelperFrames.uint64(header, 32)
        guard length <= UInt64(HelperFrames.maxLength) else { return nil }
        return (CodecRequest(operation: operation, format: HelperFrames.int32(header, 4), maxPixels: Int64(bitPattern: HelperFrames.uint64(header, 8)),
                             maxSide: HelperFrames.int32(header, 16), quality: HelperFrames.int32(header, 20), width: HelperFrames.int32(header, 24),
                             encoding: HelperFrames.int32(header, 28)), Int(length))
    }
}

/// `result` is `PhotoCodec`'s: 0 the photo, else a refusal whose message is the body.
struct CodecAnswer {
    static let headerSize = 24
    let result: Int32
    let encoding: Int32
    let width: Int32
    let height: Int32
    let length: Int
    var body: [UInt8] = []

    init(result: Int32, encoding: Int32, width: Int32, height: Int32, body: [UInt8]) {
        (self.result, self.encoding, self.width, self.height, self.length, self.body) = (result, encoding, width, height, body.count, body)
    }

    init(header: [UInt8]) {
        result = HelperFrames.int32(header, 0)
        encoding = HelperFrames.int32(header, 4)
        width = HelperFrames.int32(header, 8)
        height = HelperFrames.int32(header, 12)
        length = Int(clamping: HelperFrames.uint64(header, 16))
    }

    func with(body: [UInt8]) -> CodecAnswer { CodecAnswer(result: result, encoding: encoding, width: width, height: height, body: body) }

    var frame: [UInt8] {
        var out: [UInt8] = []
        for value in [result, encoding, width, height] { HelperFrames.append(&out, UInt64(UInt32(bitPattern: value)), 4) }
        HelperFrames.append(&out, UInt64(body.count), 8)
        return out + body
    }

    func photo(width requested: Int) throws(PhotoRefusal) -> EncodedPhoto {
        let message = String(decoding: body, as: UTF8.self)
        switch result {
        case 0:
            guard let encoding = PhotoEncoding(code: encoding) else { throw .failed("the helper named no encoding") }
            return EncodedPhoto(bytes: body, encoding: encoding, width: Int(width), height: Int(height))
        case 1: throw .undecodable(message)
        case 2: throw .tooManyPixels(width: Int(width), height: Int(height), limit: Int(message) ?? 0)
        case 4: throw .tooManyScans(scans: Int(width), limit: Int(message) ?? 0)
        default: throw .failed(message)
        }
    }

    init(_ outcome: Result<EncodedPhoto, PhotoRefusal>) {
        switch outcome {
        case .success(let photo):
            self.init(result: 0, encoding: photo.encoding.code, width: Int32(clamping: photo.width), height: Int32(clamping: photo.height), body: photo.bytes)
        case .failure(.undecodable(let why)):
            self.init(result: 1, encoding: 0, width: 0, height: 0, body: Array(why.utf8))
        case .failure(.tooManyPixels(let width, let height, let limit)):
            self.init(result: 2, encoding: 0, width: Int32(clamping: width), height: Int32(clamping: height), body: Array(String(limit).utf8))
        case .failure(.tooManyScans(let scans, let limit)):
            self.init(result: 4, encoding: 0, width: Int32(clamping: scans), height: 0, body: Array(String(limit).utf8))
        case .failure(.failed(let why)):
            self.init(result: 3, encoding: 0, width: 0, height: 0, body: Array(why.utf8))
        }
    }
}

/// `cafe photo-codec`: a helper's whole life. Reads a request from stdin, answers on stdout, until
/// stdin ends (the service closed the pipe, or died).
public enum PhotoCodecServer {
    /// `niceness`: see `PhotoCodecProcesses`.
    public static func serve(niceness: Int32) -> Int32 {
        _ = cafe_become_niced_helper(niceness)
        while true {
            guard let header = HelperFrames.read(0, count: CodecRequest.headerSize) else { return 0 }
            guard let (request, length) = CodecRequest.parse(header), let bytes = HelperFrames.read(0, count: length) else { return 65 }
            let outcome: Result<EncodedPhoto, PhotoRefusal>
            switch request.operation {
            case .clean:
                guard let format = ImageFormat.allCases.first(where: { $0.codecFormat == request.format }) else { return 65 }
                outcome = Result { () throws(PhotoRefusal) in
                    // The scans were counted by the service before it sent the photo (`PhotoCodecProcesses.clean`).
                    try PhotoCodec.clean(bytes, format: format, limits: PhotoLimits(maxPixels: Int(request.maxPixels), maxSide: Int(request.maxSide),
                                                                                quality: Int(request.quality), maxJPEGScans: .max))
                }
            case .resize:
                guard let encoding = PhotoEncoding(code: request.encoding) else { return 65 }
                outcome = Result { () throws(PhotoRefusal) in try PhotoCodec.resize(bytes, width: Int(request.width), to: encoding) }
            }
            guard HelperFrames.write(1, CodecAnswer(outcome).frame) else { return 0 }
        }
    }
}
