#if canImport(Glibc)
import Glibc
#endif
import CafeApp
import Foundation
import JSONLogging
import HelperProcesses
import PhotoCodec
import CafeStore

// Helpers of a serving process (`PhotoCodecProcesses`, `PasswordHashingProcesses`): nothing else of
// the command line, no configuration, no logger; they speak only over their pipes.
switch CommandLine.arguments.dropFirst().first {
case "photo-codec": exit(PhotoCodecServer.serve(niceness: CommandLine.arguments.dropFirst(2).first.flatMap { Int32($0) } ?? 0))
case "password-hasher": exit(PasswordHasherServer.serve(niceness: CommandLine.arguments.dropFirst(2).first.flatMap { Int32($0) } ?? 0))
default: break
}
// This executable answers the helpers' commands above, whatever its file is called: it runs its own helpers.
HelperExecutable.useThisExecutable()

// Entry point: pick the subcommand, run it, turn errors into a message and a non-zero status.
// (No C callbacks here: closures at the top level of main.swift are bound to the main actor.)

let config = Configuration()
let logger = Logger(label: "cafe", minimum: config.logLevel)
var arguments = Array(CommandLine.arguments.dropFirst())
let command = arguments.isEmpty ? "--help" : arguments.removeFirst()
// A setting the service cannot use stops every command at once, naming the variable (EX_CONFIG).
if !config.invalid.isEmpty, !["--help", "-h", "help"].contains(command) {
    FileHandle.standardError.write(Data(("cafe: " + config.invalid.joined(separator: "\ncafe: ") + "\n").utf8))
    exit(78)
}

let status: Int32
do {
    switch command {
    case "serve": status = try Commands.serve(arguments, config: config, logger: logger)
    case "worker": status = try Commands.worker(arguments, config: config, logger: logger)
    case "migrate": status = try Commands.migrate(arguments, config: config, logger: logger)
    case "seed": status = try Commands.seed(arguments, config: config, logger: logger)
    case "import-parse": status = try Commands.importParse(arguments, config: config, logger: logger)
    case "photos": status = try Commands.photos(arguments, config: config, logger: logger)
    case "database": status = try Commands.database(arguments, config: config, logger: logger)
    case "backup": status = try Commands.backup(arguments, config: config, logger: logger)
    case "restore": status = try Commands.restore(arguments, config: config, logger: logger)
    case "admin": status = try Commands.admin(arguments, config: config, logger: logger)
    case "--help", "-h", "help": print(Commands.usage); status = 0
    default:
        FileHandle.standardError.write(Data("cafe: unknown command '\(command)'\n\n\(Commands.usage)\n".utf8))
        status = 64
    }
} catch let error as Arguments.Invalid {
    FileHandle.standardError.write(Data("cafe \(command): \(error)\n".utf8))
    status = 64
} catch {
    logger.error("\(command) failed", [("error", String(describing: error))])
    status = 1
}
exit(status)
