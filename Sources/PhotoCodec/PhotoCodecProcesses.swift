#if canImport(Glibc)
import Glibc
#endif
import CafeDomain
import HelperProcesses
import IOReadiness

/// Photos are decoded in helper processes (`cafe photo-codec`), never in the process that serves
/// requests: JPEG, PNG, WebP, GIF, HEIF and AVIF decoders are large C libraries fed bytes from the
/// network, and one that crashes or runs away must cost one helper and one upload, not every request
/// in flight. Each helper is limited to `memoryLimit` bytes of address space, is killed if an answer
/// takes longer than `timeout`, dies with this process, and is replaced on the next call. At most
/// `concurrency` helpers work at once (`PHOTO_THREADS`), the other callers awaiting their turn; a caller
/// awaits its helper's pipes (`Readiness`) and holds no thread while the photo is decoded.
///
/// Each helper runs at `niceness` (`PHOTO_NICE`) in the serving process's session, so in its scheduling
/// group, behind its requests: in a session of its own, however niced, the list's p99 beside eight
/// uploaders was 20–30× its p99 alone, in the serving process's 2.4× (docs/performance.md, "Photos").
/// Unlike the password helpers it is not SCHED_IDLE: on a machine kept busy by reads, an upload must
/// still finish within `PHOTO_DECODE_TIMEOUT`.
public final class PhotoCodecProcesses: PhotoCoding {
    let executable: String
    let timeout: Double
    let memoryLimit: Int
    let niceness: Int32
    private let idle = IdleHelpers()
    private let turns: Turns
    private let readiness: Readiness

    /// `executable` is the `cafe` binary (see `HelperExecutable.cafe`).
    public init(executable: String, timeout: Double, memoryLimit: Int, niceness: Int32, concurrency: Int, readiness: Readiness) {
        self.executable = executable
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        self.niceness = niceness
        turns = Turns(concurrency)
        self.readiness = readiness
    }

    public func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) async throws(PhotoRefusal) -> EncodedPhoto {
        try limits.refuseBeforeDecoding(bytes, format: format)
        return try await call(.init(operation: .clean, format: format.codecFormat, maxPixels: Int64(limits.maxPixels), maxSide: Int32(clamping: limits.maxSide),
                       quality: Int32(clamping: limits.quality), width: 0, encoding: 0), bytes)
    }

    public func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) async throws(PhotoRefusal) -> EncodedPhoto {
        try await call(.init(operation: .resize, format: 0, maxPixels: 0, maxSide: 0, quality: Int32(PhotoCodec.sizeQuality),
                       width: Int32(clamping: width), encoding: encoding.code), photo)
    }

    private func call(_ request: CodecRequest, _ bytes: [UInt8]) async throws(PhotoRefusal) -> EncodedPhoto {
        try await turns.run { () async -> Result<EncodedPhoto, PhotoRefusal> in
            // An idle helper that died since its last answer (killed, say) is no fault of this file: `take` skips it.
            guard let helper = idle.take() ?? HelperProcess.start(executable, ["photo-codec", String(niceness)], memoryLimit: memoryLimit) else {
                return .failure(.failed("could not start \(executable) photo-codec: \(String(cString: strerror(errno)))"))
            }
            switch await exchange(helper, request, bytes) {
            case .answer(let answer):
                idle.put(helper)
                return Result { () throws(PhotoRefusal) in try answer.photo(width: Int(request.width)) }
            case .timedOut:
                helper.stop()
                return .failure(.undecodable("decoding took longer than \(timeout) s (PHOTO_DECODE_TIMEOUT)"))
            case .died(let how):
                helper.stop()
                return .failure(.undecodable("the decoder stopped on this file (\(how))"))
            }
        }.get()
    }

    private enum Outcome {
        case answer(CodecAnswer)
        case timedOut
        case died(String)
    }

    private func exchange(_ helper: HelperProcess, _ request: CodecRequest, _ bytes: [UInt8]) async -> Outcome {
        let deadline = MonotonicClock.seconds() + timeout
        guard await helper.send(request.header(length: bytes.count), until: deadline, on: readiness),
              await helper.send(bytes, until: deadline, on: readiness) else {
            return MonotonicClock.seconds() >= deadline ? .timedOut : .died(helper.exitDescription())
        }
        guard let header = await helper.receive(count: CodecAnswer.headerSize, until: deadline, on: readiness) else {
            return MonotonicClock.seconds() >= deadline ? .timedOut : .died(helper.exitDescription())
        }
        let answer = CodecAnswer(header: header)
        guard answer.length <= HelperFrames.maxLength, let body = await helper.receive(count: answer.length, until: deadline, on: readiness) else {
            return MonotonicClock.seconds() >= deadline ? .timedOut : .died(helper.exitDescription())
        }
        return .answer(answer.with(body: body))
    }
}
