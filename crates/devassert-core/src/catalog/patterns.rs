//! The patterns catalog files share (`catalog/patterns.toml`), each defined
//! once. A pattern field written `{ pattern = "token_table" }` deserialises
//! to the shared regex itself, so every reader (matching, the rule pages,
//! the `[[log_fact]]` rows) sees the text as if it were written in place.

use super::files::{PATTERNS_FILE, PATTERNS_FILE_JSON};
use serde::{de::Error as _, Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::sync::OnceLock;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    pattern: BTreeMap<String, String>,
}

/// The shared patterns by name. A broken file gives none: every reference
/// then fails to load with its name, which the catalog's tests catch.
pub fn shared() -> &'static BTreeMap<String, String> {
    static SHARED: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    SHARED.get_or_init(|| {
        serde_json::from_str::<File>(PATTERNS_FILE_JSON.1)
            .map(|f| f.pattern)
            .unwrap_or_default()
    })
}

/// A pattern as a catalog file writes it: the regex, or a shared one's name.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Text(String),
    Named(Reference),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reference {
    pattern: String,
}

/// `deserialize_with` for an optional pattern field (give it
/// `#[serde(default)]` too): the regex, with a shared one's name replaced by
/// its text.
pub fn opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    match Written::deserialize(d)? {
        Written::Text(t) => Ok(Some(t)),
        Written::Named(Reference { pattern }) => {
            shared().get(&pattern).cloned().map(Some).ok_or_else(|| {
                D::Error::custom(format!(
                    "no shared pattern {pattern:?} in {}",
                    PATTERNS_FILE.0
                ))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize)]
    struct Row {
        #[serde(default, deserialize_with = "opt")]
        frame: Option<String>,
    }

    #[test]
    fn the_shared_file_parses_and_names_the_token_table() {
        let f: File = toml::from_str(PATTERNS_FILE.1).expect("patterns.toml parses");
        assert_eq!(&f.pattern, shared());
        let t = &shared()["token_table"];
        let re = regex::Regex::new(t).expect("compiles");
        assert!(re.is_match("inputs_embeds = self.embed_tokens(input_ids)"));
        assert!(re.is_match("x = self.tok_emb(idx)"));
        assert!(!re.is_match("pos = self.wpe(position_ids)"));
    }

    #[test]
    fn a_named_pattern_reads_as_its_text_and_an_unknown_name_fails() {
        let row: Row = toml::from_str("frame = { pattern = \"token_table\" }").expect("named");
        assert_eq!(row.frame.as_deref(), Some(shared()["token_table"].as_str()));
        let row: Row = toml::from_str("frame = 'x'").expect("text");
        assert_eq!(row.frame.as_deref(), Some("x"));
        let row: Row = toml::from_str("").expect("absent");
        assert_eq!(row.frame, None);
        let e = toml::from_str::<Row>("frame = { pattern = \"nope\" }")
            .expect_err("an unknown name fails");
        assert!(
            e.to_string()
                .contains("no shared pattern \"nope\" in patterns.toml"),
            "{e}"
        );
    }
}
