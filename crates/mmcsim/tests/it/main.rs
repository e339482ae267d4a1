//! The mmcsim library's integration tests, one binary with a module per
//! area: FTL properties, every scheduler's completeness, prepared devices
//! and the fuzz regressions.

mod ftl_props;
mod fuzz_regressions;
mod prepared_device;
mod schedulers_complete;
