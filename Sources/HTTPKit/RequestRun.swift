import CMicroHTTPD
import Dispatch
import Synchronization

/// One request's task as the connection that waits for it sees it, and the task's executor: its jobs
/// run on the thread that reads the connection, in libmicrohttpd's calls for it. The task starts at once
/// on that thread (`Task.immediate`): one that does not await anything is answered within the call that
/// read it, with no other thread involved; one that awaits (a statement, a helper's pipe) has its
/// connection suspended meanwhile, and the job that resumes it wakes the connection, whose thread runs
/// it: the answer is rendered and sent there. That is how an event loop runs tasks (SwiftNIO's
/// `EventLoop` as a `TaskExecutor`), with libmicrohttpd's threads as the loops.
final class RequestRun: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var answer: Response?
        /// The connection is suspended until a job or the answer arrives.
        var parked = false
        /// libmicrohttpd has let go of the connection: jobs run on Dispatch's threads from now on.
        var detached = false
    }

    private let state = Mutex(State())
    /// Only handed to `suspensions`, which libmicrohttpd lets any thread call.
    private nonisolated(unsafe) let connection: OpaquePointer
    private let suspensions: Suspensions

    init(connection: OpaquePointer, suspensions: Suspensions) {
        self.connection = connection
        self.suspensions = suspensions
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let (detached, wake) = state.withLock { state -> (Bool, Bool) in
            guard !state.detached else { return (true, false) }
            state.jobs.append(job)
            defer { state.parked = false }
            return (false, state.parked)
        }
        if detached {
            DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        } else if wake {
            suspensions.resume(connection)
        }
    }

    /// The task's answer: sent on the connection's next call (woken for it if suspended).
    func finish(with response: Response) {
        let wake = state.withLock { state -> Bool in
            state.answer = response
            defer { state.parked = false }
            return state.parked
        }
        if wake { suspensions.resume(connection) }
    }

    /// On the connection's thread: runs the jobs queued, until none is left or the answer is in.
    func runJobs() -> Response? {
        while true {
            let (answer, ready) = state.withLock { state -> (Response?, [UnownedJob]) in
                if let answer = state.answer { return (answer, []) }
                defer { state.jobs.removeAll() }
                return (nil, state.jobs)
            }
            if let answer { return answer }
            if ready.isEmpty { return nil }
            for job in ready { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }

    /// On the connection's thread: suspends the connection until a job or the answer arrives, unless one
    /// came meanwhile (false: run again). Also false when the server is stopping; `stopping` says so.
    func park(_ request: RequestState) -> (parked: Bool, stopping: Bool) {
        state.withLock { state in
            guard state.jobs.isEmpty, state.answer == nil else { return (false, false) }
            guard suspensions.suspend(connection, request) else { return (false, true) }
            state.parked = true
            return (true, false)
        }
    }

    /// libmicrohttpd is done with the connection (closed, or the server stops): whatever the task still
    /// does runs elsewhere, and its answer goes nowhere.
    func detach() {
        let left = state.withLock { state -> [UnownedJob] in
            state.detached = true
            defer { state.jobs.removeAll() }
            return state.jobs
        }
        for job in left { DispatchQueue.global().async { job.runSynchronously(on: self.asUnownedTaskExecutor()) } }
    }
}
