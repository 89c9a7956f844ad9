//! The catalog regexes' literal requirements (`literals`), derived by the
//! build script from `catalog/*.toml` and embedded, keyed by pattern:
//! parsing each regex at every start was a fifth of explaining an empty
//! log. A pattern the table lacks (a catalog given at run time) is derived
//! here and now.

use crate::literals::{pattern_requirement, Requirement};

include!(concat!(env!("OUT_DIR"), "/derived_literals.rs"));

/// `pattern`'s requirement: the embedded one, else derived now.
pub fn requirement_of(pattern: &str) -> Option<Requirement> {
    match embedded(pattern) {
        Some(req) => req,
        None => pattern_requirement(pattern),
    }
}

/// The build script's requirement of `pattern` (its inner None: the
/// pattern has none), None when the table lacks the pattern.
fn embedded(pattern: &str) -> Option<Option<Requirement>> {
    let i = DERIVED.binary_search_by(|(p, _)| (*p).cmp(pattern)).ok()?;
    let sets = DERIVED[i].1;
    let req: Requirement = sets
        .iter()
        .map(|set| set.iter().map(|l| l.to_vec()).collect())
        .collect();
    Some((!req.is_empty()).then_some(req))
}

#[cfg(test)]
mod tests {
    use super::*;
    use devassert_core::Catalog;

    /// The build script's table holds every regex the prefilter reads from
    /// the embedded catalog, each with the requirement the run-time
    /// derivation gives.
    #[test]
    fn every_derived_requirement_is_the_run_times() {
        let c = Catalog::builtin();
        let all = c.cpu_patterns().iter().chain(c.log_patterns());
        for re in all {
            let p = re.as_str();
            let built = embedded(p).unwrap_or_else(|| panic!("the build script missed {p:?}"));
            assert_eq!(built, pattern_requirement(p), "{p:?}");
        }
        assert_eq!(embedded("no catalog pattern (?:x)"), None);
        assert_eq!(
            requirement_of("a (?:literal)"),
            pattern_requirement("a (?:literal)")
        );
    }
}
