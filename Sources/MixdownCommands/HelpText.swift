/// A command's discussion as written in the source (lines wrapped to the source's width)
/// made into paragraphs: the lines of each paragraph (paragraphs are separated by a blank
/// line) joined by single spaces, so that the argument parser wraps the text once, to the
/// terminal's width. Wrapped twice, a line of the source that was longer than the terminal
/// left one or two words on a line of their own. A line that starts with "- " starts a
/// list item; one that starts with a space is kept as it is (an example).
func paragraphs(_ text: String) -> String {
    text.components(separatedBy: "\n\n").map { block in
        var lines: [String] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if let last = lines.last, !line.hasPrefix("- "), !line.hasPrefix(" "), !last.hasPrefix(" "), !line.isEmpty {
                lines[lines.count - 1] = last + " " + line
            } else {
                lines.append(line)
            }
        }
        return lines.joined(separator: "\n")
    }.joined(separator: "\n\n")
}
