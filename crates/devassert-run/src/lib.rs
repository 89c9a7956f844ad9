//! devassert-run: the supervisor of devassert run and the embedded Python guard.
