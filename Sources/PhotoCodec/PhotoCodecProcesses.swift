#if canImport(Glibc)
import Glibc
#endif
import CafeDomain
import CSystem
import Synchronization

/// Photos are decoded in helper processes (`cafe photo-codec`), never in the process that serves
/// requests: JPEG, PNG, WebP, GIF, HEIF and AVIF decoders are large C libraries fed bytes from the
/// network, and one that crashes or runs away must cost one helper and one upload, not every request
/// in flight. Each helper is limited to `memoryLimit` bytes of address space, is killed if an answer
/// takes longer than `timeout`, dies with this process, and is replaced on the next call. As many
/// helpers run as callers use at once; the photo lane (`PHOTO_THREADS`) bounds that.
public final class PhotoCodecProcesses: PhotoCoding {
    let executable: String
    let timeout: Double
    let memoryLimit: Int
    private let idle = Mutex<[Helper]>([])

    /// `executable` is the `cafe` binary (see `cafeExecutable`).
    public init(executable: String, timeout: Double, memoryLimit: Int) {
        self.executable = executable
        self.timeout = timeout
        self.memoryLimit = memoryLimit
        // A helper that died leaves a pipe whose write would otherwise kill this process with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        for helper in idle.withLock({ $0 }) { helper.stop() }
    }

    public func clean(_ bytes: [UInt8], format: ImageFormat, limits: PhotoLimits) throws(PhotoRefusal) -> EncodedPhoto {
        try call(.init(operation: .clean, format: format.codecFormat, maxPixels: Int64(limits.maxPixels), maxSide: Int32(clamping: limits.maxSide),
                       quality: Int32(clamping: limits.quality), width: 0, encoding: 0), bytes)
    }

    public func resize(_ photo: [UInt8], width: Int, to encoding: PhotoEncoding) throws(PhotoRefusal) -> EncodedPhoto {
        try call(.init(operation: .resize, format: 0, maxPixels: 0, maxSide: 0, quality: Int32(PhotoCodec.sizeQuality),
                       width: Int32(clamping: width), encoding: encoding.code), photo)
    }

    /// Set by the `cafe` program's entry point (`runHelpersWithThisExecutable`).
    private static let thisExecutableIsCafe = Atomic<Bool>(false)

    /// Called by the `cafe` program before it serves: its own executable answers `photo-codec`, so it
    /// runs the helpers whatever its file is called (an operator may install it as `cafereview`).
    public static func runHelpersWithThisExecutable() {
        thisExecutableIsCafe.store(true, ordering: .relaxed)
    }

    /// The `cafe` executable that runs the helpers: this process's own when it is the `cafe` program,
    /// otherwise (a test runner) the `cafe` beside it. Nil when there is none.
    public static func cafeExecutable() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        let own = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if thisExecutableIsCafe.load(ordering: .relaxed) { return own }
        let sibling = own.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/") + "/cafe"
        return access(sibling, X_OK) == 0 ? sibling : nil
    }

    private func call(_ request: CodecRequest, _ bytes: [UInt8]) throws(PhotoRefusal) -> EncodedPhoto {
        // An idle helper may have died since its last answer (killed, say): that is no fault of this file.
        var helper: Helper
        while true {
            if let reused = idle.withLock({ $0.popLast() }) {
                if reused.isAlive { helper = reused; break }
                reused.stop()
                continue
            }
            guard let started = Helper.start(executable, memoryLimit: memoryLimit) else {
                throw .failed("could not start \(executable) photo-codec: \(String(cString: strerror(errno)))")
            }
            helper = started
            break
        }
        switch helper.exchange(request, bytes, timeout: timeout) {
        case .answer(let answer):
            idle.withLock { $0.append(helper) }
            return try answer.photo(width: Int(request.width))
        case .timedOut:
            helper.stop()
            throw .undecodable("decoding took longer than \(timeout) s (PHOTO_DECODE_TIMEOUT)")
        case .died(let how):
            helper.stop()
            throw .undecodable("the decoder stopped on this file (\(how))")
        }
    }
}

/// One helper process and the two pipes to it.
private final class Helper: @unchecked Sendable {
    let pid: pid_t
    let toChild: Int32
    let fromChild: Int32

    private init(pid: pid_t, toChild: Int32, fromChild: Int32) {
        (self.pid, self.toChild, self.fromChild) = (pid, toChild, fromChild)
    }

    static func start(_ executable: String, memoryLimit: Int) -> Helper? {
        var toChild: Int32 = -1, fromChild: Int32 = -1
        let argv = [strdup(executable), strdup("photo-codec"), nil]
        defer { argv.forEach { free($0) } }
        let pid = cafe_spawn_with_pipes(executable, argv, Int64(memoryLimit), &toChild, &fromChild)
        guard pid > 0 else { return nil }
        return Helper(pid: pid, toChild: toChild, fromChild: fromChild)
    }

    var isAlive: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Kills and reaps it (it may be dead already) and closes its pipes.
    func stop() {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(toChild)
        close(fromChild)
    }

    enum Outcome {
        case answer(CodecAnswer)
        case timedOut
        case died(String)
    }

    func exchange(_ request: CodecRequest, _ bytes: [UInt8], timeout: Double) -> Outcome {
        let deadline = monotonicSeconds() + timeout
        guard CodecFrames.write(toChild, request.header(length: bytes.count)), CodecFrames.write(toChild, bytes) else { return .died(exitDescription()) }
        guard let header = CodecFrames.read(fromChild, count: CodecAnswer.headerSize, deadline: deadline) else {
            return monotonicSeconds() >= deadline ? .timedOut : .died(exitDescription())
        }
        let answer = CodecAnswer(header: header)
        guard answer.length <= CodecFrames.maxLength, let body = CodecFrames.read(fromChild, count: answer.length, deadline: deadline) else {
            return monotonicSeconds() >= deadline ? .timedOut : .died(exitDescription())
        }
        return .answer(answer.with(body: body))
    }

    /// How the helper ended, once it has (waited for briefly: the pipe closes as it dies).
    private func exitDescription() -> String {
        var status: Int32 = 0
        for _ in 0..<50 {
            if waitpid(pid, &status, WNOHANG) == pid {
                let signal = status & 0x7F
                return signal != 0 ? "killed by signal \(signal)" : "exit status \((status >> 8) & 0xFF)"
            }
            usleep(2_000)
        }
        return "its pipe closed"
    }
}

/// Seconds on the monotonic clock, for deadlines.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
