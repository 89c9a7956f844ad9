//! devassert-scan: range checks over token and label data files.
