#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Synchronization

/// A progress bar on standard error for long commands (`seed`, `import-parse`), redrawn in place;
/// nothing when standard error is not a terminal (logs stay clean).
struct ProgressLine {
    let label: String
    let unit: String
    let started = Date()
    let terminal = isatty(STDERR_FILENO) == 1

    func update(_ done: Int, of total: Int) {
        guard terminal else { return }
        let rate = Double(done) / max(-started.timeIntervalSinceNow, 0.001)
        let fraction = Double(done) / Double(max(total, 1))
        let filled = Int(fraction * 30)
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 30 - filled)
        FileHandle.standardError.write(Data(String(format: "\r%@ %@ %3.0f%%  %d/%d %@, %.0f %@/s   ",
                                                   label, bar, fraction * 100, done, total, unit, rate, unit).utf8))
    }

    /// Ends the line the bar was drawn on.
    func finish() {
        if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

/// The progress of a command's steps in turn, from any thread: a new line when the unit counted changes
/// (the seed's cafes, then the indexes it builds, then the bitmaps' chunks).
final class StepProgress: Sendable {
    private let line: Mutex<ProgressLine>

    init(_ first: ProgressLine) { line = Mutex(first) }

    func update(_ label: String, _ done: Int, of total: Int, unit: String) {
        line.withLock { line in
            if line.unit != unit || line.label != label {
                line.finish()
                line = ProgressLine(label: label, unit: unit)
            }
            line.update(done, of: total)
        }
    }

    func finish() { line.withLock { $0.finish() } }
}
