import Foundation

/// The names the kernel gives this process's threads (`/proc/self/task/*/comm`): what `top -H`,
/// `perf` and `/proc` show an operator looking for a thread.
public func kernelThreadNames() -> [String] {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
    return tasks.compactMap { task in
        (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }
}
