import Foundation
import Testing
@testable import Mixdown

/// What editors' exports hold that a reader must render as the editor does, or name.
@Suite struct OTIOEditorCasesTests {
    typealias R = OTIOChannelRoutingTests
    typealias T = OTIOTimelineTests

    static func clip(_ start: Int, _ duration: Int, effects: String = "[]") -> String {
        "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"src\", \"source_range\": \(T.range(start, duration, "24")), \"effects\": \(effects), "
            + "\"media_reference\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"src.wav\"}}"
    }

    static func dissolve(_ inOffset: Int, _ outOffset: Int) -> String {
        "{\"OTIO_SCHEMA\": \"Transition.1\", \"transition_type\": \"SMPTE_Dissolve\", \"in_offset\": \(T.rt(inOffset, "24")), \"out_offset\": \(T.rt(outOffset, "24"))}"
    }

    /// A dissolve that needs media past the file's end (the 1 s file's last 6 frames cut,
    /// then 12 frames of out_offset) or before its start says the file is too short, names
    /// the transition and how much media it needs.
    @Test func aTransitionPastItsMediaSaysTheFileIsTooShort() throws {
        let late = R.timeline([R.track("a", [Self.clip(12, 12), Self.dissolve(6, 12), Self.clip(0, 12)])])
        #expect { try R.render(late, channels: 1) } throws: { e in
            "\(e)".contains("tracks[0].children[1]") && "\(e)".contains("the file is too short") && "\(e)".contains("needs 0.500000 s of")
        }
        let early = R.timeline([R.track("a", [Self.clip(0, 12), Self.dissolve(6, 6), Self.clip(2, 12)])])
        #expect { try R.render(early, channels: 1) } throws: { e in
            "\(e)".contains("tracks[0].children[2]") && "\(e)".contains("the file is too short") && "\(e)".contains("(tracks[0].children[1]) needs 0.250000 s")
        }
    }

    /// A FreezeFrame holds the picture; editors apply it to video alone, so a clip's sound
    /// plays at its own speed (noted), where a timeline of hundreds of clips was refused.
    @Test func aFreezeFrameOnAClipPlaysItsSound() throws {
        let freeze = "[{\"OTIO_SCHEMA\": \"FreezeFrame.1\", \"name\": \"\", \"effect_name\": \"FreezeFrame\", \"time_scalar\": 0.0}]"
        let r = try R.render(R.timeline([R.track("a", [Self.clip(0, 24, effects: freeze)])]), channels: 1)
        R.expectSource(r.planes, [[0]])
        #expect(r.doc.translationNotes.contains { $0.contains("FreezeFrame holds the picture") })
    }
}

extension OTIOEditorCasesTests {
    /// One file declared twice with different lengths (an XML that gives a <file> in full
    /// twice): the clip outside the shorter declaration is refused, naming both.
    @Test func aFileDeclaredTwiceWithDifferentLengthsNamesBoth() throws {
        func clip(_ start: Int, _ duration: Int, available: Int) -> String {
            "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"src\", \"source_range\": \(T.range(start, duration, "24")), "
                + "\"media_reference\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"src.wav\", \"available_range\": \(T.range(0, available, "24"))}}"
        }
        let text = R.timeline([R.track("a", [clip(0, 12, available: 24)]), R.track("b", [clip(12, 12, available: 12)])])
        #expect { try R.render(text, channels: 1) } throws: { e in
            "\(e)".contains("tracks[1].children[0].source_range") && "\(e)".contains("declared twice with different lengths")
                && "\(e)".contains("tracks[0].children[0].media_reference.available_range says 0.0-1.0 s")
        }
    }
}
