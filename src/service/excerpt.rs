//! Client-supplied text in error messages, cut to a bound: a status never echoes unbounded
//! input into its header.

/// Most characters of client-supplied text quoted in an error message.
const EXCERPT_CHARS: usize = 80;

/// The first `chars` characters of `text`, when it has more.
fn cut(text: &str, chars: usize) -> Option<&str> {
    text.char_indices().nth(chars).map(|(end, _)| &text[..end])
}

/// Client-supplied text for an error message: quoted, and cut to a short prefix (with its
/// full length) when long.
pub(crate) fn excerpt(text: &str) -> String {
    match cut(text, EXCERPT_CHARS) {
        None => format!("{text:?}"),
        Some(prefix) => format!("{prefix:?}... ({} bytes)", text.len()),
    }
}

/// `text` as it is, cut to its first `chars` characters (with its full length) when longer:
/// for a decoder's text, whose field names come from the schema.
pub(crate) fn cut_to(text: &str, chars: usize) -> String {
    match cut(text, chars) {
        None => text.to_string(),
        Some(prefix) => format!("{prefix}... ({} bytes)", text.len()),
    }
}

/// Most characters kept of tonic's text about request bytes that do not decode.
const DECODER_TEXT_CHARS: usize = 400;

/// Tonic's text about undecodable request bytes (prost's path of message and field names,
/// innermost first, and what was wrong): it comes from the schema and the decoder, not from
/// the client, so it is kept whole, not cut to an excerpt whose first words would leave out
/// the outer fields. Bounded all the same, as tonic's text, not ours; a text of another shape
/// is quoted as client text would be (`from_decoder` false).
pub(crate) fn decoder_text(text: &str, from_decoder: bool) -> String {
    if from_decoder {
        schema_text(text)
    } else {
        excerpt(text)
    }
}

/// A decoder's text (gRPC's or JSON's: field names from the schema, values from the client),
/// cut to [`DECODER_TEXT_CHARS`] characters.
pub(crate) fn schema_text(text: &str) -> String {
    cut_to(text, DECODER_TEXT_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_only_past_its_bound() {
        let at_bound = "é".repeat(EXCERPT_CHARS);
        assert_eq!(excerpt(&at_bound), format!("{at_bound:?}"));
        let past = format!("{at_bound}x");
        assert_eq!(
            excerpt(&past),
            format!("{at_bound:?}... ({} bytes)", past.len())
        );
        assert_eq!(cut_to("abcd", 4), "abcd");
        assert_eq!(cut_to("abcde", 4), "abcd... (5 bytes)");
    }
}
