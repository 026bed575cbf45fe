import Foundation

extension ParseImport.Report {
    /// What `cafe import-parse` prints: what was read, what was (or would be) imported, every
    /// skipped row and why, and what the import changed.
    var summary: String {
        var out: [String] = []
        out.append(dryRun ? "Dry run: nothing was written." : "Import finished.")
        out.append("Read:")
        for f in files { out.append("  \(f.file): \(f.objects) objects (\(f.format))") }
        for f in unreadable { out.append("  \(f.file): \(f.reason)") }
        let classes = [("_User", "users"), ("CafeMaster", "cafes"), ("CafeTransactionComment", "comments")]
        let line = classes.map { "\(imported[$0.0] ?? 0) \($0.1)" }.joined(separator: ", ") + ", \(photos) photos"
        out.append((dryRun ? "Would import: " : "Imported: ") + line)
        let already = classes.compactMap { c in plan.alreadyImported[c.0].map { "\($0) \(c.1)" } }
        if !already.isEmpty { out.append("Already imported by an earlier run (left as they are): " + already.joined(separator: ", ")) }
        if imported.values.allSatisfy({ $0 == 0 }) && !already.isEmpty { out.append("Nothing new to import.") }
        if plan.skipped.isEmpty {
            out.append("Skipped: none.")
        } else {
            out.append("Skipped \(plan.skipped.count) rows (fix them in the export and run again; what was imported stays):")
            for p in plan.skipped { out.append("  \(p.className) \(p.objectID): \(p.message)") }
        }
        if !plan.notes.isEmpty {
            out.append("Changed on the way in:")
            for p in plan.notes { out.append("  \(p.className) \(p.objectID): \(p.message)") }
        }
        if plan.withoutPassword > 0 {
            out.append("\(plan.withoutPassword) accounts come without a password hash (a REST export never carries one; mongoexport's "
                       + "_hashed_password does): they cannot log in until an operator sets a password.")
        }
        if !plan.users.isEmpty { out.append("Passwords: bcrypt hashes are kept as they are and replaced by argon2id at each account's first log-in.") }
        let (wrong, compared) = wrongAggregates
        out.append("Aggregates: commentSum and commentAmount are \(dryRun ? "to be counted" : "counted") from the imported comments, "
                   + "never copied; the export had them wrong for \(wrong) of the \(compared) cafes that carried them.")
        // Names, ids and messages come from the export: a control character in one must not drive the terminal.
        return out.map(Self.terminalSafe).joined(separator: "\n")
    }

    /// Control characters (C0, DEL, C1: an escape sequence starts with one) and the marks that
    /// reorder or hide text (bidirectional overrides, line separators) written as `\u{1B}`.
    static func terminalSafe(_ line: String) -> String {
        var safe = ""
        for scalar in line.unicodeScalars {
            let v = scalar.value
            if v < 0x20 || (0x7F...0x9F).contains(v) || (0x200E...0x200F).contains(v) || (0x2028...0x202E).contains(v)
                || (0x2066...0x2069).contains(v) {
                safe += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                safe.unicodeScalars.append(scalar)
            }
        }
        return safe
    }
}
