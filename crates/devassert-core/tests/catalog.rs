//! The embedded catalog is valid and complete: it loads, every rule has
//! its doc page, fixes and id constant, and unknown files fall back by their
//! origin. (That every reference assertion has exactly one rule is tested
//! on normalised printed lines, in devassert-log's `tests/reference_table.rs`.)

use devassert_core::catalog::fallback;
use devassert_core::facts::Kind;
use devassert_core::{Catalog, DeviceAssert, OpFamily, CAUSE_IDS};

const INTERNAL: &str = "DA901";

#[test]
fn builtin_catalog_loads_with_its_fallbacks() {
    let c = Catalog::builtin();
    assert!(c.rules().len() >= 30, "only {} rules", c.rules().len());
    for id in [
        fallback::NO_KERNEL_LINE,
        fallback::UNRECOGNISED_ASSERT,
        fallback::INDUCTOR_ASSERT,
        fallback::CUSTOM_KERNEL,
        INTERNAL,
    ] {
        assert!(c.get(id).is_some(), "fallback rule {id} missing");
    }
    for r in c.rules() {
        assert!(
            !r.doc.what.trim().is_empty() && !r.doc.fix.trim().is_empty(),
            "{} has an empty doc page",
            r.id
        );
        assert!(
            !r.fixes.is_empty() || r.causes.iter().any(|c| !c.fixes.is_empty()),
            "{} offers no fix",
            r.id
        );
        for cause in &r.causes {
            assert!(CAUSE_IDS.contains(&cause.id.as_str()));
        }
    }
    assert_eq!(
        c.rules().iter().filter(|r| r.internal).count(),
        1,
        "exactly one internal-invariant rule"
    );
}

#[test]
fn unknown_files_fall_back_by_origin() {
    let c = Catalog::builtin();
    let custom = DeviceAssert {
        file: "/home/me/ext/my_op_kernel.cu",
        kernel: Some("my_kernel"),
        assertion: "idx < n",
    };
    assert_eq!(c.match_assert(&custom).id, fallback::CUSTOM_KERNEL);
    let new_aten = DeviceAssert {
        file: "aten/src/ATen/native/cuda/Brand_New.cu",
        kernel: Some("brand_new_kernel"),
        assertion: "x < y",
    };
    assert_eq!(c.match_assert(&new_aten).id, fallback::UNRECOGNISED_ASSERT);
}

#[test]
fn every_rule_has_a_generated_id_constant_and_no_other_id_parses() {
    use devassert_core::{ids, RuleId};
    let c = Catalog::builtin();
    let generated: Vec<&str> = ids::ALL.iter().map(|r| r.as_str()).collect();
    let catalog: Vec<&str> = c.rules().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(generated, catalog);
    assert_eq!(ids::EMBEDDING_INDEX_OUT_OF_RANGE.as_str(), "DA101");
    for r in c.rules() {
        let id = RuleId::parse(&r.id).expect("a catalog id parses");
        assert_eq!(Catalog::builtin_finding(id).name, r.name);
    }
    let err = RuleId::parse("DA999").expect_err("no rule DA999");
    assert!(err.to_string().contains("DA999"));
}

#[test]
fn each_rule_says_what_its_bad_values_are() {
    let catalog = Catalog::builtin();
    let kind = |family, rule| catalog.values_of(family, rule);
    for (family, rule) in [
        (OpFamily::Index, "DA111"),
        (OpFamily::Index, "DA115"),
        (OpFamily::GatherScatter, "DA121"),
        // embedding_bag's offsets are positions into its input, not ids.
        (OpFamily::EmbeddingBag, "DA103"),
        (OpFamily::Inductor, "DA401"),
        (OpFamily::Unknown, "DA503"),
        (OpFamily::Unknown, "DA508"),
    ] {
        assert_eq!(kind(family, rule), Some(Kind::Index), "{rule}");
    }
    assert_eq!(kind(OpFamily::EmbeddingBag, "DA102"), Some(Kind::Ids));
    assert_eq!(kind(OpFamily::OneHot, "DA122"), Some(Kind::Labels));
    // multi_margin_loss's targets are class labels.
    assert_eq!(kind(OpFamily::Unknown, "DA206"), Some(Kind::Labels));
    // Inductor's other assert states no index; a probability is none.
    assert_eq!(kind(OpFamily::Inductor, "DA402"), None);
    assert_eq!(kind(OpFamily::Multinomial, "DA301"), None);
    // A rule that names no op takes its guessed family's first rule's;
    // with no guess, it says nothing (DA206 shares the `unknown` family).
    assert_eq!(kind(OpFamily::IndexSelect, "DA001"), Some(Kind::Ids));
    assert_eq!(kind(OpFamily::EmbeddingBag, "DA001"), Some(Kind::Ids));
    assert_eq!(kind(OpFamily::NllLoss2d, "DA001"), Some(Kind::Labels));
    assert_eq!(kind(OpFamily::GatherScatter, "DA004"), Some(Kind::Index));
    assert_eq!(kind(OpFamily::Unknown, "DA001"), None);
}
