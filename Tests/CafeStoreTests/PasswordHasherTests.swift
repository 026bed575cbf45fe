@testable import CafeStore
import Foundation
import HelperProcesses
import IOReadiness
import Synchronization
import XCTest

/// argon2id through libsodium: a hash verifies its own password and no other, every byte of the
/// password counts (a NUL inside one too, which JSON's `\u0000` can send), and a hash that is neither
/// argon2id nor bcrypt verifies nothing.
final class PasswordHasherTests: XCTestCase {
    func testAHashVerifiesItsPasswordAndNoOther() throws {
        let hash = try PasswordHasher.hash("correct horse battery")
        XCTAssertTrue(hash.hasPrefix("$argon2id$"), hash)
        XCTAssertTrue(PasswordHasher.verify("correct horse battery", against: hash))
        XCTAssertFalse(PasswordHasher.verify("correct horse batter", against: hash))
        XCTAssertFalse(PasswordHasher.verify("", against: hash))
        XCTAssertFalse(PasswordHasher.verify("correct horse battery", against: "!"))
    }

    func testEveryByteCountsANulInsideToo() throws {
        let hash = try PasswordHasher.hash("before\u{0}after")
        XCTAssertTrue(PasswordHasher.verify("before\u{0}after", against: hash))
        XCTAssertFalse(PasswordHasher.verify("before", against: hash))
        XCTAssertFalse(PasswordHasher.verify("before\u{0}other", against: hash))
        let multibyte = try PasswordHasher.hash("珈琲とケーキ")
        XCTAssertTrue(PasswordHasher.verify("珈琲とケーキ", against: multibyte))
        XCTAssertFalse(PasswordHasher.verify("珈琲とケー", against: multibyte))
    }
}

/// The helper processes themselves (`cafe password-hasher`, the binary beside this test runner): what
/// one computes is what this process computes, and a helper that cannot start or answer in time is
/// no answer (the caller then computes it here). A caller awaits its helper and holds no thread.
final class PasswordHashingProcessesTests: XCTestCase {
    private let readiness = Readiness(name: "test-readiness")

    private func helpers(_ executable: String, concurrency: Int = 2, timeout: Double = 30) -> PasswordHashingProcesses {
        PasswordHashingProcesses(executable: executable, niceness: 0, concurrency: concurrency, readiness: readiness, timeout: timeout)
    }

    func testAHelpersHashesAreThisProcesssAndTheOtherWayRound() async throws {
        let helpers = helpers(try XCTUnwrap(HelperExecutable.cafe(), "the cafe binary beside the tests"))
        let hashed = await helpers.hash("made by a helper")
        let theirs = try XCTUnwrap(hashed)
        XCTAssertTrue(PasswordHasher.verify("made by a helper", against: theirs))
        XCTAssertFalse(PasswordHasher.verify("made by a helpe", against: theirs))
        let ours = try PasswordHasher.hash("made here\u{0}too")
        let withNUL = await helpers.verify("made here\u{0}too", against: ours)
        XCTAssertEqual(withNUL, true, "every byte reaches the helper, a NUL too")
        let cut = await helpers.verify("made here", against: ours)
        XCTAssertEqual(cut, false)
        let unusable = await helpers.verify("anything", against: "!")
        XCTAssertEqual(unusable, false, "no usable hash matches nothing")
    }

    func testNoHelperMeansNoAnswer() async throws {
        let missing = await helpers("/nonexistent/cafe").hash("x")
        XCTAssertNil(missing)
        let impatient = helpers(try XCTUnwrap(HelperExecutable.cafe()), timeout: 0.000_001)
        let late = await impatient.verify("x", against: PasswordHasher.dummyHash)
        XCTAssertNil(late, "killed when it does not answer in time")
    }

    /// On a single thread, a task awaiting its helper lets another task run to its end meanwhile.
    func testAWaitingCallerHoldsNoThread() async throws {
        let helpers = helpers(try XCTUnwrap(HelperExecutable.cafe()))
        let thread = OneThread()
        let order = Record()
        let hashing = Task(executorPreference: thread) {
            let hash = await helpers.hash("a password")
            order.note("hashed")
            return hash
        }
        try await Task.sleep(nanoseconds: 5_000_000)   // the hash is under way in its helper (tens of milliseconds)
        await Task(executorPreference: thread) { order.note("other task") }.value
        let hash = await hashing.value
        XCTAssertNotNil(hash)
        XCTAssertEqual(order.notes, ["other task", "hashed"])
    }
}

/// What tasks noted, in order.
private final class Record: Sendable {
    private let entries = Mutex<[String]>([])
    func note(_ entry: String) { entries.withLock { $0.append(entry) } }
    var notes: [String] { entries.withLock { $0 } }
}

/// A task executor of one thread, for telling whether a task holds it.
private final class OneThread: TaskExecutor, @unchecked Sendable {   // the queue is only touched under `lock`
    private let lock = NSLock()
    private let ready = DispatchSemaphore(value: 0)
    private var jobs: [UnownedJob] = []

    init() {
        Thread { [self] in
            while true {
                ready.wait()
                lock.lock()
                let job = jobs.removeFirst()
                lock.unlock()
                job.runSynchronously(on: asUnownedTaskExecutor())
            }
        }.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        jobs.append(job)
        lock.unlock()
        ready.signal()
    }
}

/// At most so many at once in `Turns.run`, the others awaiting their turn; every one gets it.
final class TurnsTests: XCTestCase {
    func testAtMostSoManyAtOnceAndEveryoneInTurn() async {
        let turns = Turns(2)
        let count = Inside()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    await turns.run {
                        count.enter()
                        try? await Task.sleep(nanoseconds: 5_000_000)
                        count.leave()
                    }
                }
            }
        }
        XCTAssertEqual(count.most, 2)
        XCTAssertEqual(count.entered, 12)
    }
}

/// How many are inside at once, at most, and how many entered.
private final class Inside: Sendable {
    private let state = Mutex((now: 0, most: 0, entered: 0))
    func enter() { state.withLock { $0.now += 1; $0.entered += 1; $0.most = max($0.most, $0.now) } }
    func leave() { state.withLock { $0.now -= 1 } }
    var most: Int { state.withLock { $0.most } }
    var entered: Int { state.withLock { $0.entered } }
}
