import Foundation

/// Runs a command-line tool the tests use (curl, vips) and returns what it printed; nil when it
/// could not be started. Its standard error is dropped.
func toolOutput(_ tool: String, _ args: [String]) -> String? {
    guard let child = try? ChildProcess(tool, args, errors: .discarded) else { return nil }
    child.waitForOutputEnd(timeout: .infinity)
    _ = child.waitForExit(timeout: .infinity)
    return child.output
}
