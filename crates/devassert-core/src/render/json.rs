use crate::finding::Report;

pub(super) fn render(report: &Report) -> String {
    // Serialising plain data with string keys cannot fail.
    let mut s = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": {:?}}}", e.to_string()));
    s.push('\n');
    s
}
