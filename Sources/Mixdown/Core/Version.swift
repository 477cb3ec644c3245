/// The library's version (semantic versioning): what the CLI's `--version`, the C API's
/// `mixdown_version()` and `mixdown.pc` report.
public enum MixdownVersion {
    public static let major = 0
    public static let minor = 3
    public static let patch = 0
    /// "MAJOR.MINOR.PATCH".
    public static var string: String { "\(major).\(minor).\(patch)" }
    /// MAJOR · 10000 + MINOR · 100 + PATCH.
    public static var number: Int { major * 10_000 + minor * 100 + patch }
}
