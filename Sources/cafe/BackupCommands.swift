#if canImport(Glibc)
import Glibc
#endif
import Backups
import CafeApp
import Foundation
import JSONLogging
import PostgresKit

/// `cafe backup` and `cafe restore` (see docs/operations.md, "Backups and restore").
extension Commands {
    static let backupHelp = """
        Usage: cafe backup now [--full | --diff] | list | check
               cafe backup configure --output FILE [--user ROLE] DATA_DIR:PORT:SOCKET_DIR…

          now        take a backup at once: full when the repository has none of the last 7 days, else
                     differential (--full, --diff choose); the worker takes one a day by itself
          list       the backups in the repository, oldest first, and the window a restore can reach
          check      the repository is reachable and takes a WAL switch
          configure  write a pgBackRest configuration (stanza cafe) for a deployment's own nodes (a primary
                     and its standbys: backups are read from a standby) and BACKUP_REPO, for its
                     archive_command and for BACKUP_CONFIG; ROLE is the superuser (default postgres)

        Environment: BACKUP_REPO (a directory, default backups/ beside the embedded cluster, or
        s3://BUCKET[/PREFIX] with the AWS variables; off), with DATABASE_URL BACKUP_CONFIG instead,
        BACKUP_RETENTION_DAYS (14), BACKUP_MAX_LOSS (60 s).
        """

