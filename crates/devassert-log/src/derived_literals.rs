//! The catalog regexes' literal requirements (`literals`), derived by the
//! build script from `catalog/*.toml` and embedded, keyed by pattern:
//! parsing each regex at every start was a fifth of explaining an empty
//! log. A pattern the table lacks (a catalog given at run time) is derived
//! here and now.

use crate::literals::{best_index, pattern_requirement, Requirement};

/// A pattern, its literal sets, and where the best of them is.
type Entry = (
    &'static str,
    &'static [&'static [&'static [u8]]],
    Option<usize>,
);

include!(concat!(env!("OUT_DIR"), "/derived_literals.rs"));

/// A catalog regex's requirement, and where its best set is in it.
#[derive(Debug, PartialEq, Eq)]
pub struct Derived {
    pub sets: Requirement,
    /// `literals::best_set`'s index.
    pub best: Option<usize>,
}

/// `pattern`'s requirement (None: it has none): the embedded one, else
/// derived now.
pub fn requirement_of(pattern: &str) -> Option<Derived> {
    match embedded(pattern) {
        Some(derived) => derived,
        None => derive(pattern),
    }
}

/// What the build script derives, derived now.
fn derive(pattern: &str) -> Option<Derived> {
    let sets = pattern_requirement(pattern)?;
    let best = best_index(&sets);
    Some(Derived { sets, best })
}

/// The build script's requirement of `pattern` (its inner None: the
/// pattern has none), None when the table lacks the pattern.
fn embedded(pattern: &str) -> Option<Option<Derived>> {
    let i = DERIVED.binary_search_by(|(p, ..)| (*p).cmp(pattern)).ok()?;
    let (_, sets, best) = DERIVED[i];
    let sets: Requirement = sets
        .iter()
        .map(|set| set.iter().map(|l| l.to_vec()).collect())
        .collect();
    Some((!sets.is_empty()).then_some(Derived { sets, best }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use devassert_core::Catalog;

    /// The build script's table holds every regex the prefilter reads from
    /// the embedded catalog, each with the requirement and best set the
    /// run-time derivation gives.
    #[test]
    fn every_derived_requirement_is_the_run_times() {
        let c = Catalog::builtin();
        let all = c.cpu_patterns().iter().chain(c.log_patterns());
        for re in all {
            let p = re.as_str();
            let built = embedded(p).unwrap_or_else(|| panic!("the build script missed {p:?}"));
            assert_eq!(built, derive(p), "{p:?}");
        }
        assert_eq!(embedded("no catalog pattern (?:x)"), None);
        assert_eq!(requirement_of("a (?:literal)"), derive("a (?:literal)"));
        assert!(derive("a (?:literal)").is_some_and(|d| d.best == Some(0)));
    }
}
