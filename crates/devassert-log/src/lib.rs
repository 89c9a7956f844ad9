//! devassert-log: streaming reader of crash logs: assertion groups, tracebacks, fallout; and the diagnosis.
