//! devassert-model: Hugging Face model directory checks.