    static func backup(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["output", "user"], boolean: ["full", "diff", "help"])
        if args.has("help") { print(backupHelp); return 0 }
        if args.positional.first == "configure" { return try configure(args, config: config) }
        switch args.positional {
        case ["now"]:
            guard !(args.has("full") && args.has("diff")) else { throw Arguments.Invalid(description: "--full or --diff, not both") }
            let kind: BackupKind? = args.has("full") ? .full : args.has("diff") ? .diff : nil
            step("taking a backup")
            let backup = try Blocking.run { try await Service.backupNow(config, kind: kind, logger: logger) }
            print("\(backup.label)  \(backup.kind)  \(BackupInfo.megabytes(backup.databaseBytes)) of database, \(BackupInfo.megabytes(backup.repositoryBytes)) added to the repository, "
                  + String(format: "%.0f s", backup.stopped.timeIntervalSince(backup.started)))
        case ["list"]:
            let info = try Service.backupList(config)
            print("repository: \(config.backup.repository)  (\(info.status))")
            for backup in info.backups {
                print("\(backup.label)  \(backup.kind.padding(toLength: 4, withPad: " ", startingAt: 0))  \(RecoveryTarget.isoText(backup.started)) – "
                      + "\(RecoveryTarget.isoText(backup.stopped))  \(BackupInfo.megabytes(backup.databaseBytes)), \(BackupInfo.megabytes(backup.repositoryBytes)) in the repository")
            }
            if let start = info.windowStart {
                print("a restore can reach any time from \(RecoveryTarget.isoText(start)) to the last archived WAL"
                      + (info.archiveRange.map { " (\($0.last))" } ?? ""))
            } else {
                print("no backup yet: cafe backup now takes one")
            }
        case ["check"]:
            step("checking the repository")
            try Blocking.run { try await Service.backupCheck(config, logger: logger) }
            print("the repository \(config.backup.repository) takes WAL and backups")
        default:
            print(backupHelp)
            return 64
        }
        return 0
    }

    /// `cafe backup configure`: BACKUP_REPO is named, never defaulted to the embedded cluster's.
    static func configure(_ args: Arguments, config: Configuration) throws -> Int32 {
        guard let output = args["output"], output.hasPrefix("/") else { throw Arguments.Invalid(description: "--output FILE: an absolute path") }
        guard ProcessInfo.processInfo.environment["BACKUP_REPO"] != nil, config.backup.isOn else {
            throw Arguments.Invalid(description: "cafe backup configure writes BACKUP_REPO's repository: set it (a directory or s3://BUCKET[/PREFIX])")
        }
        let nodes = try args.positional.dropFirst().map { text -> PgBackRest.Node in
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].hasPrefix("/"), parts[2].hasPrefix("/"), let port = Int(parts[1]), (1...65_535).contains(port) else {
                throw Arguments.Invalid(description: "\(text): a node is DATA_DIR:PORT:SOCKET_DIR, both directories absolute")
            }
            return PgBackRest.Node(dataDirectory: URL(fileURLWithPath: String(parts[0])), port: port, socketDirectory: URL(fileURLWithPath: String(parts[2])))
        }
        guard !nodes.isEmpty else { throw Arguments.Invalid(description: "name at least one node: DATA_DIR:PORT:SOCKET_DIR") }
        let backRest = try PgBackRest.configure(config.backup, nodes: nodes, user: args["user"] ?? "postgres", configFile: URL(fileURLWithPath: output))
        print(backRest.configFile.path)
        return 0
    }

    static let restoreHelp = """
        Usage: cafe restore --to TIME | --latest [--into DIR] [--switch]

          --to TIME    recover to TIME: ISO-8601 (2026-12-05T07:40:12Z, or with an offset such as +09:00)
                       or PostgreSQL's 2026-12-05 07:40:12+00
          --latest     recover to the end of the archive
          --into DIR   the directory to restore into (absent or empty; default restored-… beside the cluster)
          --switch     with the service stopped, make the restored copy the service's database; the old
                       directory is kept under a new name, and archiving resumes on the new timeline

        The copy is started with archiving held (the repository is not changed), its migrations checked,
        every cafe's aggregates reconciled and every photo object looked for; then it is stopped and its
        directory printed.
        """

    static func restore(_ raw: [String], config: Configuration, logger: Logger) throws -> Int32 {
        let args = try Arguments(raw, valued: ["to", "into"], boolean: ["latest", "switch", "help"])
        if args.has("help") { print(restoreHelp); return 0 }
        let target: RecoveryTarget
        switch (args["to"], args.has("latest")) {
        case (let text?, false):
            guard let time = RecoveryTarget.parseTime(text) else {
                throw Arguments.Invalid(description: "--to \(text): not a time with its zone (2026-12-05T07:40:12Z, 2026-12-05T16:40:12+09:00 or 2026-12-05 07:40:12+00)")
            }
            target = .time(time)
        case (nil, true): target = .latest
        default: throw Arguments.Invalid(description: "give --to TIME or --latest (one of them)")
        }
        guard args.positional.isEmpty else { throw Arguments.Invalid(description: "unexpected \(args.positional.joined(separator: " "))") }
        let into = args["into"].map { URL(fileURLWithPath: $0) }
        let outcome: Service.RestoreOutcome
        do {
            outcome = try Blocking.run {
                try await Service.restore(config, to: target, into: into, switchOver: args.has("switch"), logger: logger) { step($0) }
            }
        } catch let refused as RestoreRefused {
            FileHandle.standardError.write(Data("cafe restore: \(refused)\n".utf8))
            return 1
        }
        print("restored \(outcome.backup.label) to \(target)")
        if outcome.pendingMigrations.isEmpty {
            print("migrations: current; aggregates reconciled (\(outcome.drifted) cafe(s) had drifted)")
        } else {
            print("migrations pending: \(outcome.pendingMigrations.map(String.init).joined(separator: ", ")) (cafe serve applies them)")
        }
        if outcome.missingPhotos.isEmpty {
            print("photos: all \(outcome.photosChecked) objects present")
        } else {
            print("photos: \(outcome.missingPhotos.count) of \(outcome.photosChecked + (config.photoStore == nil ? outcome.missingPhotos.count : 0)) objects MISSING:")
            for key in outcome.missingPhotos.prefix(100) { print("  \(key)") }
        }
        if let replaced = outcome.replacedDirectory {
            print("the service's database is now the restored copy; the one it replaced is kept in \(replaced.path)")
        }
        print(outcome.directory.path)
        return outcome.missingPhotos.isEmpty ? 0 : 2
    }

    /// A step of a long command, on standard error when it is a terminal.
    static func step(_ line: String) {
        guard isatty(STDERR_FILENO) == 1 else { return }
        FileHandle.standardError.write(Data("… \(line)\n".utf8))
    }
}
