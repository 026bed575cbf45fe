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
/// takes longer than `timeout`, dies with this process, and is replaced on the next call. As many
/// helpers run as callers use at once; the photo lane (`PHOTO_THREADS`) bounds that.
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

    /// `executable` is the `cafe` binary (see `HelperExecutable.cafe`).
    public init(executable: String, timeout: Double, memoryLimit: Int, niceness: Int32) {
        self.executable = executable
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        self.niceness = niceness
    }

    public func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) throws(PhotoRefusal) -> EncodedPhoto {
        try limits.refuseBeforeDecoding(bytes, format: format)
        return try call(.init(operation: .clean, format: format.codecFormat, maxPixels: Int64(limits.maxPixels), maxSide: Int32(clamping: limits.maxSide),
                       quality: Int32(clamping: limits.quality), width: 0, encoding: 0), bytes)
    }

    public func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) throws(PhotoRefusal) -> EncodedPhoto {
        try call(.init(operation: .resize, format: 0, maxPixels: 0, maxSide: 0, quality: Int32(PhotoCodec.sizeQuality),
                       width: Int32(clamping: width), encoding: encoding.code), photo)
    }

    private func call(_ request: CodecRequest, _ bytes: [UInt8]) throws(PhotoRefusal) -> EncodedPhoto {
        // An idle helper that died since its last answer (killed, say) is no fault of this file: `take` skips it.
        guard let helper = idle.take() ?? HelperProcess.start(executable, ["photo-codec", String(niceness)], memoryLimit: memoryLimit) else {
            throw .failed("could not start \(executable) photo-codec: \(String(cString: strerror(errno)))")
        }
        switch exchange(helper, request, bytes) {
        case .answer(let answer):
            idle.put(helper)
            return try answer.photo(width: Int(request.width))
        case .timedOut:
            helper.stop()
            throw .undecodable("decoding took longer than \(timeout) s (PHOTO_DECODE_TIMEOUT)")
        case .died(let how):
            helper.stop()
            throw .undecodable("the decoder stopped on this file (\(how))")
        }
    }

    private enum Outcome {
        case answer(CodecAnswer)
        case timedOut
        case died(String)
    }

    private func exchange(_ helper: HelperProcess, _ request: CodecRequest, _ bytes: [UInt8]) -> Outcome {
        let deadline = MonotonicClock.seconds() + timeout
        guard helper.send(request.header(length: bytes.count)), helper.send(bytes) else { return .died(helper.exitDescription()) }
        guard let header = helper.receive(count: CodecAnswer.headerSize, deadline: deadline) else {
            return MonotonicClock.seconds() >= deadline ? .timedOut : .died(helper.exitDescription())
        }
        let answer = CodecAnswer(header: header)
        guard answer.length <= HelperFrames.maxLength, let body = helper.receive(count: answer.length, deadline: deadline) else {
            return MonotonicClock.seconds() >= deadline ? .timedOut : .died(helper.exitDescription())
        }
        return .answer(answer.with(body: body))
    }
}
