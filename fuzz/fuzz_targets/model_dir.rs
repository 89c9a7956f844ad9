//! Arbitrary contents for one file of a model directory (the first byte picks
//! which) next to a valid config, through reading and checking.
#![no_main]
use devassert_model::{check, ModelDir, MODEL_FILES as FILES};
use libfuzzer_sys::fuzz_target;


fuzz_target!(|data: &[u8]| {
    let Some((&sel, body)) = data.split_first() else { return };
    let dir = std::env::temp_dir().join(format!("devassert-fuzz-model-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let config = br#"{"model_type": "bert", "vocab_size": 100, "max_position_embeddings": 64, "type_vocab_size": 2, "pad_token_id": 0}"#;
    let _ = std::fs::write(dir.join("config.json"), config);
    let _ = std::fs::write(dir.join(FILES[sel as usize % FILES.len()]), body);
    if let Ok(model) = ModelDir::read(&dir) {
        let _ = check(&model);
    }
});
